// The one route guard (lib/http/guard.ts) through every middleware built on it, in real Express 4 and 5 apps:
// a CORS preflight passes each of them untouched, a verdict given at once and one given later both reach next()
// exactly once, and a route's own function (pick, accept) that throws is answered, a 500 keeping its cause.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import request from 'supertest';
import { createTokenAuth, TokenAuthError, type TokenAuthOptions } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { routeGuard } from '../../lib/token-auth';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };
const PREFLIGHT = { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' };
const INTERNAL = { status: 'error', message: 'Internal server error' };

/** Every middleware built on the guard, as an app mounts it in front of a route. */
type Guarded = (auth: ReturnType<typeof createTokenAuth>) => RequestHandler;
const USERS: Array<[string, Guarded]> = [
  ['requireVerifiedUser', (auth) => auth.requireVerifiedUser(['identify'])],
  ['optionalVerifiedUser', (auth) => auth.optionalVerifiedUser()],
  ['the verify endpoint', (auth) => auth.verifyRouter()],
  ['requireMcpAuth', (auth) => requireMcpAuth(auth, { scopes: ['identify'], tools: { admin: ['google'] } })],
  [
    'routeGuard(auth).middleware',
    (auth) => {
      const guard = routeGuard(auth);
      const requirement = guard.requirement(['identify']);
      return guard.middleware(
        () => requirement,
        () => undefined,
      );
    },
  ],
];

/** Let every callback queued by the request run (a second next() would come by then). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe.each(EXPRESS_VERSIONS)('the route guard through %s', (_name, express) => {
  describe.each(USERS)('%s', (user, guarded) => {
    it('passes a CORS preflight to the next handler unauthenticated, and answers a plain OPTIONS', async () => {
      const auth = createTokenAuth(base);
      const app = express();
      app.options('/auth/@users/verify', guarded(auth), (_req, res) => {
        res.status(204).setHeader('X-Preflight', 'passed').end();
      });
      // A bad credential, so that even optionalVerifiedUser would refuse the request if it looked.
      const badToken = { Authorization: 'Bearer not.a.token' };
      const res = await request(app)
        .options('/auth/@users/verify')
        .set({ ...PREFLIGHT, ...badToken })
        .expect(204);
      expect(res.headers['x-preflight']).toBe('passed');
      expect(res.headers['cache-control']).toBeUndefined();
      expect(res.headers['www-authenticate']).toBeUndefined();
      // Not a preflight: the guard answers (401 invalid_token; the verify endpoint's 405 comes first).
      const plain = await request(app)
        .options('/auth/@users/verify')
        .set({ Origin: 'https://app.example.com', ...badToken });
      expect(plain.headers['x-preflight']).toBeUndefined();
      expect(plain.status).toBe(user === 'the verify endpoint' ? 405 : 401);
    });
  });

  describe('a verdict given at once or later', () => {
    // A static key and no async hook: the verdict is in hand synchronously. An async isRevoked makes it a promise.
    const VERDICTS: Array<[string, Partial<TokenAuthOptions>]> = [
      ['at once', {}],
      ['later', { isRevoked: async () => false }],
    ];

    describe.each(VERDICTS)('given %s', (_when, options) => {
      /** An app whose guard's next() is counted as the guard calls it (Express would route a second call onward). */
      function countingApp(middleware: (auth: ReturnType<typeof createTokenAuth>) => RequestHandler) {
        const auth = createTokenAuth({ ...base, ...options });
        const guarded = middleware(auth);
        const app = express();
        const calls = { next: 0 };
        const counted: RequestHandler = (req, res, next) =>
          guarded(req, res, (err?: unknown) => {
            calls.next++;
            next(err);
          });
        app.use(counted, (req: Request, res: Response) => {
          // auth.claims(req) answers for every user, MCP's AuthInfo on req.auth included; missing_token for none.
          let sub: unknown = null;
          try {
            sub = auth.claims(req).sub;
          } catch (err) {
            if (!(err instanceof TokenAuthError && err.code === 'missing_token')) throw err;
          }
          if (!res.headersSent) res.json({ sub });
        });
        return { app, calls };
      }
      const signed = sign(shapeB(NOW, { sub: 'user-1' }));
      /** The same token three times: verified, then admitted to the cache, then a cache hit. */
      async function threeTimes(app: ReturnType<typeof countingApp>['app']) {
        for (let i = 0; i < 3; i++) {
          await request(app)
            .get('/me')
            .set({ Authorization: `Bearer ${signed}` })
            .expect(200, { sub: 'user-1' });
        }
        await settled();
      }

      it.each(USERS.filter(([user]) => user !== 'the verify endpoint'))(
        '%s calls next() exactly once',
        async (_user, guarded) => {
          const { app, calls } = countingApp(guarded);
          await threeTimes(app);
          expect(calls.next).toBe(3);
        },
      );

      it('optionalVerifiedUser calls next() once for a request without a token', async () => {
        const { app, calls } = countingApp((auth) => auth.optionalVerifiedUser());
        await request(app).get('/me').expect(200, { sub: null });
        await settled();
        expect(calls.next).toBe(1);
      });

      it('the verify endpoint answers once and never calls next()', async () => {
        const { app, calls } = countingApp((auth) => auth.verifyRouter());
        for (let i = 0; i < 3; i++) {
          const res = await request(app)
            .get('/auth/@users/verify')
            .set({ Authorization: `Bearer ${signed}` })
            .expect(200);
          expect(res.body.sub).toBe('user-1');
          expect(res.headers['cache-control']).toBe('no-store');
        }
        await settled();
        expect(calls.next).toBe(0);
      });

      it('hands the access token and the claims to accept, once per request', async () => {
        const seen: Array<{ token: string; sub: unknown }> = [];
        const { app, calls } = countingApp((auth) => {
          const guard = routeGuard(auth);
          const requirement = guard.requirement(['identify']);
          return guard.middleware(
            () => requirement,
            (_req, verified) => {
              seen.push({ token: verified.token, sub: verified.claims.sub });
            },
          );
        });
        await threeTimes(app);
        expect(seen).toEqual([1, 2, 3].map(() => ({ token: signed, sub: 'user-1' })));
        expect(calls.next).toBe(3);
      });
    });
  });

  describe("a route's own function that throws", () => {
    const thrown = new Error('secret detail');
    type Hooks = Parameters<ReturnType<typeof routeGuard>['middleware']>;
    // A requirement is parsed alone (no TokenAuth state): one for every app here.
    const anyToken = routeGuard(createTokenAuth(base)).requirement();
    const HOOKS: Array<[string, Hooks[0], Hooks[1]]> = [
      [
        'pick',
        () => {
          throw thrown;
        },
        () => undefined,
      ],
      [
        'accept',
        () => anyToken,
        () => {
          throw thrown;
        },
      ],
    ];

    function appWith(options: Partial<TokenAuthOptions>, pick: Hooks[0], accept: Hooks[1]) {
      const reported: TokenAuthError[] = [];
      const auth = createTokenAuth({ ...base, ...options, onError: (err) => reported.push(err) });
      const app = express();
      let reached = 0;
      app.get('/me', routeGuard(auth).middleware(pick, accept), (_req, res) => {
        reached++;
        res.json({ reached });
      });
      return { app, reported, reachedCount: () => reached };
    }
    const bearer = () => ({ Authorization: `Bearer ${sign(shapeB(NOW))}` });

    it.each(HOOKS)('%s: a bare 500, its cause kept for onError', async (_hook, pick, accept) => {
      const { app, reported, reachedCount } = appWith({}, pick, accept);
      const res = await request(app).get('/me').set(bearer()).expect(500, INTERNAL);
      expect(res.text).not.toContain('secret detail');
      expect(reported).toHaveLength(1);
      expect(reported[0].code).toBe('internal');
      expect(reported[0].status).toBe(500);
      expect(reported[0].cause).toBe(thrown);
      expect(reachedCount()).toBe(0);
    });

    it.each(HOOKS)("%s: with errors: 'next', next(err) gets the 500 with its cause", async (_hook, pick, accept) => {
      const { app } = appWith({ errors: 'next' }, pick, accept);
      const forwarded: unknown[] = [];
      app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
        forwarded.push(err);
        res.status(599).json({ forwarded: true });
      });
      await request(app).get('/me').set(bearer()).expect(599, { forwarded: true });
      expect(forwarded).toHaveLength(1);
      expect(forwarded[0]).toBeInstanceOf(TokenAuthError);
      expect((forwarded[0] as TokenAuthError).code).toBe('internal');
      expect((forwarded[0] as TokenAuthError).cause).toBe(thrown);
    });

    it('accept: a TokenAuthError it throws is the answer, its challenge as given', async () => {
      const { app, reported } = appWith(
        {},
        () => anyToken,
        () => {
          throw new TokenAuthError('invalid_request', { message: 'Unreadable JSON-RPC body' });
        },
      );
      await request(app).get('/me').set(bearer()).expect(400, { status: 'error', message: 'Unreadable JSON-RPC body' });
      expect(reported.map((err) => err.code)).toEqual(['invalid_request']);
    });

    it('neither runs for a CORS preflight', async () => {
      let called = 0;
      const auth = createTokenAuth(base);
      const preflightApp = express();
      preflightApp.options(
        '/me',
        routeGuard(auth).middleware(
          () => {
            called++;
            throw thrown;
          },
          () => {
            called++;
          },
        ),
        (_req, res) => {
          res.status(204).end();
        },
      );
      await request(preflightApp).options('/me').set(PREFLIGHT).expect(204);
      expect(called).toBe(0);
    });
  });
});
