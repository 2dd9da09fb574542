import type { Express } from 'express';
import request from 'supertest';
import {
  createTokenAuth,
  errorHandler,
  type ScopeRequirementInput,
  type TokenAuthError,
  type TokenAuthOptions,
} from '../../lib';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';

const CHALLENGE_INVALID = 'Bearer realm="api", error="invalid_token", error_description="Invalid access token"';
const challengeScope = (scope: string) => `Bearer realm="api", error="insufficient_scope", scope="${scope}"`;
const INVALID = { status: 'error', message: 'Invalid access token' };
const FORBIDDEN = { status: 'error', message: 'Insufficient scope' };
const INTERNAL = { status: 'error', message: 'Internal server error' };

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };

/** An access token as most authorization servers mint it: registered claims, a `scope` string, no Shape B. */
function accessToken(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'user-1',
    client_id: 'app-1',
    iat: NOW,
    exp: NOW + 600,
    jti: 'id-1',
    scope: 'read write',
    ...overrides,
  };
}
const AT_JWT = { typ: 'at+jwt' };
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe.each(EXPRESS_VERSIONS)('claims modes through %s', (_name, express) => {
  const errors: TokenAuthError[] = [];
  const meApp = (options: Partial<TokenAuthOptions>, scopes?: ScopeRequirementInput): Express =>
    appWith(express, { ...base, onError: (err) => errors.push(err), ...options }, { scopes });
  beforeEach(() => {
    errors.length = 0;
  });

  async function expectInvalid(app: Express, token: string, reason: string): Promise<void> {
    const res = await request(app).get('/me').set(bearer(token)).expect(401);
    expect(res.body).toEqual(INVALID);
    expect(res.headers['www-authenticate']).toBe(CHALLENGE_INVALID);
    expect(errors.at(-1)?.reason).toBe(reason);
  }

  describe("claims: 'strict' (the default with key)", () => {
    it('refuses an access token of another authorization server, naming the first Shape B field it lacks', async () => {
      await expectInvalid(meApp({}), sign(accessToken()), 'shape:scopes');
    });
  });

  describe("claims: 'jwt'", () => {
    const app = () => meApp({ claims: 'jwt' }, ['read']);

    it('accepts a token with registered claims only and gives its claims exactly as signed', async () => {
      const claims = accessToken();
      const res = await request(app())
        .get('/me')
        .set(bearer(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(claims);
    });

    it('reads scopes from scope, then scp, then scopes by default', async () => {
      await request(app())
        .get('/me')
        .set(bearer(sign(accessToken({ scope: undefined, scp: ['read'] }))))
        .expect(200);
      await request(app())
        .get('/me')
        .set(bearer(sign(accessToken({ scope: undefined, scp: 'read other' }))))
        .expect(200);
      await request(app())
        .get('/me')
        .set(bearer(sign(accessToken({ scope: ['read'] }))))
        .expect(200);
      await request(app())
        .get('/me')
        .set(bearer(sign(accessToken({ scope: undefined, scopes: ['read'] }))))
        .expect(200);
      // The first claim present decides: a `scope` without `read` is not rescued by `scp`.
      const res = await request(app())
        .get('/me')
        .set(bearer(sign(accessToken({ scope: 'write', scp: ['read'] }))))
        .expect(403);
      expect(res.body).toEqual(FORBIDDEN);
      expect(res.headers['www-authenticate']).toBe(challengeScope('read'));
    });

    it.each([
      ['a number', 42],
      ['an object', { read: true }],
      ['an array holding a non-string', ['read', 1]],
      ['null', null],
    ])('answers 403, never 500, when the scope claim is %s', async (_case, scope) => {
      const res = await request(app())
        .get('/me')
        .set(bearer(sign(accessToken({ scope }))))
        .expect(403);
      expect(res.body).toEqual(FORBIDDEN);
      expect(res.headers['www-authenticate']).toBe(challengeScope('read'));
    });

    it('still requires exp, and checks iat only when present', async () => {
      await expectInvalid(app(), sign(accessToken({ exp: undefined })), 'exp');
      await request(app())
        .get('/me')
        .set(bearer(sign(accessToken({ iat: undefined }))))
        .expect(200);
      await expectInvalid(app(), sign(accessToken({ iat: 'yesterday' })), 'iat');
    });

    // JwtClaims types iss, sub, aud and jti as RFC 7519 §4.1 does: a token whose claim has another type never passes.
    it.each([
      ['sub', 42],
      ['sub', null],
      ['sub', { id: 'user-1' }],
      ['iss', ['https://issuer.example']],
      ['aud', [AUDIENCE, 7]],
      ['aud', null],
      ['jti', 123],
    ])(
      'refuses a %s of another type (%j), reason jwt:<claim>, even with issuer and audience unchecked',
      async (claim, value) => {
        const loose = meApp({ claims: 'jwt', issuer: false, audience: false });
        await expectInvalid(loose, sign(accessToken({ [claim]: value })), `jwt:${claim}`);
        expect(errors.at(-1)?.hint).toMatch(/RFC 7519/);
      },
    );

    it("accepts each registered claim absent, and an empty sub (Cloudflare Access's service tokens)", async () => {
      const loose = meApp({ claims: 'jwt', issuer: false, audience: false });
      const bare = accessToken({ iss: undefined, sub: '', aud: undefined, jti: undefined, scope: undefined });
      await request(loose)
        .get('/me')
        .set(bearer(sign(bare)))
        .expect(200);
    });
  });

  describe("claims: 'at+jwt' (RFC 9068)", () => {
    const app = () => meApp({ claims: 'at+jwt' });

    it.each(['at+jwt', 'application/at+jwt', 'AT+JWT', 'Application/At+JWT'])('accepts typ %s', async (typ) => {
      await request(app())
        .get('/me')
        .set(bearer(sign(accessToken(), SECRET, 'HS256', { typ })))
        .expect(200);
    });

    it.each([
      ['no typ', { typ: undefined }],
      ['typ JWT', { typ: 'JWT' }],
    ])('refuses a token with %s', async (_case, header) => {
      await expectInvalid(app(), sign(accessToken(), SECRET, 'HS256', header), 'typ');
    });

    it.each(['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'])('refuses a token without %s', async (claim) => {
      // With the issuer and audience unchecked, the mode alone requires iss and aud.
      const loose = meApp({ claims: 'at+jwt', issuer: false, audience: false });
      const reason = claim === 'exp' ? 'exp' : claim === 'iat' ? 'iat' : `at+jwt:${claim}`;
      await expectInvalid(loose, sign(accessToken({ [claim]: undefined }), SECRET, 'HS256', AT_JWT), reason);
    });

    it('refuses required claims of the wrong type', async () => {
      await expectInvalid(app(), sign(accessToken({ client_id: 7 }), SECRET, 'HS256', AT_JWT), 'at+jwt:client_id');
      await expectInvalid(app(), sign(accessToken({ sub: '' }), SECRET, 'HS256', AT_JWT), 'at+jwt:sub');
    });
  });

  describe('option typ', () => {
    it('narrows the accepted typ values, case-insensitively and with or without application/', async () => {
      const app = meApp({ claims: 'jwt', typ: ['application/JWT'] });
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken(), SECRET, 'HS256', { typ: 'jwt' })))
        .expect(200);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken(), SECRET, 'HS256', { typ: 'application/jwt' })))
        .expect(200);
      await expectInvalid(app, sign(accessToken(), SECRET, 'HS256', { typ: 'at+jwt' }), 'typ');
      await expectInvalid(app, sign(accessToken(), SECRET, 'HS256', { typ: undefined }), 'typ');
    });
  });

  describe('scopeClaim', () => {
    it('reads the named claim: Auth0 permissions', async () => {
      const app = meApp({ claims: 'jwt', scopeClaim: 'permissions' }, ['read:users']);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken({ permissions: ['read:users'] }))))
        .expect(200);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken({ scope: 'read:users' }))))
        .expect(403);
    });

    it('reads the first present of several names', async () => {
      const app = meApp({ claims: 'jwt', scopeClaim: ['permissions', 'scope'] }, ['read']);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken({ scope: 'read' }))))
        .expect(200);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken({ permissions: [], scope: 'read' }))))
        .expect(403);
    });

    it('takes a function of the claims (Keycloak realm roles)', async () => {
      const roles = (claims: Record<string, unknown>) => {
        const access = claims.realm_access as { roles?: string[] } | undefined;
        return access?.roles;
      };
      const app = meApp({ claims: 'jwt', scopeClaim: roles }, ['admin']);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken({ realm_access: { roles: ['admin'] } }))))
        .expect(200);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken({ realm_access: { roles: ['user'] } }))))
        .expect(403);
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken())))
        .expect(403);
    });

    it('answers 500 when the function throws, keeping the cause for onError only', async () => {
      const app = meApp(
        {
          claims: 'jwt',
          scopeClaim: () => {
            throw new Error('secret detail');
          },
        },
        ['read'],
      );
      const res = await request(app)
        .get('/me')
        .set(bearer(sign(accessToken())))
        .expect(500);
      expect(res.body).toEqual(INTERNAL);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(JSON.stringify(res.body)).not.toContain('secret detail');
      expect(errors.at(-1)).toMatchObject({ code: 'internal', reason: 'scopeClaim-threw' });
      expect((errors.at(-1)?.cause as Error).message).toBe('secret detail');
    });

    it('is not asked on a route that requires no scopes', async () => {
      let asked = 0;
      const app = meApp({
        claims: 'jwt',
        scopeClaim: () => {
          asked++;
          throw new Error('no');
        },
      });
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken())))
        .expect(200);
      expect(asked).toBe(0);
    });

    it("reads only scopes in 'strict' mode by default: a scope string grants nothing there", async () => {
      const app = meApp({}, ['identify']);
      await request(app)
        .get('/me')
        .set(bearer(sign(shapeB(NOW))))
        .expect(200);
      const res = await request(app)
        .get('/me')
        .set(bearer(sign(shapeB(NOW, { scopes: [], scope: 'identify' }))))
        .expect(403);
      expect(res.headers['www-authenticate']).toBe(challengeScope('identify'));
    });
  });

  describe('requiredClaims', () => {
    it('refuses a token without one of them (absent or null)', async () => {
      const app = meApp({ claims: 'jwt', requiredClaims: ['tenant', 'sub'] });
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken({ tenant: 't1' }))))
        .expect(200);
      await expectInvalid(app, sign(accessToken()), 'required:tenant');
      await expectInvalid(app, sign(accessToken({ tenant: null })), 'required:tenant');
    });
  });

  describe('validateClaims', () => {
    it('refuses a token it answers false for, and passes it the header', async () => {
      const seen: unknown[] = [];
      const app = meApp({
        claims: 'jwt',
        validateClaims: (claims, header) => {
          seen.push(header?.alg);
          return claims.sub === 'user-1';
        },
      });
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken())))
        .expect(200);
      await expectInvalid(app, sign(accessToken({ sub: 'user-2' })), 'validate');
      expect(seen).toEqual(['HS256', 'HS256']);
    });

    it('refuses a token when it throws or rejects, keeping the cause for onError', async () => {
      const cause = new Error('rule broke');
      await expectInvalid(
        meApp({
          claims: 'jwt',
          validateClaims: () => {
            throw cause;
          },
        }),
        sign(accessToken()),
        'validate',
      );
      expect(errors.at(-1)?.cause).toBe(cause);
      await expectInvalid(
        meApp({
          claims: 'jwt',
          validateClaims: async () => {
            throw cause;
          },
        }),
        sign(accessToken()),
        'validate',
      );
      expect(errors.at(-1)?.cause).toBe(cause);
    });

    it('may answer asynchronously', async () => {
      const app = meApp({ claims: 'jwt', validateClaims: async (claims) => claims.sub === 'user-1' });
      await request(app)
        .get('/me')
        .set(bearer(sign(accessToken())))
        .expect(200);
      await expectInvalid(app, sign(accessToken({ sub: 'user-2' })), 'validate');
    });

    it('is asked once per token: its verdict is cached with the token', async () => {
      let asked = 0;
      const app = meApp({
        claims: 'jwt',
        validateClaims: async (claims) => {
          asked++;
          return claims.sub === 'user-1';
        },
      });
      const good = sign(accessToken());
      const bad = sign(accessToken({ sub: 'user-2' }));
      for (let i = 0; i < 3; i++) {
        await request(app).get('/me').set(bearer(good)).expect(200);
        await request(app).get('/me').set(bearer(bad)).expect(401);
      }
      expect(asked).toBe(2);
    });
  });
});

describe.each(EXPRESS_VERSIONS)('auth.claims(req) through %s', (_name, express) => {
  const strict = createTokenAuth({ ...base, claims: 'strict' });
  const jwt = createTokenAuth({ ...base, claims: 'jwt' });
  const app = express();
  app.get('/strict', strict.requireVerifiedUser(), (req, res) => {
    res.json({ discord: strict.claims(req).providers.discord?.id });
  });
  app.get('/jwt', jwt.requireVerifiedUser(), (req, res) => {
    res.json({ sub: jwt.claims(req).sub });
  });
  app.get('/mixed', jwt.requireVerifiedUser(), (req, res) => {
    res.json({ discord: strict.claims(req).providers.discord?.id });
  });
  app.get('/open', (req, res) => {
    res.json(jwt.claims(req));
  });
  app.use(errorHandler());

  it('gives the claims this TokenAuth verified, typed by its mode', async () => {
    await request(app)
      .get('/strict')
      .set(bearer(sign(shapeB(NOW))))
      .expect(200, { discord: '80351110224678912' });
    await request(app)
      .get('/jwt')
      .set(bearer(sign(accessToken())))
      .expect(200, { sub: 'user-1' });
  });

  it("answers 500 for claims another TokenAuth verified, whose mode may not guarantee this one's fields", async () => {
    const res = await request(app)
      .get('/mixed')
      .set(bearer(sign(accessToken())))
      .expect(500);
    expect(res.body).toEqual(INTERNAL);
  });

  it('answers 401 missing_token on a route without its middleware', async () => {
    const res = await request(app).get('/open').expect(401);
    expect(res.body).toEqual({ status: 'error', message: 'Missing access token' });
  });
});

describe('claim options at createTokenAuth', () => {
  it.each([
    ['claims unknown', { claims: 'oidc' }, /"claims"/],
    ['typ empty', { typ: [] }, /"typ"/],
    ['typ not a string', { typ: 7 }, /"typ"/],
    ['typ naming another kind of JWT', { claims: 'jwt', typ: 'dpop+jwt' }, /"typ".*dpop\+jwt/],
    ["typ outside 'at+jwt'", { claims: 'at+jwt', typ: 'JWT' }, /"typ".*at\+jwt/],
    ['scopeClaim empty', { scopeClaim: [] }, /"scopeClaim"/],
    ['scopeClaim a number', { scopeClaim: 3 }, /"scopeClaim"/],
    ['scopeClaim holding an empty name', { scopeClaim: ['scope', ''] }, /"scopeClaim"/],
    ['requiredClaims not an array', { requiredClaims: 'sub' }, /"requiredClaims"/],
    ['requiredClaims holding a number', { requiredClaims: [1] }, /"requiredClaims"/],
    ['validateClaims not a function', { validateClaims: true }, /"validateClaims"/],
  ])('throws a TypeError for %s', (_case, options, message) => {
    expect(() => createTokenAuth({ ...base, ...options } as TokenAuthOptions)).toThrow(TypeError);
    expect(() => createTokenAuth({ ...base, ...options } as TokenAuthOptions)).toThrow(message);
  });

  it("refuses claims: 'at+jwt' and typ in upstream mode, which never sees the token's header", () => {
    const upstream = { key: { upstream: 'http://127.0.0.1:1' }, issuer: ISSUER, audience: AUDIENCE };
    expect(() => createTokenAuth({ ...upstream, claims: 'at+jwt' })).toThrow(/upstream/);
    expect(() => createTokenAuth({ ...upstream, typ: 'JWT' })).toThrow(/upstream/);
  });
});
