/**
 * The refusals a newcomer meets first, through real Express apps and a real oidc-provider on loopback: each gives
 * `onError` an `err.hint` naming what was expected and from which option, while the client sees the usual body.
 * No hint holds the token, its payload or its signature.
 */
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../fixtures/express';
import { ecKeys, SECRET, shapeB, sign } from '../fixtures/issuer';

const INVALID = { status: 'error', message: 'Invalid access token' };
const UNAVAILABLE = { status: 'error', message: 'Token verification unavailable' };
const ec = ecKeys();

let as: AuthorizationServer;
const opened: TokenAuth[] = [];
beforeAll(async () => {
  as = await startAuthorizationServer({ resource: 'https://api.example.test', scopes: ['read'] });
}, 30_000);
afterAll(async () => {
  await as.close();
});
afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

/** One request with `token` to an app on `options`; the failure onError saw, and the answer. */
async function refused(express: ExpressFactory, options: TokenAuthOptions, token: string) {
  const failures: TokenAuthError[] = [];
  const auth = createTokenAuth({ ...options, onError: (err) => failures.push(err) });
  opened.push(auth);
  const app = express();
  app.get('/me', auth.requireVerifiedUser(), (_req, res) => res.json({ ok: true }));
  const res = await request(app).get('/me').set('Authorization', `Bearer ${token}`);
  expect(failures).toHaveLength(1);
  const [failure] = failures;
  // Never the token, nor any stretch of its payload or signature; and never sent to the client.
  const [, payload, signature] = token.split('.');
  for (const part of [payload, signature])
    for (let at = 0; at + 12 <= part.length; at += 6) expect(failure.hint).not.toContain(part.slice(at, at + 12));
  expect(JSON.stringify(res.body)).not.toContain(failure.hint);
  expect(JSON.stringify(res.headers)).not.toContain(failure.hint);
  return { res, failure };
}

describe.each(EXPRESS_VERSIONS)('refusal hints, through %s', (_name, express) => {
  it("an oidc-provider access token under key's default claims: 'strict' names claims: 'jwt' or 'at+jwt'", async () => {
    const { res, failure } = await refused(
      express,
      { key: { jwksUri: as.jwksUri }, issuer: as.issuer, audience: as.resource },
      await as.token({ scope: 'read' }),
    );
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    expect(failure.reason).toMatch(/^shape:/);
    expect(failure.hint).toMatch(
      /^Shape B's \S+ is missing or malformed; claims: 'strict' \(the default with option "key"\) accepts only the identity service's Shape B; tokens of other authorization servers \(OpenID Connect, RFC 9068\) need claims: 'jwt' or 'at\+jwt'$/,
    );
  });

  it('a token for another audience names the audiences of option "audience"', async () => {
    const { res, failure } = await refused(
      express,
      { issuerBaseURL: as.issuer, audience: ['https://other.example', 'https://third.example'] },
      await as.token({ scope: 'read' }),
    );
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    expect(failure.reason).toBe('aud');
    expect(failure.hint).toMatch(
      /^expected aud "https:\/\/other.example" or "https:\/\/third.example", from option "audience"; /,
    );
  });

  it('a token for another resource names option "resource"', async () => {
    const { failure } = await refused(
      express,
      { issuerBaseURL: as.issuer, resource: 'https://mcp.example/mcp' },
      await as.token({ scope: 'read' }),
    );
    expect(failure.reason).toBe('aud');
    expect(failure.hint).toMatch(/^expected aud "https:\/\/mcp.example\/mcp", from option "resource"/);
  });

  it('an ES256 token given to an HMAC secret names HS256, ES256, and the key an ES256 token needs', async () => {
    const token = sign(shapeB(), ec.privateKey, 'ES256', { kid: 'k1' });
    const { res, failure } = await refused(express, { key: { secret: SECRET }, issuer: false, audience: false }, token);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    expect(failure.reason).toBe('alg');
    expect(failure.hint).toBe(
      'expected alg "HS256": what option "key.secret" allows (option "algorithms" narrows it, within what the key fits); ' +
        'the token used "ES256": a ES256 token needs an EC key of its curve: option "key.publicKey", "key.jwksUri" or "issuerBaseURL", not option "key.secret"',
    );
  });

  it("a token typed JWT under claims: 'at+jwt' names the typ accepted and where from", async () => {
    const token = sign(shapeB(), SECRET, 'HS256', { typ: 'JWT' });
    const { failure } = await refused(
      express,
      { key: { secret: SECRET }, issuer: false, audience: false, claims: 'at+jwt' },
      token,
    );
    expect(failure.reason).toBe('typ');
    expect(failure.hint).toBe(
      'expected typ "at+jwt" (with or without "application/", any case), from claims: \'at+jwt\' (RFC 9068 §2.1); the token\'s typ is "JWT"',
    );
  });

  it("a Shape B token without scopes names Shape B's scopes (the hint NODE_DEBUG printed alone before)", async () => {
    const token = sign(shapeB(Math.floor(Date.now() / 1000), { scopes: undefined, scope: 'read' }));
    const { failure } = await refused(express, { key: { secret: SECRET }, issuer: false, audience: false }, token);
    expect(failure.reason).toBe('shape:scopes');
    expect(failure.hint).toMatch(/^Shape B's scopes is missing or malformed; claims: 'strict'/);
  });

  it('a token in the query string (access_token=…): 401 missing_token, never read, the hint says one was seen there and never echoes it', async () => {
    const failures: TokenAuthError[] = [];
    const auth = createTokenAuth({
      key: { secret: SECRET },
      issuer: false,
      audience: false,
      onError: (e) => failures.push(e),
    });
    opened.push(auth);
    const app = express();
    app.get('/me', auth.requireVerifiedUser(), (_req, res) => res.json({ ok: true }));
    const token = sign(shapeB());
    const res = await request(app).get(`/me?page=2&access_token=${token}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ status: 'error', message: 'Missing access token' });
    // Without the parameter: the usual missing-token refusal, no reason.
    await request(app).get('/me?page=2&token=x').expect(401);
    expect(failures.map((err) => [err.code, err.reason])).toEqual([
      ['missing_token', 'token-in-query'],
      ['missing_token', undefined],
    ]);
    expect(failures[0].hint).toBe(
      'a token was seen in the query string (access_token=…), where it is never read: URLs end up in logs, browser history and Referer headers (RFC 6750 §2.3, §5.3); send it in the Authorization header, "Bearer <token>"',
    );
    for (const part of token.split('.'))
      for (let at = 0; at + 12 <= part.length; at += 6) expect(failures[0].hint).not.toContain(part.slice(at, at + 12));
  });

  it("key.jwksUri set to the issuer's base URL: 503 jwks-fetch, and a hint saying what it answered and to use issuerBaseURL", async () => {
    const { res, failure } = await refused(
      express,
      { key: { jwksUri: `${as.origin}/` }, issuer: as.issuer, audience: as.resource, claims: 'jwt' },
      await as.token({ scope: 'read' }),
    );
    expect(res.status).toBe(503);
    expect(res.body).toEqual(UNAVAILABLE);
    expect(failure.reason).toBe('jwks-fetch');
    expect(failure.hint).toMatch(
      new RegExp(
        `^key\\.jwksUri \\(${as.origin}/\\) answered HTTP 404 \\(content-type "text/plain; charset=utf-8"\\), not a JWKS: ` +
          `expected JSON \\{ "keys": \\[\\.\\.\\.\\] \\} with a signing key; "${as.origin}/" reads as an issuer's base URL: give it as issuerBaseURL`,
      ),
    );
  });
});
