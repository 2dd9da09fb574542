/**
 * Key addresses of the wrong kind, through real Express apps on loopback servers: a JWKS given as issuerBaseURL,
 * discovery metadata given as key.jwksUri. Caught at createTokenAuth when the path says so; otherwise the refusal
 * carries a reason and a hint (for onError and NODE_DEBUG) that name the mix-up. Clients see the usual bodies.
 */
import { generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, shapeB, sign } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { optionErrorOf } from '../fixtures/option-error';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const JWKS = { keys: [{ ...ec.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' }] };
const opened: TokenAuth[] = [];
const servers: LoopbackServer[] = [];
afterEach(async () => {
  for (const auth of opened.splice(0)) auth.close();
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const make = (options: Record<string, unknown>) => () =>
  createTokenAuth({ audience: AUDIENCE, ...options } as unknown as TokenAuthOptions).close();

describe('a key address of the wrong kind, named at createTokenAuth', () => {
  it.each([
    [
      'a JWKS under /.well-known/ as issuerBaseURL',
      { issuerBaseURL: 'https://as.example/.well-known/jwks.json' },
      /"issuerBaseURL": issuerBaseURL points at a JWKS; use key: \{ jwksUri \}/,
    ],
    [
      'a metadata address as issuerBaseURL',
      { issuerBaseURL: 'https://as.example/realms/x/.well-known/openid-configuration' },
      /give the issuer itself \("https:\/\/as.example\/realms\/x"\)/,
    ],
    [
      'an RFC 8414 metadata address as issuerBaseURL',
      { issuerBaseURL: 'https://as.example/.well-known/oauth-authorization-server/t1' },
      /give the issuer itself \("https:\/\/as.example\/t1"\)/,
    ],
    [
      'a metadata address as key.jwksUri',
      { key: { jwksUri: 'https://as.example/realms/x/.well-known/openid-configuration' }, issuer: 'x' },
      /"key.jwksUri" is a discovery metadata address, not a JWKS: use issuerBaseURL: "https:\/\/as.example\/realms\/x"/,
    ],
  ])('throws a TypeError for %s', (_case, options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });

  it.each([
    [
      "Keycloak's UMA metadata",
      'https://as.example/realms/x/.well-known/uma2-configuration',
      /discovery metadata address \(a \/\.well-known\/uma2-configuration document, not the issuer\): give the issuer itself \("https:\/\/as\.example\/realms\/x"\)/,
    ],
    [
      'OpenID metadata with the issuer path after it',
      'https://as.example/.well-known/openid-configuration/t1',
      /discovery metadata address: give the issuer itself \("https:\/\/as\.example\/t1"\)/,
    ],
    [
      "a protected resource's metadata (RFC 9728)",
      'https://api.example/.well-known/oauth-protected-resource',
      /protected resource's metadata address \(RFC 9728\), not an issuer: give the authorization server its "authorization_servers" names/,
    ],
  ])('says what %s given as issuerBaseURL is, and the fix, never calling it a JWKS', (_case, address, message) => {
    const thrown = optionErrorOf(make({ issuerBaseURL: address }));
    expect(thrown.option).toBe('issuerBaseURL');
    expect(thrown.message).toMatch(message);
    expect(thrown.message).not.toMatch(/JWKS/);
  });

  it('accepts the usual JWKS addresses as key.jwksUri and issuers with a path as issuerBaseURL', () => {
    expect(make({ key: { jwksUri: 'https://as.example/.well-known/jwks.json' }, issuer: 'x' })).not.toThrow();
    expect(make({ issuerBaseURL: 'https://as.example/realms/x' })).not.toThrow();
  });
});

describe.each(EXPRESS_VERSIONS)('a key address of the wrong kind, at request time, through %s', (_name, express) => {
  /** An app on `options` whose onError keeps every failure; a token signed by the JWKS's key, with `iss`. */
  async function call(options: Partial<TokenAuthOptions>, iss: string) {
    const failures: TokenAuthError[] = [];
    const auth = createTokenAuth({
      audience: AUDIENCE,
      claims: 'jwt',
      onError: (err) => failures.push(err),
      ...options,
    } as TokenAuthOptions);
    opened.push(auth);
    const app = express();
    app.get('/me', auth.requireVerifiedUser(), (_req, res) => res.json({ ok: true }));
    const token = sign(shapeB(Math.floor(Date.now() / 1000), { iss }), ec.privateKey, 'ES256', { kid: 'k1' });
    const res = await request(app).get('/me').set('Authorization', `Bearer ${token}`);
    return { res, failure: failures[0] };
  }

  it('answers 503 with reason jwks-is-metadata, and a hint naming issuerBaseURL and the jwks_uri, when key.jwksUri serves metadata', async () => {
    const server = await startLoopbackServer((_req, res) =>
      json(res, 200, { issuer: server.origin, jwks_uri: `${server.origin}/keys` }),
    );
    servers.push(server);
    const { res, failure } = await call(
      { key: { jwksUri: `${server.origin}/config` }, issuer: server.origin },
      server.origin,
    );
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    expect(failure.reason).toBe('jwks-is-metadata');
    expect(failure.hint).toBe(
      `key.jwksUri points at discovery metadata, not a JWKS; use issuerBaseURL: "${server.origin}" or key: { jwksUri: "${server.origin}/keys" }`,
    );
  });

  it('answers 503 with reason discovery-is-jwks, and the hint "use key: { jwksUri }", when issuerBaseURL serves a JWKS', async () => {
    const server = await startLoopbackServer((_req, res) => json(res, 200, JWKS));
    servers.push(server);
    const { res, failure } = await call({ issuerBaseURL: `${server.origin}/keys` }, `${server.origin}/keys`);
    expect(res.status).toBe(503);
    expect(failure.reason).toBe('discovery-is-jwks');
    expect(failure.hint).toBe('issuerBaseURL points at a JWKS; use key: { jwksUri } (and issuer) instead');
  });

  it('refuses a token of another issuer with reason iss, and a hint naming the expected issuer and the JWKS mix-up', async () => {
    const server = await startLoopbackServer((_req, res) => json(res, 200, JWKS));
    servers.push(server);
    const { res, failure } = await call({ issuerBaseURL: `${server.origin}/jwks` }, server.origin);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
    expect(failure.reason).toBe('iss');
    expect(failure.hint).toBe(
      `expected iss "${server.origin}/jwks", from option "issuerBaseURL"; issuerBaseURL points at a JWKS; use key: { jwksUri } (and issuer) instead`,
    );
    expect(server.requests).toBe(0);
  });

  it('names the accepted issuers in the hint of an iss refusal with option issuer', async () => {
    const server = await startLoopbackServer((_req, res) => json(res, 200, JWKS));
    servers.push(server);
    const { res, failure } = await call(
      { key: { jwksUri: `${server.origin}/jwks` }, issuer: ['https://a.example', 'https://b.example'] },
      'https://c.example',
    );
    expect(res.status).toBe(401);
    expect(failure.reason).toBe('iss');
    expect(failure.hint).toBe('expected iss "https://a.example" or "https://b.example", from option "issuer"');
  });
});
