import express from 'express';
import request from 'supertest';
import { requireVerifiedUser } from '../lib';
import { optionsFromEnv, resetDefaultTokenAuth } from '../lib/default-auth';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from './fixtures/issuer';

const VARIABLES = ['TOKEN_SECRET', 'TOKEN_PUBLIC_KEY', 'TOKEN_JWKS_URI', 'TOKEN_UPSTREAM_URL', 'TOKEN_ISSUER', 'TOKEN_AUDIENCE', 'TOKEN_ALGORITHMS'];
const saved: Record<string, string | undefined> = {};

beforeEach(() => {
  for (const name of VARIABLES) {
    saved[name] = process.env[name];
    delete process.env[name];
  }
  resetDefaultTokenAuth();
});
afterEach(() => {
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
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
    app.get('/me', requireVerifiedUser(['email']), (req, res) => { res.json(req.auth); });
    const claims = shapeB();
    const res = await request(app).get('/me').set('Authorization', `Bearer ${sign(claims)}`).expect(200);
    expect(res.body).toEqual(claims);
    await request(app).get('/me').expect(401);
  });

  it('refuses two key variables at once', () => {
    Object.assign(process.env, { TOKEN_SECRET: SECRET, TOKEN_JWKS_URI: 'https://issuer.example/jwks', TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE });
    expect(() => requireVerifiedUser()).toThrow(/only one of/);
  });
});

describe('optionsFromEnv', () => {
  it('reads comma lists, "false", and TOKEN_ALGORITHMS', () => {
    const options = optionsFromEnv({ TOKEN_SECRET: SECRET, TOKEN_ISSUER: 'a.example, b.example', TOKEN_AUDIENCE: 'false', TOKEN_ALGORITHMS: 'HS256,HS512' });
    expect(options).toEqual({ key: { secret: SECRET }, issuer: ['a.example', 'b.example'], audience: false, algorithms: ['HS256', 'HS512'] });
  });

  it('maps each key variable to its key form', () => {
    const rest = { TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE };
    expect(optionsFromEnv({ ...rest, TOKEN_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\\nAAA\\n-----END PUBLIC KEY-----' }).key)
      .toEqual({ publicKey: '-----BEGIN PUBLIC KEY-----\nAAA\n-----END PUBLIC KEY-----' });
    expect(optionsFromEnv({ ...rest, TOKEN_JWKS_URI: 'https://i.example/jwks' }).key).toEqual({ jwksUri: 'https://i.example/jwks' });
    expect(optionsFromEnv({ ...rest, TOKEN_UPSTREAM_URL: 'https://i.example/api' }).key).toEqual({ upstream: 'https://i.example/api' });
  });
});
