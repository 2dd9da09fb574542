import type { ServerResponse } from 'node:http';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { optionsFromEnv } from '../../lib/default-auth';
import { metadataUrls } from '../../lib/keys/discovery';
import { ecKeys, sign } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';

const AUDIENCE = 'https://api.example.test';
const make = (options: Record<string, unknown>) => () =>
  createTokenAuth({ audience: AUDIENCE, claims: 'jwt', ...options } as unknown as TokenAuthOptions).close();

describe('issuerBaseURL validation (at createTokenAuth, never at request time)', () => {
  it.each([
    [
      'together with key',
      { issuerBaseURL: 'https://as.example', key: { jwksUri: 'https://as.example/jwks' } },
      /"issuerBaseURL" replaces "key"/,
    ],
    [
      'together with issuer',
      { issuerBaseURL: 'https://as.example', issuer: 'https://as.example' },
      /"issuerBaseURL" replaces "issuer"/,
    ],
    [
      'together with issuer: false',
      { issuerBaseURL: 'https://as.example', issuer: false },
      /"issuerBaseURL" replaces "issuer"/,
    ],
    ['an empty array', { issuerBaseURL: [] }, /"issuerBaseURL" must be a URL string or a non-empty array/],
    ['not a string', { issuerBaseURL: 42 }, /"issuerBaseURL" must be a URL string/],
    [
      'an array holding a non-string',
      { issuerBaseURL: ['https://a.example', 7] },
      /"issuerBaseURL\[1\]" must be a URL string/,
    ],
    ['not a URL', { issuerBaseURL: 'as.example' }, /"issuerBaseURL" is not a valid absolute URL/],
    ['plain http on a public host', { issuerBaseURL: 'http://as.example' }, /"issuerBaseURL" must be an https: URL/],
    ['another scheme', { issuerBaseURL: 'ftp://as.example' }, /"issuerBaseURL" must be an https: URL/],
    ['credentials', { issuerBaseURL: 'https://user:pw@as.example' }, /must not contain credentials/],
    ['a query string', { issuerBaseURL: 'https://as.example/?tenant=1' }, /must not contain a query string/],
    ['a fragment', { issuerBaseURL: 'https://as.example/#x' }, /must not contain a fragment/],
    [
      'the same issuer twice',
      { issuerBaseURL: ['https://as.example/t', 'https://as.example/t'] },
      /names "https:\/\/as.example\/t" twice/,
    ],
    [
      'the same issuer twice, once with a trailing slash',
      { issuerBaseURL: ['https://as.example/t', 'https://as.example/t/'] },
      /twice/,
    ],
    [
      'an HMAC algorithm',
      { issuerBaseURL: 'https://as.example', algorithms: ['HS256'] },
      /HS\* algorithm with issuerBaseURL/,
    ],
  ])('throws a TypeError for %s', (_case, options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });

  it('still requires audience', () => {
    expect(() =>
      createTokenAuth({ issuerBaseURL: 'https://as.example', claims: 'jwt' } as unknown as TokenAuthOptions),
    ).toThrow(/option "audience" is required/);
  });

  it('requires key when issuerBaseURL is absent', () => {
    expect(make({ issuer: 'x' })).toThrow(/option "key" is required/);
  });

  it.each([
    ['one https base URL', 'https://as.example/'],
    ['several', ['https://a.example', 'https://b.example/tenant']],
    ['loopback http', 'http://127.0.0.1:8080/realms/x'],
  ])('accepts %s without fetching anything', (_case, issuerBaseURL) => {
    expect(make({ issuerBaseURL })).not.toThrow();
  });

  it('accepts plain http on a public host with allowInsecureHttp', () => {
    expect(make({ issuerBaseURL: 'http://as.example', allowInsecureHttp: true })).not.toThrow();
  });
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

describe('TOKEN_ISSUER_BASE_URL', () => {
  it('reads one base URL, or a comma list for several issuers', () => {
    expect(optionsFromEnv({ TOKEN_ISSUER_BASE_URL: 'https://a.example/', TOKEN_AUDIENCE: AUDIENCE })).toEqual({
      issuerBaseURL: 'https://a.example/',
      audience: AUDIENCE,
    });
    expect(
      optionsFromEnv({
        TOKEN_ISSUER_BASE_URL: 'https://a.example, https://b.example',
        TOKEN_AUDIENCE: AUDIENCE,
        TOKEN_ALGORITHMS: 'EdDSA',
      }),
    ).toEqual({ issuerBaseURL: ['https://a.example', 'https://b.example'], audience: AUDIENCE, algorithms: ['EdDSA'] });
  });

  it('takes TOKEN_CLAIMS and TOKEN_SCOPE_CLAIM with it, as every key variable does', () => {
    expect(
      optionsFromEnv({
        TOKEN_ISSUER_BASE_URL: 'https://a.example',
        TOKEN_AUDIENCE: AUDIENCE,
        TOKEN_CLAIMS: 'at+jwt',
        TOKEN_SCOPE_CLAIM: 'scp',
      }),
    ).toEqual({ issuerBaseURL: 'https://a.example', audience: AUDIENCE, claims: 'at+jwt', scopeClaim: ['scp'] });
  });

  it('is a key variable: refused together with another one', () => {
    expect(() =>
      optionsFromEnv({
        TOKEN_ISSUER_BASE_URL: 'https://a.example',
        TOKEN_JWKS_URI: 'https://a.example/jwks',
        TOKEN_AUDIENCE: AUDIENCE,
      }),
    ).toThrow(/set only one of/);
  });

  it('passes TOKEN_ISSUER on, for createTokenAuth to refuse', () => {
    const options = optionsFromEnv({
      TOKEN_ISSUER_BASE_URL: 'https://a.example',
      TOKEN_ISSUER: 'https://a.example',
      TOKEN_AUDIENCE: AUDIENCE,
    });
    expect(() => createTokenAuth(options)).toThrow(/"issuerBaseURL" replaces "issuer"/);
  });
});

describe('discovery.timeout: one refresh of metadata and key set together', () => {
  it.each([
    [
      'without issuerBaseURL',
      { key: { secret: 'x'.repeat(32) }, issuer: 'i', discovery: { timeout: 1 } },
      /"discovery" applies only with issuerBaseURL/,
    ],
    ['not an object', { issuerBaseURL: 'https://as.example', discovery: '1s' }, /"discovery" must be an object/],
    [
      'zero',
      { issuerBaseURL: 'https://as.example', discovery: { timeout: 0 } },
      /"discovery.timeout" must be more than zero/,
    ],
    ['not a duration', { issuerBaseURL: 'https://as.example', discovery: { timeout: 'soon' } }, /discovery\.timeout/],
    [
      'an unknown field',
      { issuerBaseURL: 'https://as.example', discovery: { cooldown: 1 } },
      /unknown option "discovery.cooldown"/,
    ],
  ])('throws a TypeError at createTokenAuth for a discovery option %s', (_case, options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });

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
