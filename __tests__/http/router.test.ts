import type { Express, NextFunction, Request, Response } from 'express';
import request from 'supertest';
import {
  createTokenAuth,
  TokenAuthError,
  verifyRouter,
  type ProfileResult,
  type TokenAuthOptions,
  type RegisteredClaims,
  type VerifyRouterOptions,
} from '../../lib';
import { resetDefaultTokenAuth } from '../../lib/token-auth';
import { createTestIssuer } from '../../lib/testing';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { optionErrorOf } from '../fixtures/option-error';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';

const PATH = '/api/auth/@users/verify';
const CHALLENGE_MISSING = 'Bearer realm="api"';
const CHALLENGE_INVALID = 'Bearer realm="api", error="invalid_token", error_description="Invalid access token"';
const CHALLENGE_EXPIRED = 'Bearer realm="api", error="invalid_token", error_description="Access token expired"';
const INVALID_VIEW = { status: 'error', message: 'Invalid view: use view=claims or view=profile' };
const NO_PROFILE = { status: 'error', message: 'No profile is linked to this token' };
const INTERNAL = { status: 'error', message: 'Internal server error' };

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };

/** What the sample client sends: GET, the bearer token, and both JSON headers. */
const sampleClientHeaders = (token: string) => ({
  Authorization: `Bearer ${token}`,
  'Content-Type': 'application/json',
  Accept: 'application/json',
});
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

function profileOf(claims: Record<string, unknown>): ProfileResult {
  const google = (claims.providers as { google: ProfileResult['user'] & Record<string, unknown> }).google;
  return {
    status: 'success',
    user: { id: google.id, name: google.name, email: google.email, picture: google.picture },
  };
}

function expectNoStoreJson(res: request.Response): void {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
}

describe.each(EXPRESS_VERSIONS)('verifyRouter through %s', (_name, express) => {
  /** The verify endpoint mounted at `mount`. */
  const routerApp = (options: Partial<TokenAuthOptions> = {}, routerOptions?: VerifyRouterOptions, mount = '/api') =>
    appWith(
      express,
      { ...base, ...options },
      { routes: (app, auth) => app.use(mount, auth.verifyRouter(routerOptions)) },
    );

  describe('Shape B (view=claims, the default)', () => {
    it("answers the sample client's exact request (GET with an empty query string, both JSON headers) with the claims exactly as signed", async () => {
      const claims = shapeB(NOW);
      const res = await request(routerApp())
        .get(`${PATH}?`)
        .set(sampleClientHeaders(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(claims);
      expectNoStoreJson(res);
    });

    it('answers POST the same way, with no body, an empty JSON body or a JSON object body', async () => {
      const claims = shapeB(NOW);
      const token = sign(claims);
      const app = routerApp();
      const bare = await request(app).post(`${PATH}?`).set(bearer(token)).expect(200);
      expect(bare.body).toEqual(claims);
      expectNoStoreJson(bare);
      const json = await request(app).post(PATH).set(sampleClientHeaders(token)).send({}).expect(200);
      expect(json.body).toEqual(claims);
      const object = await request(app).post(PATH).set(sampleClientHeaders(token)).send({ hello: 'world' }).expect(200);
      expect(object.body).toEqual(claims);
    });

    it('never requires a Content-Type: a text body or none at all is fine', async () => {
      const claims = shapeB(NOW);
      const res = await request(routerApp())
        .post(PATH)
        .set(bearer(sign(claims)))
        .set('Content-Type', 'text/plain')
        .send('anything')
        .expect(200);
      expect(res.body).toEqual(claims);
    });

    it('answers view=claims with Shape B', async () => {
      const claims = shapeB(NOW);
      const res = await request(routerApp())
        .get(`${PATH}?view=claims`)
        .set(bearer(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(claims);
    });

    it('adds nothing and removes nothing: extra claims stay, an absent sub stays absent', async () => {
      const { sub: _sub, ...withoutSub } = shapeB(NOW, { tenant: 'acme', flags: [1, 2] });
      const res = await request(routerApp())
        .get(PATH)
        .set(bearer(sign(withoutSub)))
        .expect(200);
      expect(res.body).toEqual(withoutSub);
      expect(Object.keys(res.body).sort()).toEqual(Object.keys(withoutSub).sort());
    });

    it('answers HEAD as Express does: the GET status and headers, no body', async () => {
      const res = await request(routerApp())
        .head(PATH)
        .set(bearer(sign(shapeB(NOW))))
        .expect(200);
      expect(res.text).toBeUndefined();
      expectNoStoreJson(res);
      const missing = await request(routerApp()).head(PATH).expect(401);
      expect(missing.headers['www-authenticate']).toBe(CHALLENGE_MISSING);
      expect(missing.headers['cache-control']).toBe('no-store');
    });

    it('lives under the mount path, which plays {base_url}', async () => {
      const token = sign(shapeB(NOW));
      await request(routerApp()).get('/auth/@users/verify').set(bearer(token)).expect(404);
      await request(routerApp({}, undefined, '/'))
        .get('/auth/@users/verify')
        .set(bearer(token))
        .expect(200);
      await request(routerApp({}, undefined, '/v1/identity'))
        .get('/v1/identity/auth/@users/verify?')
        .set(bearer(token))
        .expect(200);
    });

    it('tolerates a trailing slash and a percent-encoded @, and leaves other paths to the app', async () => {
      const token = sign(shapeB(NOW));
      const app = routerApp();
      await request(app).get(`${PATH}/`).set(bearer(token)).expect(200);
      await request(app).get('/api/auth/%40users/verify').set(bearer(token)).expect(200);
      const other = await request(app).get('/api/auth/@users/verify/more').set(bearer(token)).expect(404);
      expect(other.headers['cache-control']).toBeUndefined();
    });
  });

  describe('Shape A (view=profile)', () => {
    it('answers { status: "success", user } from the linked google account', async () => {
      const claims = shapeB(NOW);
      const res = await request(routerApp())
        .get(`${PATH}?view=profile`)
        .set(sampleClientHeaders(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(profileOf(claims));
      expect(res.body).toEqual({
        status: 'success',
        user: {
          id: '110248495921238986420',
          name: 'Test User',
          email: 'test.user@example.com',
          picture: 'https://example.com/test-user.png',
        },
      });
      expectNoStoreJson(res);
    });

    it('answers POST ?view=profile the same way', async () => {
      const claims = shapeB(NOW);
      const res = await request(routerApp())
        .post(`${PATH}?view=profile`)
        .set(sampleClientHeaders(sign(claims)))
        .send({})
        .expect(200);
      expect(res.body).toEqual(profileOf(claims));
    });

    it('is the answer to a request without view when defaultView is "profile"; view=claims still gives Shape B', async () => {
      const claims = shapeB(NOW);
      const app = routerApp({}, { defaultView: 'profile' });
      const profile = await request(app)
        .get(`${PATH}?`)
        .set(bearer(sign(claims)))
        .expect(200);
      expect(profile.body).toEqual(profileOf(claims));
      const full = await request(app)
        .get(`${PATH}?view=claims`)
        .set(bearer(sign(claims)))
        .expect(200);
      expect(full.body).toEqual(claims);
    });

    it('uses an async resolveProfile, which receives the verified claims and the request', async () => {
      const claims = shapeB(NOW);
      const seen: Array<[RegisteredClaims, string | undefined]> = [];
      const app = routerApp(
        {},
        {
          async resolveProfile(verified, req) {
            seen.push([verified, req.get('accept')]);
            await new Promise((resolve) => setTimeout(resolve, 1));
            return {
              status: 'success',
              user: { id: 'u1', name: 'From DB', email: 'db@example.com', picture: 'https://example.com/db.png' },
            };
          },
        },
      );
      const res = await request(app)
        .get(`${PATH}?view=profile`)
        .set(sampleClientHeaders(sign(claims)))
        .expect(200);
      expect(res.body).toEqual({
        status: 'success',
        user: { id: 'u1', name: 'From DB', email: 'db@example.com', picture: 'https://example.com/db.png' },
      });
      expect(seen).toEqual([[claims, 'application/json']]);
    });

    it('uses a synchronous resolveProfile', async () => {
      const app = routerApp(
        {},
        {
          resolveProfile: (c) => ({
            status: 'success',
            user: { id: String(c.jti), name: 'n', email: 'e', picture: 'p' },
          }),
        },
      );
      const claims = shapeB(NOW);
      const res = await request(app)
        .get(`${PATH}?view=profile`)
        .set(bearer(sign(claims)))
        .expect(200);
      expect(res.body.user.id).toBe(claims.jti);
    });
  });

  describe('401 (token checked first)', () => {
    it.each([
      ['GET', (app: Express) => request(app).get(`${PATH}?`)],
      ['POST', (app: Express) => request(app).post(PATH)],
      ['GET ?view=profile', (app: Express) => request(app).get(`${PATH}?view=profile`)],
      ['an unknown view', (app: Express) => request(app).get(`${PATH}?view=everything`)],
    ])('answers Missing access token for %s without a token', async (_case, call) => {
      const res = await call(routerApp()).set('Accept', 'application/json').expect(401);
      expect(res.body).toEqual({ status: 'error', message: 'Missing access token' });
      expect(res.headers['www-authenticate']).toBe(CHALLENGE_MISSING);
      expectNoStoreJson(res);
    });

    it('answers Invalid access token for a bad signature, even with an unknown view', async () => {
      const token = sign(shapeB(NOW), 'another-secret-that-is-long-enough-for-hs256');
      for (const query of ['?', '?view=profile', '?view=nope']) {
        const res = await request(routerApp()).get(`${PATH}${query}`).set(sampleClientHeaders(token)).expect(401);
        expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
        expect(res.headers['www-authenticate']).toBe(CHALLENGE_INVALID);
        expectNoStoreJson(res);
      }
    });

    it('answers Access token expired for an expired token', async () => {
      const token = sign(shapeB(NOW - 3600));
      const res = await request(routerApp()).get(PATH).set(bearer(token)).expect(401);
      expect(res.body).toEqual({ status: 'error', message: 'Access token expired' });
      expect(res.headers['www-authenticate']).toBe(CHALLENGE_EXPIRED);
      expectNoStoreJson(res);
    });

    it('answers 401 for a revoked token and uses the configured realm', async () => {
      const app = routerApp({ realm: 'identity', isRevoked: () => true });
      const res = await request(app)
        .get(PATH)
        .set(bearer(sign(shapeB(NOW))))
        .expect(401);
      expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="identity", error="invalid_token", error_description="Invalid access token"',
      );
    });
  });

  describe('400 (view checked after the token, before scopes)', () => {
    it.each([
      ['an unknown value', '?view=full'],
      ['a different case', '?view=Profile'],
      ['an empty value', '?view='],
      ['a bare name', '?view'],
      ['a repeated parameter, even with equal values', '?view=claims&view=claims'],
      ['a repeated parameter with both values', '?view=claims&view=profile'],
    ])('answers 400 for %s', async (_case, query) => {
      const res = await request(routerApp())
        .get(`${PATH}${query}`)
        .set(bearer(sign(shapeB(NOW))))
        .expect(400);
      expect(res.body).toEqual(INVALID_VIEW);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expectNoStoreJson(res);
    });

    it('answers 400 before 403: a token without any scope and an unknown view', async () => {
      const token = sign(shapeB(NOW, { scopes: [] }));
      const res = await request(routerApp()).post(`${PATH}?view=card`).set(bearer(token)).expect(400);
      expect(res.body).toEqual(INVALID_VIEW);
    });

    it('ignores other query parameters, including view-like names', async () => {
      const claims = shapeB(NOW);
      const res = await request(routerApp())
        .get(`${PATH}?views=profile&view%5B%5D=x&cb=1`)
        .set(bearer(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(claims);
    });
  });

  describe('403 (scopes)', () => {
    it('answers Insufficient scope when Shape B lacks identify', async () => {
      const token = sign(shapeB(NOW, { scopes: ['email', 'profile'] }));
      const res = await request(routerApp()).get(`${PATH}?`).set(sampleClientHeaders(token)).expect(403);
      expect(res.body).toEqual({ status: 'error', message: 'Insufficient scope' });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="insufficient_scope", scope="identify"');
      expectNoStoreJson(res);
    });

    it.each([
      ['email', ['identify', 'profile']],
      ['profile', ['identify', 'email']],
      ['identify', ['profile', 'email']],
    ])('answers 403 for Shape A when %s is missing, naming all three scopes', async (_missing, scopes) => {
      const token = sign(shapeB(NOW, { scopes }));
      const res = await request(routerApp()).get(`${PATH}?view=profile`).set(bearer(token)).expect(403);
      expect(res.body).toEqual({ status: 'error', message: 'Insufficient scope' });
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="identify profile email"',
      );
      expectNoStoreJson(res);
    });

    it('lets Shape B through with identify alone', async () => {
      const claims = shapeB(NOW, { scopes: ['identify'] });
      const res = await request(routerApp())
        .get(PATH)
        .set(bearer(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(claims);
    });

    it('applies requiredScopes to both views', async () => {
      const app = routerApp({}, { requiredScopes: ['identify', 'google'] });
      const token = sign(shapeB(NOW, { scopes: ['identify', 'email', 'profile'] }));
      const claims = await request(app).get(PATH).set(bearer(token)).expect(403);
      expect(claims.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="identify google"',
      );
      const profile = await request(app).get(`${PATH}?view=profile`).set(bearer(token)).expect(403);
      expect(profile.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="identify google profile email"',
      );
    });

    it('accepts requiredScopes as { any } and [] (no scope for Shape B)', async () => {
      const anyApp = routerApp({}, { requiredScopes: { any: ['discord', 'roblox'] } });
      await request(anyApp)
        .get(PATH)
        .set(bearer(sign(shapeB(NOW, { scopes: ['roblox'] }))))
        .expect(200);
      await request(anyApp)
        .get(PATH)
        .set(bearer(sign(shapeB(NOW, { scopes: ['identify'] }))))
        .expect(403);
      const none = routerApp({}, { requiredScopes: [] });
      await request(none)
        .get(PATH)
        .set(bearer(sign(shapeB(NOW, { scopes: [] }))))
        .expect(200);
      await request(none)
        .get(`${PATH}?view=profile`)
        .set(bearer(sign(shapeB(NOW, { scopes: ['profile'] }))))
        .expect(403);
      await request(none)
        .get(`${PATH}?view=profile`)
        .set(bearer(sign(shapeB(NOW, { scopes: ['profile', 'email'] }))))
        .expect(200);
    });

    it('answers 403 before 404: no google account and no profile scope', async () => {
      const token = sign(shapeB(NOW, { scopes: ['identify'], providers: {} }));
      await request(routerApp()).get(`${PATH}?view=profile`).set(bearer(token)).expect(403);
    });
  });

  describe('404 (no profile)', () => {
    it('answers No profile is linked to this token when no google account is linked', async () => {
      const token = sign(shapeB(NOW, { providers: { discord: { id: '1', username: 'd', avatar: null } } }));
      const res = await request(routerApp()).get(`${PATH}?view=profile`).set(bearer(token)).expect(404);
      expect(res.body).toEqual(NO_PROFILE);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expectNoStoreJson(res);
    });

    it("answers 404 in claims: 'jwt' mode when the google entry lacks a field", async () => {
      const google = { id: 'g', email: 'a@example.com', name: 'A' };
      // A string sub: 'jwt' mode refuses Shape B's null one (RFC 7519 §4.1.2).
      const token = sign(shapeB(NOW, { providers: { google }, sub: 'user-1' }));
      const res = await request(routerApp({ claims: 'jwt' }))
        .get(`${PATH}?view=profile`)
        .set(bearer(token))
        .expect(404);
      expect(res.body).toEqual(NO_PROFILE);
    });

    it('answers 404 when resolveProfile returns undefined or null (sync or async)', async () => {
      const token = sign(shapeB(NOW));
      for (const resolveProfile of [() => undefined, () => null, async () => undefined, async () => null]) {
        const res = await request(routerApp({}, { resolveProfile }))
          .get(`${PATH}?view=profile`)
          .set(bearer(token))
          .expect(404);
        expect(res.body).toEqual(NO_PROFILE);
      }
    });
  });

  describe('405 (other methods)', () => {
    it.each(['put', 'patch', 'delete'] as const)(
      'answers %s with Allow and the error body, before looking at the token',
      async (method) => {
        const res = await request(routerApp())[method](PATH).expect(405);
        expect(res.body).toEqual({ status: 'error', message: 'Method not allowed' });
        expect(res.headers.allow).toBe('GET, HEAD, POST');
        expect(res.headers['www-authenticate']).toBeUndefined();
        expectNoStoreJson(res);
      },
    );

    it('answers a plain OPTIONS (not a CORS preflight) with 405', async () => {
      const res = await request(routerApp())
        .options(PATH)
        .set(bearer(sign(shapeB(NOW))))
        .expect(405);
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      expect(res.body).toEqual({ status: 'error', message: 'Method not allowed' });
    });

    it('passes a CORS preflight to the next handler', async () => {
      const auth = createTokenAuth(base);
      const app = express();
      app.use('/api', auth.verifyRouter());
      app.options('/api/auth/@users/verify', (_req: Request, res: Response) => {
        res.set('Access-Control-Allow-Methods', 'GET, POST').status(204).end();
      });
      const res = await request(app)
        .options(PATH)
        .set('Origin', 'https://app.example.com')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'authorization, content-type')
        .expect(204);
      expect(res.headers['access-control-allow-methods']).toBe('GET, POST');
    });
  });

  describe('500 (an app hook failing)', () => {
    const SECRET_TEXT = 'db password hunter2 at 10.0.0.7';

    it.each([
      [
        'throws',
        () => {
          throw new Error(SECRET_TEXT);
        },
      ],
      [
        'rejects',
        async () => {
          throw new Error(SECRET_TEXT);
        },
      ],
      [
        'throws a non-Error',
        () => {
          throw SECRET_TEXT;
        },
      ],
    ])(
      'answers Internal server error when resolveProfile %s, without a trace of its text',
      async (_case, resolveProfile) => {
        const failures: TokenAuthError[] = [];
        const app = routerApp({ onError: (err) => failures.push(err) }, { resolveProfile });
        const res = await request(app)
          .get(`${PATH}?view=profile`)
          .set(bearer(sign(shapeB(NOW))))
          .expect(500);
        expect(res.body).toEqual(INTERNAL);
        expect(res.text).not.toContain('hunter2');
        expect(res.text).not.toContain('at ');
        expect(res.headers['www-authenticate']).toBeUndefined();
        expectNoStoreJson(res);
        expect(failures.map((f) => [f.code, f.reason])).toEqual([['internal', 'resolveProfile-threw']]);
      },
    );

    it('answers 500 when resolveProfile returns something that is not Shape A', async () => {
      const resolveProfile = (() => ({ user: { id: 'x' } })) as unknown as VerifyRouterOptions['resolveProfile'];
      const res = await request(routerApp({}, { resolveProfile }))
        .get(`${PATH}?view=profile`)
        .set(bearer(sign(shapeB(NOW))))
        .expect(500);
      expect(res.body).toEqual(INTERNAL);
    });

    it('does not call resolveProfile for Shape B', async () => {
      const resolveProfile = jest.fn(() => {
        throw new Error('not for claims');
      });
      await request(routerApp({}, { resolveProfile }))
        .get(PATH)
        .set(bearer(sign(shapeB(NOW))))
        .expect(200);
      expect(resolveProfile).not.toHaveBeenCalled();
    });
  });

  describe('503 (keys unreachable)', () => {
    it('answers Token verification unavailable with Retry-After when the JWKS cannot be fetched', async () => {
      const issuer = await createTestIssuer({ alg: 'ES256', jwks: true, issuer: ISSUER, audience: AUDIENCE });
      const token = issuer.sign();
      await issuer.close();
      const auth = createTokenAuth({ ...issuer.options, key: { jwksUri: issuer.jwksUri as string, timeout: 1 } });
      const app = express();
      app.use('/api', auth.verifyRouter());
      const res = await request(app).get(`${PATH}?`).set(sampleClientHeaders(token)).expect(503);
      expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expectNoStoreJson(res);
      auth.close();
    });
  });

  describe("errors: 'next'", () => {
    function nextApp(routerOptions?: VerifyRouterOptions) {
      const seen: unknown[] = [];
      const app = appWith(
        express,
        { ...base, errors: 'next' },
        {
          routes: (made, auth) => {
            made.use('/api', auth.verifyRouter(routerOptions));
            made.use((err: unknown, _req: Request, _res: Response, next: NextFunction) => {
              seen.push(err);
              next(err);
            });
          },
          errorHandler: true,
        },
      );
      return { app, seen };
    }

    it.each([
      ['401', `${PATH}`, undefined, 'missing_token'],
      ['400', `${PATH}?view=x`, sign(shapeB(NOW)), 'invalid_request'],
      ['403', `${PATH}?view=profile`, sign(shapeB(NOW, { scopes: ['identify'] })), 'insufficient_scope'],
      ['404', `${PATH}?view=profile`, sign(shapeB(NOW, { providers: {} })), 'not_found'],
    ])('passes a %s to next(err) as a TokenAuthError that errorHandler renders', async (status, path, token, code) => {
      const { app, seen } = nextApp();
      const req = request(app).get(path);
      if (token !== undefined) req.set(bearer(token));
      const res = await req.expect(Number(status));
      expect(seen).toHaveLength(1);
      expect(seen[0]).toBeInstanceOf(TokenAuthError);
      expect((seen[0] as TokenAuthError).code).toBe(code);
      expect(res.body.status).toBe('error');
      expectNoStoreJson(res);
    });

    it('passes a 405 with its Allow header', async () => {
      const { app, seen } = nextApp();
      const res = await request(app).delete(PATH).expect(405);
      expect((seen[0] as TokenAuthError).headers).toEqual({ Allow: 'GET, HEAD, POST' });
      expect(res.headers.allow).toBe('GET, HEAD, POST');
    });

    it('passes a throwing resolveProfile as an internal error; the renderer shows none of its text', async () => {
      const { app, seen } = nextApp({
        resolveProfile: () => {
          throw new Error('hunter2');
        },
      });
      const res = await request(app)
        .get(`${PATH}?view=profile`)
        .set(bearer(sign(shapeB(NOW))))
        .expect(500);
      expect((seen[0] as TokenAuthError).code).toBe('internal');
      expect(res.body).toEqual(INTERNAL);
      expect(res.text).not.toContain('hunter2');
    });

    it('still answers successes itself', async () => {
      const claims = shapeB(NOW);
      const { app, seen } = nextApp();
      const res = await request(app)
        .get(PATH)
        .set(bearer(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(claims);
      expect(seen).toEqual([]);
    });
  });
});

describe('verifyRouter options', () => {
  const auth = createTokenAuth(base);
  afterAll(() => auth.close());

  it.each([
    ['a non-object', 'claims', ''],
    ['an unknown option', { view: 'claims' }, 'view'],
    ['an unknown defaultView', { defaultView: 'full' }, 'defaultView'],
    ['requiredScopes as a string', { requiredScopes: 'identify' }, 'requiredScopes'],
    ['requiredScopes with a space', { requiredScopes: ['identify email'] }, 'requiredScopes'],
    ['requiredScopes.all as a string', { requiredScopes: { all: 'identify' } }, 'requiredScopes.all'],
    ['requiredScopes with another field', { requiredScopes: { some: ['identify'] } }, 'requiredScopes.some'],
    ['a resolveProfile that is not a function', { resolveProfile: 'google' }, 'resolveProfile'],
  ])('throws a TypeError at set-up for %s: an OptionError naming the option', (_case, options, option) => {
    expect(() => auth.verifyRouter(options as unknown as VerifyRouterOptions)).toThrow(TypeError);
    const err = optionErrorOf(() => auth.verifyRouter(options as unknown as VerifyRouterOptions));
    expect(err.option).toBe(option);
    expect(err.message).toMatch(/^express-verified-user: verifyRouter /);
  });

  it('accepts no options and each documented option', () => {
    expect(typeof auth.verifyRouter()).toBe('function');
    expect(
      typeof auth.verifyRouter({
        defaultView: 'profile',
        requiredScopes: { all: ['identify'] },
        resolveProfile: () => undefined,
      }),
    ).toBe('function');
  });
});

describe('top-level verifyRouter (environment-configured)', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    resetDefaultTokenAuth();
  });

  it('throws a TypeError naming the key variables at set-up when nothing is configured', () => {
    for (const name of ['TOKEN_SECRET', 'TOKEN_PUBLIC_KEY', 'TOKEN_JWKS_URI', 'TOKEN_UPSTREAM_URL'])
      delete process.env[name];
    expect(() => verifyRouter()).toThrow(TypeError);
    expect(() => verifyRouter()).toThrow(/TOKEN_SECRET/);
  });

  it.each(EXPRESS_VERSIONS)(
    'serves the endpoint from TOKEN_SECRET, TOKEN_ISSUER and TOKEN_AUDIENCE through %s',
    async (_name, express) => {
      Object.assign(process.env, { TOKEN_SECRET: SECRET, TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE });
      const app = express();
      app.use('/api', verifyRouter({ defaultView: 'profile' }));
      const claims = shapeB(Math.floor(Date.now() / 1000));
      const res = await request(app)
        .get(`${PATH}?`)
        .set(sampleClientHeaders(sign(claims)))
        .expect(200);
      expect(res.body).toEqual(profileOf(claims));
    },
  );
});
