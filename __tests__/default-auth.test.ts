// The instance the top-level requireVerifiedUser and verifyRouter build from TOKEN_* variables, on first use (at app
// set-up).
import express from 'express';
import request from 'supertest';
import { requireVerifiedUser } from '../lib';
import { resetDefaultTokenAuth } from '../lib/token-auth';
import { clearVariables } from './fixtures/environment';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from './fixtures/issuer';

let restore: () => void;
beforeEach(() => {
  restore = clearVariables();
  resetDefaultTokenAuth();
});
afterEach(() => {
  restore();
  resetDefaultTokenAuth();
});

describe('top-level requireVerifiedUser (environment-configured)', () => {
  it('throws a TypeError naming the variables at set-up when no key variable is set', () => {
    expect(() => requireVerifiedUser()).toThrow(TypeError);
    expect(() => requireVerifiedUser()).toThrow(/TOKEN_SECRET, TOKEN_PUBLIC_KEY, TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL/);
  });

  it('requires TOKEN_ISSUER and TOKEN_AUDIENCE', () => {
    process.env.TOKEN_SECRET = SECRET;
    expect(() => requireVerifiedUser()).toThrow(/TOKEN_ISSUER/);
    process.env.TOKEN_ISSUER = ISSUER;
    expect(() => requireVerifiedUser()).toThrow(/TOKEN_AUDIENCE/);
  });

  it('verifies with TOKEN_SECRET, TOKEN_ISSUER and TOKEN_AUDIENCE', async () => {
    Object.assign(process.env, { TOKEN_SECRET: SECRET, TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE });
    const app = express();
    app.get('/me', requireVerifiedUser(['email']), (req, res) => {
      res.json(req.auth);
    });
    const claims = shapeB();
    const res = await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(claims)}`)
      .expect(200);
    expect(res.body).toEqual(claims);
    await request(app).get('/me').expect(401);
  });

  it('names the variable a refused option came from (a short TOKEN_SECRET, a bad TOKEN_JWKS_URI), never its value', () => {
    Object.assign(process.env, { TOKEN_SECRET: 'short-secret-value', TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE });
    expect(() => requireVerifiedUser()).toThrow(
      'express-verified-user: key.secret must be at least 32 bytes (got 18) [from TOKEN_SECRET]',
    );
    expect(() => requireVerifiedUser()).not.toThrow(/short-secret-value/);
    delete process.env.TOKEN_SECRET;
    process.env.TOKEN_JWKS_URI = 'http://issuer.example/jwks';
    expect(() => requireVerifiedUser()).toThrow(
      /option "key.jwksUri" must be an https: URL .* \[from TOKEN_JWKS_URI\]$/,
    );
  });

  it('refuses two key variables at once', () => {
    Object.assign(process.env, {
      TOKEN_SECRET: SECRET,
      TOKEN_JWKS_URI: 'https://issuer.example/jwks',
      TOKEN_ISSUER: ISSUER,
      TOKEN_AUDIENCE: AUDIENCE,
    });
    expect(() => requireVerifiedUser()).toThrow(/only one of/);
  });
});

describe('TOKEN_CLAIMS and TOKEN_SCOPE_CLAIM', () => {
  const registered = (overrides: Record<string, unknown> = {}) => ({
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'u1',
    iat: Math.floor(Date.now() / 1000),
    exp: Math.floor(Date.now() / 1000) + 600,
    ...overrides,
  });

  it("lets the environment-configured instance accept other servers' tokens, reading the named scope claim", async () => {
    Object.assign(process.env, {
      TOKEN_SECRET: SECRET,
      TOKEN_ISSUER: ISSUER,
      TOKEN_AUDIENCE: AUDIENCE,
      TOKEN_CLAIMS: 'jwt',
      TOKEN_SCOPE_CLAIM: 'permissions',
    });
    const app = express();
    app.get('/me', requireVerifiedUser(['read:users']), (req, res) => {
      res.json(req.auth);
    });
    await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(registered({ permissions: ['read:users'] }))}`)
      .expect(200);
    const res = await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(registered({ scope: 'read:users' }))}`)
      .expect(403);
    expect(res.body).toEqual({ status: 'error', message: 'Insufficient scope' });
  });

  it('throws a TypeError naming the variable at set-up for a wrong value', () => {
    Object.assign(process.env, {
      TOKEN_SECRET: SECRET,
      TOKEN_ISSUER: ISSUER,
      TOKEN_AUDIENCE: AUDIENCE,
      TOKEN_CLAIMS: 'oidc',
    });
    expect(() => requireVerifiedUser()).toThrow(TypeError);
    expect(() => requireVerifiedUser()).toThrow(/TOKEN_CLAIMS/);
    process.env.TOKEN_CLAIMS = 'jwt';
    process.env.TOKEN_SCOPE_CLAIM = 'scope,,scp';
    expect(() => requireVerifiedUser()).toThrow(/TOKEN_SCOPE_CLAIM/);
  });
});
