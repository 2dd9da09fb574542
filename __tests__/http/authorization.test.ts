// requireVerifiedUser's route requirements (docs/authorization.md) through real Express 4 and 5 apps: each kind met
// and not met, the 403 `forbidden` answer and its challenge, the order of checks, `allow` in every form, and the
// verdict cache left alone (requirements are checked per request, after it).
import type { Express, Request } from 'express';
import request from 'supertest';
import {
  createTokenAuth,
  errorHandler,
  TokenAuthError,
  type RouteOptions,
  type ScopeRequirementInput,
  type TokenAuthOptions,
} from '../../lib';
import { EXPRESS_VERSIONS, jwtOptions, type ExpressFactory } from '../fixtures/express';
import { ISSUER, jwtToken } from '../fixtures/issuer';

const base: TokenAuthOptions = jwtOptions([], { issuer: [ISSUER, 'https://second.example'], onError: undefined });

/** A 'jwt' mode token from the fixtures' issuer, with these claims added. */
const token = (extra: Record<string, unknown> = {}) => jwtToken({ sub: 'alice', scope: 'read', ...extra });

const FORBIDDEN = { status: 'error', message: 'Forbidden' };

describe.each(EXPRESS_VERSIONS)('route requirements through %s', (_name, express: ExpressFactory) => {
  const refusals: TokenAuthError[] = [];
  beforeEach(() => {
    refusals.length = 0;
  });

  /** GET /r behind requireVerifiedUser(scopes, options), answering { sub }; refusals collected from onError. */
  function appFor(options: RouteOptions, scopes: ScopeRequirementInput = [], extra: Partial<TokenAuthOptions> = {}) {
    const auth = createTokenAuth({ ...base, onError: (err) => refusals.push(err), ...extra });
    const app: Express = express();
    app.get('/r', auth.requireVerifiedUser(scopes, options), (req, res) => {
      res.json({ sub: auth.claims(req).sub });
    });
    return app;
  }

  const call = (app: Express, claims: Record<string, unknown>) =>
    request(app)
      .get('/r')
      .set('Authorization', `Bearer ${token(claims)}`);

  /** The answer is the forbidden refusal: 403, its body, a challenge with no error, `reason` on the error. */
  async function expectForbidden(app: Express, claims: Record<string, unknown>, reason: string) {
    const res = await call(app, claims);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    expect(refusals.map((err) => [err.code, err.reason])).toEqual([['forbidden', reason]]);
    return refusals[0];
  }

  describe('roles, permissions and groups', () => {
    it.each([
      ['roles', 'roles', 'role'],
      ['permissions', 'permissions', 'permission'],
      ['groups', 'groups', 'group'],
    ] as const)('%s as an array: all of them are needed', async (field, claim, reason) => {
      const app = appFor({ [field]: ['a', 'b'] });
      expect((await call(app, { [claim]: ['b', 'x', 'a'] })).status).toBe(200);
      await expectForbidden(app, { [claim]: ['a'] }, reason);
    });

    it('{ any }: one of them is enough', async () => {
      const app = appFor({ roles: { any: ['admin', 'ops'] } });
      expect((await call(app, { roles: ['ops'] })).status).toBe(200);
      await expectForbidden(app, { roles: ['viewer'] }, 'role');
    });

    it('{ all, any }: every `all` value and one `any` value', async () => {
      const app = appFor({ permissions: { all: ['orders:read'], any: ['orders:write', 'orders:admin'] } });
      expect((await call(app, { permissions: ['orders:read', 'orders:admin'] })).status).toBe(200);
      await expectForbidden(app, { permissions: ['orders:admin'] }, 'permission');
      refusals.length = 0;
      await expectForbidden(app, { permissions: ['orders:read'] }, 'permission');
    });

    it('a single string is one value; SCIM objects count by their string value (RFC 7643 §2.4)', async () => {
      const app = appFor({ roles: ['admin'] });
      expect((await call(app, { roles: 'admin' })).status).toBe(200);
      const scim = [{ value: 'admin', display: 'Administrators', primary: true }, { value: 'user' }];
      expect((await call(app, { roles: scim })).status).toBe(200);
    });

    it('reads roleClaim, groupClaim and permissionClaim where they say', async () => {
      const app = appFor({ roles: ['admin'], groups: ['staff'], permissions: ['p'] }, [], {
        roleClaim: ['realm_access', 'roles'],
        groupClaim: 'cognito:groups',
        permissionClaim: (claims) => (claims.perms as string[] | undefined)?.map((p) => p.toLowerCase()),
      });
      const good = { realm_access: { roles: ['admin'] }, 'cognito:groups': ['staff'], perms: ['P'] };
      expect((await call(app, good)).status).toBe(200);
      // The defaults are not read once another claim is named.
      await expectForbidden(app, { ...good, realm_access: {}, roles: ['admin'] }, 'role');
    });
  });

  describe('claims', () => {
    it('a string, a number and a boolean, each equal', async () => {
      const app = appFor({ claims: { tid: 'tenant-1', level: 3, email_verified: true } });
      expect((await call(app, { tid: 'tenant-1', level: 3, email_verified: true })).status).toBe(200);
      await expectForbidden(app, { tid: 'tenant-1', level: '3', email_verified: true }, 'claim');
      refusals.length = 0;
      await expectForbidden(app, { tid: 'tenant-1', level: 3, email_verified: 'true' }, 'claim');
    });

    it('one of an array of values; a claim that is an array must contain one', async () => {
      const app = appFor({ claims: { tid: ['tenant-1', 'tenant-2'] } });
      expect((await call(app, { tid: 'tenant-2' })).status).toBe(200);
      expect((await call(app, { tid: ['other', 'tenant-1'] })).status).toBe(200);
      await expectForbidden(app, { tid: ['other'] }, 'claim');
      refusals.length = 0;
      await expectForbidden(app, {}, 'claim');
    });
  });

  describe('issuers', () => {
    it('takes only the listed issuers of a TokenAuth that accepts several', async () => {
      const app = appFor({ issuers: 'https://second.example' });
      expect((await call(app, { iss: 'https://second.example' })).status).toBe(200);
      await expectForbidden(app, {}, 'issuer');
      // The other route of the same TokenAuth takes both.
      expect((await call(appFor({}), {})).status).toBe(200);
    });
  });

  describe('allow', () => {
    const allowApp = (allow: NonNullable<RouteOptions['allow']>) => appFor({ allow });

    it('true passes; false refuses with reason policy; its claims and the request are the route’s', async () => {
      const seen: unknown[] = [];
      const app = allowApp((claims, req: Request) => {
        seen.push([claims.sub, req.path]);
        return claims.sub === 'alice';
      });
      expect((await call(app, {})).status).toBe(200);
      await expectForbidden(app, { sub: 'mallory' }, 'policy');
      expect(seen).toEqual([
        ['alice', '/r'],
        ['mallory', '/r'],
      ]);
    });

    it('an async answer, true or false', async () => {
      expect(
        (
          await call(
            allowApp(async () => true),
            {},
          )
        ).status,
      ).toBe(200);
      await expectForbidden(
        allowApp(async () => false),
        {},
        'policy',
      );
    });

    it('anything but true refuses', async () => {
      await expectForbidden(allowApp((() => 'yes') as unknown as () => boolean), {}, 'policy');
    });

    it.each([
      [
        'throws',
        () => {
          throw new Error('db password is hunter2');
        },
      ],
      ['rejects', () => Promise.reject(new Error('db password is hunter2'))],
    ])('that %s is a 500 internal whose text reaches no answer', async (_how, allow) => {
      const res = await call(allowApp(allow as () => boolean | Promise<boolean>), {});
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ status: 'error', message: 'Internal server error' });
      expect(res.text).not.toContain('hunter2');
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(refusals.map((err) => [err.code, err.reason])).toEqual([['internal', 'allow-threw']]);
      expect((refusals[0].cause as Error).message).toBe('db password is hunter2');
    });
  });

  describe('order and answers', () => {
    it('scopes first (403 insufficient_scope with its challenge), then step-up, then the requirements; allow last', async () => {
      let allowed = 0;
      const app = appFor(
        {
          acr: ['urn:mfa'],
          roles: ['admin'],
          allow: () => {
            allowed += 1;
            return true;
          },
        },
        ['write'],
      );
      const scoped = await call(app, { acr: 'urn:mfa', roles: [] });
      expect(scoped.status).toBe(403);
      expect(scoped.headers['www-authenticate']).toBe('Bearer realm="api", error="insufficient_scope", scope="write"');
      expect((await call(app, { scope: 'write', roles: ['admin'] })).status).toBe(401);
      refusals.length = 0;
      await expectForbidden(app, { scope: 'write', acr: 'urn:mfa', roles: [] }, 'role');
      expect(allowed).toBe(0);
      expect((await call(app, { scope: 'write', acr: 'urn:mfa', roles: ['admin'] })).status).toBe(200);
      expect(allowed).toBe(1);
    });

    it('in SPEC order: roles, permissions, groups, claims, authorization details, issuers', async () => {
      const app = appFor({
        roles: ['r'],
        permissions: ['p'],
        groups: ['g'],
        claims: { tid: 't' },
        authorizationDetails: { type: 'x' },
        issuers: ['https://second.example'],
      });
      const all = { roles: ['r'], permissions: ['p'], groups: ['g'], tid: 't', authorization_details: [{ type: 'x' }] };
      const steps: Array<[string, Record<string, unknown>]> = [
        ['role', {}],
        ['permission', { roles: ['r'] }],
        ['group', { roles: ['r'], permissions: ['p'] }],
        ['claim', { roles: ['r'], permissions: ['p'], groups: ['g'] }],
        ['authorization-details', { roles: ['r'], permissions: ['p'], groups: ['g'], tid: 't' }],
        ['issuer', all],
      ];
      for (const [reason, claims] of steps) {
        refusals.length = 0;
        await expectForbidden(app, claims, reason);
      }
      expect((await call(app, { ...all, iss: 'https://second.example' })).status).toBe(200);
    });

    it('with `resource`, the challenge names resource_metadata and still no error', async () => {
      const app = appFor({ roles: ['admin'] }, [], { audience: undefined, resource: 'https://api.example/orders' });
      const res = await call(app, { aud: 'https://api.example/orders' });
      expect(res.status).toBe(403);
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="api", resource_metadata="https://api.example/.well-known/oauth-protected-resource/orders"',
      );
    });

    it("with errors: 'next', the refusal goes to next(err) and the package's errorHandler answers it alike", async () => {
      const auth = createTokenAuth({ ...base, errors: 'next' });
      const app = express();
      app.get('/r', auth.requireVerifiedUser([], { roles: ['admin'] }), (_req, res) => {
        res.json({});
      });
      app.use(errorHandler());
      const res = await call(app, {});
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    });
  });

  describe('the verdict cache is left alone', () => {
    it('one token, cached once, meets one route and not another, and allow runs on every request', async () => {
      let asked = 0;
      const auth = createTokenAuth({ ...base, onError: (err) => refusals.push(err) });
      const app = express();
      const ok = (_req: Request, res: import('express').Response) => {
        res.json({});
      };
      app.get('/plain', auth.requireVerifiedUser(), ok);
      app.get('/admin', auth.requireVerifiedUser([], { roles: ['admin'] }), ok);
      app.get('/asked', auth.requireVerifiedUser([], { allow: () => ++asked > 0 }), ok);
      const bearer = `Bearer ${token({ roles: ['user'] })}`;
      for (let i = 0; i < 3; i++) {
        expect((await request(app).get('/plain').set('Authorization', bearer)).status).toBe(200);
        expect((await request(app).get('/admin').set('Authorization', bearer)).status).toBe(403);
        expect((await request(app).get('/asked').set('Authorization', bearer)).status).toBe(200);
      }
      expect(asked).toBe(3);
      expect(auth.stats().hits).toBeGreaterThan(0);
    });
  });

  describe('hints', () => {
    it("a scope refusal names every alternative of { all, any }, the route's, and where scopes were read", async () => {
      const app = appFor({}, { all: ['orders:read'], any: ['orders:write', 'orders:admin', 'root'] });
      expect((await call(app, { scope: 'orders:read' })).status).toBe(403);
      expect(refusals[0].hint).toBe(
        'expected scope "orders:read" and one of scopes "orders:write", "orders:admin" or "root" of the route (requireVerifiedUser\'s scopes), read from claim "scope", "scp" or "scopes" (option "scopeClaim")',
      );
    });

    it('a requirement refusal names what the route requires and where it was read; the token by shape and count only', async () => {
      const app = appFor({ roles: { all: ['admin'], any: ['eu', 'us'] }, claims: { tid: ['t-1', 't-2'] } });
      const refused = await expectForbidden(app, { roles: ['secret-role-a', 'secret-role-b', 'eu'] }, 'role');
      expect(refused.hint).toBe(
        'expected role "admin" and one of roles "eu" or "us" of the route (requireVerifiedUser option "roles"), read from claim "roles" (option "roleClaim"); the token\'s value is an array of 3 values',
      );
      refusals.length = 0;
      const claim = await expectForbidden(app, { roles: ['admin', 'us'], tid: 'secret-tenant' }, 'claim');
      expect(claim.hint).toBe(
        'expected claim "tid" equal to "t-1" or "t-2" (or, as an array, containing it) of the route (requireVerifiedUser option "claims"); the token\'s claim is a string that differs',
      );
      expect(`${refused.hint}${claim.hint}`).not.toMatch(/secret/);
    });
  });

  it('optionalVerifiedUser takes no requirements: a token without roles passes', async () => {
    const auth = createTokenAuth(base);
    const app = express();
    app.get('/o', auth.optionalVerifiedUser(), (req, res) => {
      res.json({ sub: (req.auth as { sub?: unknown } | undefined)?.sub ?? null });
    });
    const res = await request(app).get('/o').set('Authorization', `Bearer ${token()}`);
    expect(res.body).toEqual({ sub: 'alice' });
  });
});
