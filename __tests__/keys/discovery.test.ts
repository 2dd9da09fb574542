import type { ServerResponse } from 'node:http';
import { createTokenAuth, type TokenAuth } from '../../lib';
import { metadataUrls } from '../../lib/keys/discovery';
import { ecKeys, sign } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';

const AUDIENCE = 'https://api.example.test';

describe('metadataUrls', () => {
  it.each([
    [
      'https://as.example',
      'https://as.example/.well-known/openid-configuration',
      'https://as.example/.well-known/oauth-authorization-server',
    ],
    [
      'https://as.example/',
      'https://as.example/.well-known/openid-configuration',
      'https://as.example/.well-known/oauth-authorization-server',
    ],
    [
      'https://as.example/tenant/1',
      'https://as.example/tenant/1/.well-known/openid-configuration',
      'https://as.example/.well-known/oauth-authorization-server/tenant/1',
    ],
    [
      'https://as.example:8443/t/',
      'https://as.example:8443/t/.well-known/openid-configuration',
      'https://as.example:8443/.well-known/oauth-authorization-server/t',
    ],
  ])('for %s: OIDC appends, RFC 8414 §3.1 inserts between host and path', (base, openid, oauth) => {
    expect(metadataUrls(new URL(base))).toEqual({ openid, oauth });
  });
});

describe('discovery.timeout: one refresh of metadata and key set together', () => {
  const servers: LoopbackServer[] = [];
  const opened: TokenAuth[] = [];
  afterEach(async () => {
    for (const auth of opened.splice(0)) auth.close();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  const key = ecKeys();
  let skew = 0;
  const clock = () => Date.now() / 1000 + skew;
  const tokenOf = (iss: string, kid = 'k1') => {
    const now = Math.floor(clock());
    return sign({ iss, aud: AUDIENCE, sub: 'client', iat: now, exp: now + 300 }, key.privateKey, 'ES256', { kid });
  };

  /** An authorization server whose metadata and key set each answer as the test says. */
  async function authorizationServer(behaviour: {
    metadata: (res: ServerResponse) => void;
    keys: (res: ServerResponse) => void;
  }) {
    const server: LoopbackServer = await startLoopbackServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration') behaviour.metadata(res);
      else if (req.url === '/keys') behaviour.keys(res);
      else json(res, 404, {});
    });
    servers.push(server);
    return server;
  }
  const metadataOf = (server: LoopbackServer) => (res: ServerResponse) =>
    json(res, 200, { issuer: server.origin, jwks_uri: `${server.origin}/keys` });
  const keySet = (kids: string[]) => (res: ServerResponse) =>
    json(res, 200, { keys: kids.map((kid) => ({ ...key.publicKey.export({ format: 'jwk' }), kid })) });

  function auth(issuerBaseURL: string, timeout: string): TokenAuth {
    const made = createTokenAuth({ issuerBaseURL, audience: AUDIENCE, claims: 'jwt', clock, discovery: { timeout } });
    opened.push(made);
    return made;
  }

  it('ends a metadata fetch that hangs at discovery.timeout', async () => {
    const server = await authorizationServer({ metadata: () => undefined, keys: keySet(['k1']) });
    const err = await rejection(auth(server.origin, '300ms').verify(tokenOf(server.origin)));
    expect([err.code, err.reason]).toEqual(['verification_unavailable', 'discovery-timeout']);
  });

  it('holds one request no longer than the timeout for slow metadata and a hanging key set together', async () => {
    const server: LoopbackServer = await authorizationServer({
      metadata: (res) => setTimeout(() => metadataOf(server)(res), 1500),
      keys: () => undefined,
    });
    const started = Date.now();
    const err = await rejection(auth(server.origin, '3s').verify(tokenOf(server.origin)));
    const waited = Date.now() - started;
    expect([err.code, err.reason]).toEqual(['verification_unavailable', 'jwks-timeout']);
    // Each fetch with a timeout of its own held it 1.5 s + 3 s; one deadline for both ends it at 3 s.
    expect(waited).toBeLessThan(4500);
  });

  it('still refreshes the key set when the metadata it holds can no longer be refreshed (the metadata gets half)', async () => {
    const behaviour = { metadata: (res: ServerResponse) => metadataOf(server)(res), keys: keySet(['k1']) };
    const server: LoopbackServer = await authorizationServer(behaviour);
    const verifier = auth(server.origin, '1s');
    await expect(verifier.verify(tokenOf(server.origin))).resolves.toMatchObject({ iss: server.origin });
    behaviour.metadata = () => undefined; // the metadata endpoint now hangs
    behaviour.keys = keySet(['k1', 'k2']);
    skew += 31; // past the cooldown: a new kid refetches
    await expect(verifier.verify(tokenOf(server.origin, 'k2'))).resolves.toMatchObject({ iss: server.origin });
  });
});
