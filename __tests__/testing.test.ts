import { decode } from 'jsonwebtoken';
import request from 'supertest';
import { createTokenAuth, OptionError, toProfile, type VerifiedClaims } from '../lib';
import { createTestIssuer, type TestIssuer } from '../lib/testing';
import { EXPRESS_VERSIONS } from './fixtures/express';
import { optionErrorOf } from './fixtures/option-error';

const ALGORITHMS = ['HS256', 'RS256', 'ES256'] as const;

describe('createTestIssuer', () => {
  const issuers: TestIssuer[] = [];
  const make = async (...args: Parameters<typeof createTestIssuer>) => {
    const issuer = await createTestIssuer(...args);
    issuers.push(issuer);
    return issuer;
  };
  afterAll(async () => {
    await Promise.all(issuers.map((i) => i.close()));
  });

  it.each(ALGORITHMS)(
    'mints %s tokens that createTokenAuth(issuer.options) accepts, claims exactly as signed',
    async (alg) => {
      const issuer = await make(alg === 'HS256' ? undefined : { alg });
      const auth = createTokenAuth(issuer.options);
      const token = issuer.sign();
      expect(decode(token, { complete: true })?.header.alg).toBe(alg);
      const claims = await auth.verify(token);
      expect(claims).toEqual(decode(token));
      auth.close();
    },
  );

  it('uses HS256 by default', async () => {
    const issuer = await make();
    expect(decode(issuer.sign(), { complete: true })?.header.alg).toBe('HS256');
    expect(issuer.options.algorithms).toEqual(['HS256']);
  });

  it('mints a complete Shape B: all six scopes, all three providers, a fresh jti, 600 s lifetime', async () => {
    const issuer = await make();
    const a = decode(issuer.sign()) as VerifiedClaims;
    const b = decode(issuer.sign()) as VerifiedClaims;
    expect(a.scopes).toEqual(['identify', 'email', 'profile', 'google', 'roblox', 'discord']);
    expect(Object.keys(a.providers).sort()).toEqual(['discord', 'google', 'roblox']);
    expect(a.exp - a.iat).toBe(600);
    expect(a.jti).not.toBe(b.jti);
    expect(toProfile(a)?.status).toBe('success');
  });

  it('applies overrides, and an override of undefined removes the claim', async () => {
    const issuer = await make({ issuer: 'https://id.example', audience: 'shop' });
    const auth = createTokenAuth(issuer.options);
    const claims = await auth.verify(issuer.sign({ scopes: ['identify'], sub: undefined, tenant: 'acme' }));
    expect(claims.scopes).toEqual(['identify']);
    expect('sub' in claims).toBe(false);
    expect(claims.tenant).toBe('acme');
    expect(claims.iss).toBe('https://id.example');
    expect(claims.aud).toBe('shop');
    auth.close();
  });

  it("mints tokens another issuer's options reject", async () => {
    const one = await make({ alg: 'ES256' });
    const two = await make({ alg: 'ES256' });
    const auth = createTokenAuth(two.options);
    await expect(auth.verify(one.sign())).rejects.toMatchObject({ code: 'invalid_token', status: 401 });
    auth.close();
  });

  it('honours an injected clock (expired tokens on demand)', async () => {
    const issuer = await make({ clock: () => Date.now() / 1000 - 3600 });
    const auth = createTokenAuth(issuer.options);
    await expect(auth.verify(issuer.sign())).rejects.toMatchObject({ code: 'token_expired' });
    auth.close();
  });

  it('mints an expired token with an exp override (the README recipe)', async () => {
    const issuer = await make();
    const auth = createTokenAuth(issuer.options);
    await expect(auth.verify(issuer.sign({ exp: Math.floor(Date.now() / 1000) - 60 }))).rejects.toMatchObject({
      code: 'token_expired',
      status: 401,
    });
    auth.close();
  });

  it.each(['RS256', 'ES256'] as const)(
    'serves a loopback JWKS for %s that createTokenAuth(issuer.options) uses',
    async (alg) => {
      const issuer = await make({ alg, jwks: true });
      expect(issuer.options.key).toEqual(expect.objectContaining({ jwksUri: issuer.jwksUri }));
      const auth = createTokenAuth(issuer.options);
      const claims = await auth.verify(issuer.sign());
      expect(claims.jti).toEqual(expect.any(String));
      expect(issuer.jwksRequests).toBe(1);
      auth.close();
    },
  );

  /** The option path of the OptionError that `made` rejects with (anything else fails the test). */
  const refusedOption = (made: Promise<unknown>) =>
    made.then(
      () => Promise.reject(new Error('expected an OptionError')),
      (err: unknown) => (err instanceof OptionError ? err.option : Promise.reject(err)),
    );

  it('rejects an unknown algorithm and jwks with HS256: an OptionError naming the option', async () => {
    await expect(refusedOption(createTestIssuer({ alg: 'none' as 'HS256' }))).resolves.toBe('alg');
    await expect(refusedOption(createTestIssuer({ jwks: true }))).resolves.toBe('jwks');
  });

  it('refuses discovery with HS256 or with an issuer of its own: an OptionError naming the option', async () => {
    await expect(refusedOption(createTestIssuer({ discovery: true, alg: 'HS256' }))).resolves.toBe('discovery');
    await expect(refusedOption(createTestIssuer({ discovery: true, issuer: 'https://elsewhere.test' }))).resolves.toBe(
      'issuer',
    );
  });

  it('refuses rotate() of an HS256 issuer: an OptionError naming alg', async () => {
    const issuer = await make();
    expect(optionErrorOf(() => issuer.rotate()).option).toBe('alg');
  });

  describe.each(EXPRESS_VERSIONS)('discovery: true, through %s', (_name, express) => {
    it('serves OpenID discovery and the JWKS on loopback; its options are { issuerBaseURL, audience } and an app verifies through them', async () => {
      const issuer = await make({ discovery: true });
      expect(issuer.options).toEqual({
        issuerBaseURL: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        audience: 'api.test',
      });
      const base = issuer.options.issuerBaseURL as string;
      const metadata = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(metadata).toMatchObject({ issuer: base, jwks_uri: issuer.jwksUri });

      const auth = createTokenAuth(issuer.options);
      const app = express();
      app.get('/me', auth.requireVerifiedUser(['identify']), (req, res) => {
        res.json({ iss: req.auth?.iss, jti: req.auth?.jti });
      });
      const token = issuer.sign();
      expect(decode(token, { complete: true })?.header).toMatchObject({ alg: 'ES256', kid: issuer.kid });
      const me = await request(app).get('/me').set('Authorization', `Bearer ${token}`).expect(200);
      expect(me.body).toEqual({ iss: base, jti: (decode(token) as VerifiedClaims).jti });
      expect(issuer.jwksRequests).toBe(1);
      await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${issuer.sign({ iss: 'https://issuer.test' })}`)
        .expect(401);
      auth.close();
    });
  });

  describe.each(EXPRESS_VERSIONS)('testing an app that uses this package, through %s', (_name, express) => {
    it.each(ALGORITHMS)('%s: an app test with its own issuer (the README example)', async (alg) => {
      const issuer = await make({ alg });
      const auth = createTokenAuth(issuer.options);
      const app = express();
      app.get('/me', auth.requireVerifiedUser(['identify']), (req, res) => {
        res.json({ jti: req.auth?.jti });
      });
      app.use('/api', auth.verifyRouter());

      const token = issuer.sign();
      const me = await request(app).get('/me').set('Authorization', `Bearer ${token}`).expect(200);
      expect(me.body).toEqual({ jti: (decode(token) as VerifiedClaims).jti });
      await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${issuer.sign({ scopes: [] })}`)
        .expect(403);
      const profile = await request(app)
        .get('/api/auth/@users/verify?view=profile')
        .set('Authorization', `Bearer ${token}`)
        .expect(200);
      expect(profile.body.user.name).toBe('Test User');
      auth.close();
    });
  });
});
