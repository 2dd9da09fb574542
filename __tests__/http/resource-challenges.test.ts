// A protected resource's challenges through real Express 4 and 5 apps: resource_metadata (RFC 9728 §5.1) in every
// Bearer and DPoP challenge whatever the Host says, the route's scope on a 401, step-up (RFC 9470), the audience
// rule a resource sets (RFC 8707), scopesOf, and the route guard other entries build on.
import type { Express, Request } from 'express';
import request from 'supertest';
import { createTokenAuth, TokenAuthError, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { routeGuard } from '../../lib/token-auth';
import { createTestIssuer, type DpopHolder, type TestIssuer } from '../../lib/testing';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { optionErrorOf } from '../fixtures/option-error';
import { listen, type Listening } from '../fixtures/listen';
import { NOW, SECRET, sign } from '../fixtures/issuer';

const RESOURCE = 'https://mcp.example.com/mcp';
const METADATA = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';
const RM = `resource_metadata="${METADATA}"`;
const AS = 'https://as.example.com';
const ALGS = 'ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA Ed25519';
const base: TokenAuthOptions = {
  key: { secret: SECRET },
  issuer: AS,
  resource: RESOURCE,
  claims: 'jwt',
  clock: () => NOW,
};

const payload = (overrides: Record<string, unknown> = {}) => ({
  iss: AS,
  aud: RESOURCE,
  sub: 'user-1',
  iat: NOW - 60,
  exp: NOW + 600,
  scope: 'mcp:tools',
  ...overrides,
});
const bearer = (overrides?: Record<string, unknown>) => ({ Authorization: `Bearer ${sign(payload(overrides))}` });

describe.each(EXPRESS_VERSIONS)("a protected resource's challenges through %s", (_name, express) => {
  /** POST /mcp (mcp:tools), GET /open, GET /admin (mcp:tools and mcp:admin or mcp:root), after `configure`'s. */
  const resourceApp = (options: Partial<TokenAuthOptions> = {}, configure?: (app: Express, auth: TokenAuth) => void) =>
    appWith(
      express,
      { ...base, ...options },
      {
        routes: (app, auth) => {
          configure?.(app, auth);
          app.post('/mcp', auth.requireVerifiedUser(['mcp:tools']), (req, res) => {
            res.json({ sub: req.auth?.sub });
          });
          app.get('/open', auth.requireVerifiedUser(), (_req, res) => {
            res.json({ ok: true });
          });
          app.get(
            '/admin',
            auth.requireVerifiedUser({ all: ['mcp:tools'], any: ['mcp:admin', 'mcp:root'] }),
            (_req, res) => {
              res.json({ ok: true });
            },
          );
        },
      },
    );

  describe('Bearer', () => {
    it("points a request without a token to the metadata, names the route's scopes, and gives no error code", async () => {
      const res = await request(resourceApp()).post('/mcp').expect(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer realm="api", scope="mcp:tools", ${RM}`);
      expect(res.body).toEqual({ status: 'error', message: 'Missing access token' });
    });

    it('names no scope on the 401 of a route that needs none', async () => {
      const res = await request(resourceApp()).get('/open').expect(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer realm="api", ${RM}`);
    });

    it('lets optionalVerifiedUser through without a token, and points a bad token to the metadata', async () => {
      const auth = createTokenAuth(base);
      const app = express();
      app.get('/maybe', auth.optionalVerifiedUser(), (req, res) => {
        res.json({ sub: req.auth?.sub ?? null });
      });
      await request(app).get('/maybe').expect(200, { sub: null });
      const res = await request(app)
        .get('/maybe')
        .set(bearer({ aud: 'https://other.example.com' }))
        .expect(401);
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="invalid_token", error_description="Invalid access token", ${RM}`,
      );
    });

    it("adds both to an invalid or expired token's challenge", async () => {
      const invalid = await request(resourceApp())
        .post('/mcp')
        .set(bearer({ iss: 'https://elsewhere.example.com' }))
        .expect(401);
      expect(invalid.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="invalid_token", error_description="Invalid access token", scope="mcp:tools", ${RM}`,
      );
      const expired = await request(resourceApp())
        .post('/mcp')
        .set(bearer({ exp: NOW - 60 }))
        .expect(401);
      expect(expired.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="invalid_token", error_description="Access token expired", scope="mcp:tools", ${RM}`,
      );
    });

    it('answers 403 with every scope the operation needs and the metadata, in one challenge', async () => {
      const res = await request(resourceApp())
        .post('/mcp')
        .set(bearer({ scope: 'other' }))
        .expect(403);
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="insufficient_scope", scope="mcp:tools", ${RM}`,
      );
      const any = await request(resourceApp())
        .get('/admin')
        .set(bearer({ scope: 'mcp:tools' }))
        .expect(403);
      expect(any.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="insufficient_scope", scope="mcp:tools mcp:admin", ${RM}`,
      );
      const held = await request(resourceApp())
        .get('/admin')
        .set(bearer({ scope: 'mcp:root' }))
        .expect(403);
      expect(held.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="insufficient_scope", scope="mcp:tools mcp:root", ${RM}`,
      );
    });

    it('never builds the metadata URL from Host or X-Forwarded-*, whatever trust proxy says', async () => {
      const app = resourceApp({}, (a) => a.set('trust proxy', true));
      const forged = { Host: 'evil.example', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'http' };
      const missing = await request(app).post('/mcp').set(forged).expect(401);
      expect(missing.headers['www-authenticate']).toBe(`Bearer realm="api", scope="mcp:tools", ${RM}`);
      const forbidden = await request(app)
        .post('/mcp')
        .set({ ...forged, ...bearer({ scope: '' }) })
        .expect(403);
      expect(forbidden.headers['www-authenticate']).toContain(RM);
      expect(forbidden.headers['www-authenticate']).not.toContain('evil');
    });

    it('keeps RFC 6750 as it was without a resource: no resource_metadata, no scope on a 401', async () => {
      const app = resourceApp({ resource: undefined, audience: RESOURCE });
      const res = await request(app).post('/mcp').expect(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
      const forbidden = await request(app)
        .post('/mcp')
        .set(bearer({ scope: '' }))
        .expect(403);
      expect(forbidden.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="mcp:tools"',
      );
    });

    it('gives each request its own challenge for a token fault served from the cache', async () => {
      const token = sign(payload({ iss: 'https://elsewhere.example.com' }));
      const app = resourceApp();
      const first = await request(app)
        .post('/mcp')
        .set({ Authorization: `Bearer ${token}` })
        .expect(401);
      const second = await request(app)
        .get('/open')
        .set({ Authorization: `Bearer ${token}` })
        .expect(401);
      expect(first.headers['www-authenticate']).toContain('scope="mcp:tools"');
      expect(second.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="invalid_token", error_description="Invalid access token", ${RM}`,
      );
    });

    it("renders the same challenge through errors: 'next' and errorHandler", async () => {
      const app = appWith(
        express,
        { ...base, errors: 'next' },
        {
          routes: (made, auth) =>
            made.post('/mcp', auth.requireVerifiedUser(['mcp:tools']), (_req, res) => {
              res.json({});
            }),
          errorHandler: true,
        },
      );
      const res = await request(app).post('/mcp').expect(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer realm="api", scope="mcp:tools", ${RM}`);
    });
  });

  describe('the audience a resource sets (RFC 8707)', () => {
    it.each([
      ['the resource itself', RESOURCE, 200],
      ['scheme and host in another case', 'HTTPS://MCP.Example.COM/mcp', 200],
      ['an array holding it', ['https://other.example.com', 'https://Mcp.example.com/mcp'], 200],
      ['the path in another case', 'https://mcp.example.com/MCP', 401],
      ['a trailing slash', 'https://mcp.example.com/mcp/', 401],
      ['the default port spelled out', 'https://mcp.example.com:443/mcp', 401],
      ['another scheme', 'http://mcp.example.com/mcp', 401],
      ['another host', 'https://mcp.example.org/mcp', 401],
      ['a parent path', 'https://mcp.example.com', 401],
      ['a longer host ending the same', 'https://xmcp.example.com/mcp', 401],
    ])('aud = %s → %i', async (_what, aud, status) => {
      await request(resourceApp()).post('/mcp').set(bearer({ aud })).expect(status);
    });

    it('lets an explicit audience replace it, keeping the resource rule only for the resource itself', async () => {
      const other = resourceApp({ audience: 'api://other' });
      await request(other)
        .post('/mcp')
        .set(bearer({ aud: 'api://other' }))
        .expect(200);
      await request(other).post('/mcp').set(bearer()).expect(401);
      const both = resourceApp({ audience: ['api://other', RESOURCE] });
      await request(both)
        .post('/mcp')
        .set(bearer({ aud: 'HTTPS://MCP.EXAMPLE.COM/mcp' }))
        .expect(200);
      await request(both)
        .post('/mcp')
        .set(bearer({ aud: 'API://OTHER' }))
        .expect(401);
    });
  });

  describe('step-up (RFC 9470)', () => {
    const MFA = 'urn:example:acr:mfa';
    function stepUpApp(
      options: Parameters<ReturnType<typeof createTokenAuth>['requireVerifiedUser']>[1],
      clock = () => NOW,
      extra: Partial<TokenAuthOptions> = {},
    ) {
      const auth = createTokenAuth({ ...base, clock, ...extra });
      const app = express();
      app.post('/mcp', auth.requireVerifiedUser(['mcp:tools'], options), (_req, res) => {
        res.json({ ok: true });
      });
      return app;
    }
    const STEP_UP = 'error="insufficient_user_authentication", error_description="Insufficient user authentication"';

    it('accepts a listed acr and a recent enough auth_time', async () => {
      await request(stepUpApp({ acr: [MFA, 'urn:other'], maxAge: '10m' }))
        .post('/mcp')
        .set(bearer({ acr: MFA, auth_time: NOW - 599 }))
        .expect(200);
    });

    it.each([
      ['an acr not listed', { acr: 'urn:example:acr:password', auth_time: NOW }],
      ['no acr', { auth_time: NOW }],
      ['an acr that is not a string', { acr: [MFA], auth_time: NOW }],
      ['an auth_time older than maxAge', { acr: MFA, auth_time: NOW - 606 }],
      ['no auth_time', { acr: MFA }],
      ['an auth_time that is not a number', { acr: MFA, auth_time: String(NOW) }],
      ['an auth_time in the future (past clockTolerance)', { acr: MFA, auth_time: NOW + 60 }],
    ])('answers 401 insufficient_user_authentication to %s, naming acr_values and max_age', async (_what, claims) => {
      const res = await request(stepUpApp({ acr: [MFA], maxAge: '10m' }))
        .post('/mcp')
        .set(bearer(claims))
        .expect(401);
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="api", ${STEP_UP}, acr_values="${MFA}", max_age="600", scope="mcp:tools", ${RM}`,
      );
      expect(res.body).toEqual({ status: 'error', message: 'Insufficient user authentication' });
    });

    it('names only what the route demands', async () => {
      const acrOnly = await request(stepUpApp({ acr: [MFA, 'urn:b'] }))
        .post('/mcp')
        .set(bearer())
        .expect(401);
      expect(acrOnly.headers['www-authenticate']).toBe(
        `Bearer realm="api", ${STEP_UP}, acr_values="${MFA} urn:b", scope="mcp:tools", ${RM}`,
      );
      const ageOnly = await request(stepUpApp({ maxAge: 300 }, () => NOW, { resource: undefined, audience: RESOURCE }))
        .post('/mcp')
        .set(bearer())
        .expect(401);
      expect(ageOnly.headers['www-authenticate']).toBe(`Bearer realm="api", ${STEP_UP}, max_age="300"`);
    });

    it('asks for step-up before scopes: one new authorization can meet both', async () => {
      const res = await request(stepUpApp({ acr: [MFA] }))
        .post('/mcp')
        .set(bearer({ scope: '' }))
        .expect(401);
      expect(res.headers['www-authenticate']).toContain('error="insufficient_user_authentication"');
      expect(res.headers['www-authenticate']).toContain('scope="mcp:tools"');
    });

    it('compares auth_time on every request, the verdict served from the cache', async () => {
      let now = NOW;
      const auth = createTokenAuth({ ...base, clock: () => now });
      const app = express();
      app.post('/mcp', auth.requireVerifiedUser(['mcp:tools'], { maxAge: '5m' }), (_req, res) => {
        res.json({ ok: true });
      });
      const headers = bearer({ auth_time: NOW - 200 });
      // The admission rule caches a verdict at its second sighting: the third request is a hit.
      for (let i = 0; i < 3; i += 1) await request(app).post('/mcp').set(headers).expect(200);
      expect(auth.stats().hits).toBeGreaterThan(0);
      now += 101 + 5;
      await request(app).post('/mcp').set(headers).expect(401);
    });

    it('answers the DPoP challenge with the step-up error too', async () => {
      const res = await request(stepUpApp({ acr: [MFA] }, () => NOW, { dpop: {} }))
        .post('/mcp')
        .set(bearer())
        .expect(401);
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", scope="mcp:tools", ${RM}, Bearer realm="api", ${STEP_UP}, acr_values="${MFA}", scope="mcp:tools", ${RM}`,
      );
    });

    it.each([
      ['not an object', 'mfa', /requireVerifiedUser options must be an object/],
      ['an unknown option', { acrs: ['x'] }, /requireVerifiedUser has no option "acrs"/],
      ['acr not an array', { acr: MFA }, /option "acr" must be a non-empty array/],
      ['acr empty', { acr: [] }, /option "acr" must be a non-empty array/],
      ['acr with a quote', { acr: ['a"b'] }, /option "acr" must be a non-empty array/],
      ['maxAge not a duration', { maxAge: 'soon' }, /requireVerifiedUser maxAge/],
    ])('refuses route options %s with a TypeError when requireVerifiedUser is called', (_what, options, message) => {
      const auth = createTokenAuth(base);
      const call = () => auth.requireVerifiedUser(['mcp:tools'], options as never);
      expect(call).toThrow(TypeError);
      expect(call).toThrow(message);
    });
  });

  describe('DPoP', () => {
    let issuer: TestIssuer;
    let holder: DpopHolder;
    const servers: Listening[] = [];
    beforeAll(async () => {
      issuer = await createTestIssuer({ dpop: true, alg: 'ES256', audience: RESOURCE });
      holder = issuer.holder!;
    });
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((s) => s.close()));
    });

    async function serve(dpop: Record<string, unknown> = {}): Promise<string> {
      const { audience: _audience, ...options } = issuer.options;
      const app = appWith(
        express,
        { ...options, resource: RESOURCE, dpop },
        { path: '/mcp', scopes: ['identify'], answer: () => ({ ok: true }) },
      );
      const listening = await listen(app);
      servers.push(listening);
      return listening.origin;
    }

    it('carries resource_metadata and the scope in both challenges of a 401 without a token', async () => {
      const res = await request(await serve())
        .get('/mcp')
        .expect(401);
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", scope="identify", ${RM}, Bearer realm="api", scope="identify", ${RM}`,
      );
    });

    it("carries resource_metadata in a DPoP request's 401 and 403", async () => {
      const origin = await serve({ required: true });
      const token = issuer.sign({ scopes: [] });
      const forbidden = await request(origin)
        .get('/mcp')
        .set({ Authorization: `DPoP ${token}`, DPoP: holder.proof({ method: 'GET', url: RESOURCE, token }) })
        .expect(403);
      expect(forbidden.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", error="insufficient_scope", error_description="Insufficient scope", scope="identify", ${RM}`,
      );
      const badProof = await request(origin)
        .get('/mcp')
        .set({ Authorization: `DPoP ${token}` })
        .expect(401);
      expect(badProof.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", error="invalid_dpop_proof", error_description="Invalid DPoP proof", scope="identify", ${RM}`,
      );
    });
  });

  describe('scopesOf and the route guard', () => {
    it('scopesOf reads the configured scope claim, as a fresh array, empty for none', () => {
      const auth = createTokenAuth({ ...base, scopeClaim: 'scp' });
      const scopes = auth.scopesOf({ scp: 'a b', scope: 'c' });
      expect(scopes).toEqual(['a', 'b']);
      scopes.push('mutated');
      expect(auth.scopesOf({ scp: 'a b' })).toEqual(['a', 'b']);
      expect(auth.scopesOf({ scope: 'c' })).toEqual([]);
      expect(createTokenAuth(base).scopesOf({ scp: ['x', 'y'] })).toEqual(['x', 'y']);
    });

    it('verifies with a requirement picked per request, hands over claims and token, and keeps auth.claims(req)', async () => {
      const auth = createTokenAuth(base);
      const guard = routeGuard(auth);
      expect(guard.resource).toBe(RESOURCE);
      expect(guard.resourceMetadataUrl).toBe(METADATA);
      const requirements = {
        tools: guard.requirement(['mcp:tools']),
        admin: guard.requirement(['mcp:tools', 'mcp:admin']),
      };
      const app = express();
      app.post(
        '/mcp',
        guard.middleware(
          (req: Request) => (req.get('Mcp-Name') === 'admin' ? requirements.admin : requirements.tools),
          (req, verified) => {
            (req as unknown as { auth: unknown }).auth = { token: verified.token, sub: verified.claims.sub };
          },
        ),
        (req, res) => {
          res.json({ auth: req.auth, claims: auth.claims(req).sub });
        },
      );
      const token = sign(payload());
      const ok = await request(app)
        .post('/mcp')
        .set({ Authorization: `Bearer ${token}` })
        .expect(200);
      expect(ok.body).toEqual({ auth: { token, sub: 'user-1' }, claims: 'user-1' });
      const forbidden = await request(app)
        .post('/mcp')
        .set({ Authorization: `Bearer ${token}`, 'Mcp-Name': 'admin' })
        .expect(403);
      expect(forbidden.headers['www-authenticate']).toBe(
        `Bearer realm="api", error="insufficient_scope", scope="mcp:tools mcp:admin", ${RM}`,
      );
      const missing = await request(app).post('/mcp').set({ 'Mcp-Name': 'admin' }).expect(401);
      expect(missing.headers['www-authenticate']).toBe(`Bearer realm="api", scope="mcp:tools mcp:admin", ${RM}`);
    });

    it('answers a TokenAuthError thrown by pick, and a 500 for anything else it throws', async () => {
      const auth = createTokenAuth(base);
      const guard = routeGuard(auth);
      const app = express();
      app.post(
        '/bad',
        guard.middleware(
          () => {
            throw new TokenAuthError('invalid_request', { message: 'Unreadable JSON-RPC body' });
          },
          () => undefined,
        ),
      );
      app.post(
        '/bug',
        guard.middleware(
          () => {
            throw new Error('secret detail');
          },
          () => undefined,
        ),
      );
      await request(app).post('/bad').expect(400, { status: 'error', message: 'Unreadable JSON-RPC body' });
      await request(app).post('/bug').expect(500, { status: 'error', message: 'Internal server error' });
    });

    it('builds the 403 challenge of a requirement for a request, with the alternative the token holds', () => {
      const auth = createTokenAuth(base);
      const guard = routeGuard(auth);
      const requirement = guard.requirement({ all: ['mcp:tools'], any: ['mcp:admin', 'mcp:root'] });
      const req = { headers: {} } as Request;
      const err = guard.insufficientScope(
        req,
        requirement,
        auth.verify === undefined ? undefined : ({ scope: 'mcp:root' } as never),
      );
      expect(err.status).toBe(403);
      expect(err.code).toBe('insufficient_scope');
      expect(err.headers['WWW-Authenticate']).toBe(
        `Bearer realm="api", error="insufficient_scope", scope="mcp:tools mcp:root", ${RM}`,
      );
      expect(guard.insufficientScope(req, requirement).headers['WWW-Authenticate']).toContain(
        'scope="mcp:tools mcp:admin"',
      );
    });

    it('refuses an object createTokenAuth did not make', () => {
      expect(() => routeGuard({} as never)).toThrow(TypeError);
    });
  });
});

describe('requireVerifiedUser option errors name the option', () => {
  it.each([
    ['scopes', 'mcp:tools', undefined],
    ['scopes', ['a b'], undefined],
    ['scopes.all', { all: 'mcp:tools' }, undefined],
    ['scopes.one', { one: ['mcp:tools'] }, undefined],
    ['', ['mcp:tools'], 'mfa'],
    ['acrs', ['mcp:tools'], { acrs: ['x'] }],
    ['acr', ['mcp:tools'], { acr: [] }],
    ['maxAge', ['mcp:tools'], { maxAge: 'soon' }],
  ])('an OptionError at "%s"', (option, scopes, options) => {
    const auth = createTokenAuth(base);
    const err = optionErrorOf(() => auth.requireVerifiedUser(scopes as never, options as never));
    auth.close();
    expect(err.option).toBe(option);
  });
});
