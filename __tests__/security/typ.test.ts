// RFC 8725 §3.11: a JWT of another kind (DPoP proof, logout token, security event, ID token) signed by a key this
// API trusts must not pass as an access token, whatever the claims mode.
import type { Express } from 'express';
import request from 'supertest';
import { createTokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';

const INVALID = { status: 'error', message: 'Invalid access token' };
const CHALLENGE_INVALID = 'Bearer realm="api", error="invalid_token", error_description="Invalid access token"';

/** Claims that every mode accepts: Shape B plus RFC 9068's sub and client_id. */
const everyModeClaims = () => shapeB(NOW, { sub: 'user-1', client_id: 'app-1' });

const MODES: Array<[string, Partial<TokenAuthOptions>, Record<string, unknown>]> = [
  ["'strict'", { claims: 'strict' }, { typ: 'JWT' }],
  ["'jwt'", { claims: 'jwt' }, { typ: 'JWT' }],
  ["'at+jwt'", { claims: 'at+jwt' }, { typ: 'at+jwt' }],
];

const OTHER_KINDS = [
  'dpop+jwt',
  'logout+jwt',
  'secevent+jwt',
  'id_token+jwt',
  'application/dpop+jwt',
  'DPoP+JWT',
  'Application/Logout+JWT',
  'token-introspection+jwt',
  'oauth-authz-req+jwt',
  'jwt+jwt',
];

describe.each(EXPRESS_VERSIONS)('typ attacks through %s', (_name, express) => {
  describe.each(MODES)('claims: %s', (_mode, options, goodHeader) => {
    const reasons: Array<string | undefined> = [];
    let app: Express;
    beforeAll(() => {
      const auth = createTokenAuth({
        key: { secret: SECRET },
        issuer: ISSUER,
        audience: AUDIENCE,
        clock: () => NOW,
        onError: (err: TokenAuthError) => reasons.push(err.reason),
        ...options,
      });
      app = appWith(express, auth, { answer: () => ({ ok: true }) });
    });

    it('accepts the access token itself (the control case)', async () => {
      await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${sign(everyModeClaims(), SECRET, 'HS256', goodHeader)}`)
        .expect(200);
    });

    it.each(OTHER_KINDS)('refuses a validly signed token of typ %s with 401 invalid_token', async (typ) => {
      const token = sign(everyModeClaims(), SECRET, 'HS256', { typ });
      for (let i = 0; i < 2; i++) {
        // Twice: the refusal is remembered, and a remembered refusal answers the same.
        const res = await request(app).get('/me').set('Authorization', `Bearer ${token}`).expect(401);
        expect(res.body).toEqual(INVALID);
        expect(res.headers['www-authenticate']).toBe(CHALLENGE_INVALID);
      }
      expect(reasons.at(-1)).toBe('typ');
    });

    it.each([
      ['a number', 1],
      ['an array', ['at+jwt']],
      ['an object', { typ: 'at+jwt' }],
      ['null', null],
      ['true', true],
    ])('refuses a typ that is %s', async (_case, typ) => {
      const res = await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${sign(everyModeClaims(), SECRET, 'HS256', { typ })}`)
        .expect(401);
      expect(res.body).toEqual(INVALID);
      expect(reasons.at(-1)).toBe('typ');
    });
  });

  it("refuses an OpenID Connect ID token under 'at+jwt', even when its aud is an accepted audience", async () => {
    const auth = createTokenAuth({
      key: { secret: SECRET },
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
      claims: 'at+jwt',
    });
    const app = appWith(express, auth, { answer: () => ({ ok: true }) });
    const idToken = {
      iss: ISSUER,
      aud: AUDIENCE,
      sub: 'user-1',
      iat: NOW,
      exp: NOW + 600,
      nonce: 'n',
      auth_time: NOW,
      azp: 'app-1',
    };
    await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(idToken)}`)
      .expect(401);
    await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(idToken, SECRET, 'HS256', { typ: undefined })}`)
      .expect(401);
  });

  it("refuses a DPoP proof replayed as an access token in 'jwt' mode, though its claims would pass", async () => {
    const auth = createTokenAuth({
      key: { secret: SECRET },
      issuer: false,
      audience: false,
      clock: () => NOW,
      claims: 'jwt',
    });
    const app = appWith(express, auth, { answer: () => ({ ok: true }) });
    const proof = { htm: 'GET', htu: 'https://api.example.com/me', iat: NOW, exp: NOW + 60, jti: 'p1' };
    await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(proof, SECRET, 'HS256', { typ: 'JWT' })}`)
      .expect(200);
    await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(proof, SECRET, 'HS256', { typ: 'dpop+jwt' })}`)
      .expect(401);
  });
});
