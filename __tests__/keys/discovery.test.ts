import type { ServerResponse } from 'node:http';
import request from 'supertest';
import { createTokenAuth, type TokenAuth } from '../../lib';
import { metadataUrls } from '../../lib/keys/discovery';
import { ecKeys, sign } from '../fixtures/issuer';
import { json, startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { rejection } from '../fixtures/rejection';

const AUDIENCE = 'https://api.example.test';

// Servers and TokenAuths a test started, stopped after it.
const servers: LoopbackServer[] = [];
const opened: TokenAuth[] = [];
afterEach(async () => {
  for (const auth of opened.splice(0)) auth.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

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

describe('one refresh path: one metadata fetch under way, one cooldown, whatever asks', () => {
  const key = ecKeys();
  let now = 1_800_000_000;
  const clock = () => now;
  const RESOURCE = 'http://127.0.0.1:1/api';
  const DOCUMENT = '/.well-known/oauth-protected-resource/api';
  const METADATA = '/.well-known/openid-configuration';

  /**
   * An authorization server whose metadata answers are held until the test lets them go, each with the status the
   * test sets; a key set with `k1`; an introspection endpoint that calls every token inactive.
   */
  async function authorizationServer() {
    const held: ServerResponse[] = [];
    const state = { status: 200, hold: true };
    const server: LoopbackServer = await startLoopbackServer((req, res) => {
      if (req.url === METADATA) {
        held.push(res);
        if (!state.hold) release();
      } else if (req.url === '/keys') {
        json(res, 200, { keys: [{ ...key.publicKey.export({ format: 'jwk' }), kid: 'k1' }] });
      } else if (req.url === '/introspect') {
        json(res, 200, { active: false });
      } else json(res, 404, {});
    });
    servers.push(server);
    const document = () => ({
      issuer: server.origin,
      jwks_uri: `${server.origin}/keys`,
      introspection_endpoint: `${server.origin}/introspect`,
    });
    function release(): void {
      for (const res of held.splice(0)) {
        if (state.status === 200) json(res, 200, document());
        else json(res, state.status, {});
      }
    }
    const metadataFetches = () => server.seen.filter((seen) => seen.url === METADATA).length;
    return { server, state, release, metadataFetches };
  }

  const tokenOf = (iss: string, kid: string) =>
    sign({ iss, aud: AUDIENCE, sub: 'client', iat: now, exp: now + 300 }, key.privateKey, 'ES256', { kid });

  /** A TokenAuth with every entry point to discovery: keys, introspection, and the resource's metadata document. */
  function setUp(origin: string) {
    const auth = createTokenAuth({
      issuerBaseURL: origin,
      audience: AUDIENCE,
      claims: 'jwt',
      clock,
      introspection: { clientId: 'api', clientSecret: 'introspection-secret' },
      resource: RESOURCE,
    });
    opened.push(auth);
    const app = EXPRESS_VERSIONS[0][1]();
    let entered = 0;
    // Counts requests that reached the document's handler, which asks discovery before it returns.
    app.use((_req, _res, next) => {
      next();
      entered++;
    });
    app.use(auth.protectedResourceMetadata());
    return { auth, app, entered: () => entered };
  }

  /** Every entry point at once: first use, an unknown kid, introspection's metadata, the authorization_servers. */
  function everyEntryPoint(origin: string, made: ReturnType<typeof setUp>) {
    return [
      made.auth.verify(tokenOf(origin, 'k1')).then(
        (claims) => ({ kind: 'jwt', claims }),
        (err: unknown) => ({ kind: 'jwt', err }),
      ),
      made.auth.verify(tokenOf(origin, 'k-unknown')).then(
        (claims) => ({ kind: 'unknown kid', claims }),
        (err: unknown) => ({ kind: 'unknown kid', err }),
      ),
      made.auth.verify('an-opaque-token').then(
        (claims) => ({ kind: 'introspection', claims }),
        (err: unknown) => ({ kind: 'introspection', err }),
      ),
      request(made.app)
        .get(DOCUMENT)
        .then((res) => ({ kind: 'document', body: res.body as { authorization_servers: string[] } })),
    ];
  }

  it('makes one metadata request for concurrent callers through every entry point', async () => {
    const as = await authorizationServer();
    const made = setUp(as.server.origin);
    const settled = Promise.all(everyEntryPoint(as.server.origin, made));
    // Hold the first answer until every caller has asked: the document's handler asks before it returns.
    await until(() => made.entered() === 1 && as.metadataFetches() >= 1, 'every caller to ask discovery');
    as.state.hold = false;
    as.release();
    const results = await settled;
    expect(as.metadataFetches()).toBe(1);
    expect(results[0]).toMatchObject({ kind: 'jwt', claims: { iss: as.server.origin } });
    expect(results[1]).toMatchObject({ kind: 'unknown kid', err: { code: 'invalid_token', reason: 'kid-unknown' } });
    expect(results[2]).toMatchObject({ kind: 'introspection', err: { code: 'invalid_token' } });
    expect(results[3]).toEqual({
      kind: 'document',
      body: expect.objectContaining({ authorization_servers: [as.server.origin] }),
    });
  });

  it('makes no metadata request within the cooldown after an outage, through any entry point; one after it', async () => {
    const as = await authorizationServer();
    as.state.status = 503;
    as.state.hold = false;
    const made = setUp(as.server.origin);
    const first = await Promise.all(everyEntryPoint(as.server.origin, made));
    expect(as.metadataFetches()).toBe(1);
    // An outage with no metadata held: 503 with Retry-After for a token, never a cached 401; the document stands in.
    for (const result of first.slice(0, 3)) {
      expect(result).toMatchObject({ err: { code: 'verification_unavailable', status: 503 } });
      const retryAfter = Number((result as { err: { headers: Record<string, string> } }).err.headers['Retry-After']);
      expect(retryAfter).toBeGreaterThan(0);
    }
    expect(first[3]).toMatchObject({ body: { authorization_servers: [as.server.origin] } });

    as.state.status = 200;
    now += 10; // within the 30 s cooldown
    const again = await Promise.all(everyEntryPoint(as.server.origin, made));
    expect(as.metadataFetches()).toBe(1);
    for (const result of again.slice(0, 3))
      expect(result).toMatchObject({ err: { code: 'verification_unavailable', status: 503 } });

    now += 21; // past it: one refresh, and discovery answers
    const after = await Promise.all(everyEntryPoint(as.server.origin, made));
    expect(as.metadataFetches()).toBe(1 + 1);
    expect(after[0]).toMatchObject({ kind: 'jwt', claims: { iss: as.server.origin } });
    expect(after[2]).toMatchObject({ kind: 'introspection', err: { code: 'invalid_token' } });
  });

  it('keeps the metadata it holds when a refresh fails, and still refreshes the key set', async () => {
    const as = await authorizationServer();
    as.state.hold = false;
    const made = setUp(as.server.origin);
    await expect(made.auth.verify(tokenOf(as.server.origin, 'k1'))).resolves.toMatchObject({ iss: as.server.origin });
    as.state.status = 503;
    now += 31;
    const keyFetches = () => as.server.seen.filter((seen) => seen.url === '/keys').length;
    const before = keyFetches();
    // An unknown kid past the cooldown: metadata refresh fails (held metadata kept), the key set is fetched again.
    const err = await rejection(made.auth.verify(tokenOf(as.server.origin, 'k-new')));
    expect([err.code, err.reason]).toEqual(['invalid_token', 'kid-unknown']);
    expect(as.metadataFetches()).toBe(2);
    expect(keyFetches()).toBe(before + 1);
    await expect(made.auth.verify('another-opaque-token')).rejects.toMatchObject({ code: 'invalid_token' });
  });
});
