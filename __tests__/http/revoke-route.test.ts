import type { Express, NextFunction, Request, Response } from 'express';
import request from 'supertest';
import { createTokenAuth } from '../../lib';
import type { RedisStore } from '../../lib/redis';
import { appRedisStore, useRedisServer } from '../fixtures/app-redis-client';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { within } from '../fixtures/fleet';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';

// A logout route that revokes the caller's token, as README and docs/fleet.md show it, through real Express 4 and 5
// and a real redis-server: 204 when stored; while Redis is paused, 503 JSON with Retry-After from errorHandler(),
// never Express's HTML page with a stack (issue 20).
jest.setTimeout(30_000);

const redis = useRedisServer();

const fleetStore = (): RedisStore =>
  appRedisStore('ioredis', redis.server.url, redis.cleanups, {
    prefix: `route${Math.random().toString(36).slice(2, 8)}:`,
    timeout: '300ms',
  });

describe.each(EXPRESS_VERSIONS)('a logout route that revokes the token, through %s', (name, express) => {
  async function app(): Promise<Express> {
    const store = fleetStore();
    const auth = createTokenAuth({ key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, revocation: store });
    const made = appWith(express, auth, {
      routes: (app) => {
        app.get('/me', auth.requireVerifiedUser(), (_req, res) => {
          res.json({ ok: true });
        });
        // The documented pattern, for Express 4 and 5 alike: a rejection goes to next(), errorHandler() renders it.
        app.post('/logout', auth.requireVerifiedUser(), (req: Request, res: Response, next: NextFunction) => {
          store.revoke(auth.claims(req)).then(() => res.sendStatus(204), next);
        });
        if (name === 'express 5') {
          // Express 5 also forwards an async handler's rejection to the error handler.
          app.post('/logout-async', auth.requireVerifiedUser(), async (req, res) => {
            await store.revoke(auth.claims(req));
            res.sendStatus(204);
          });
        }
      },
      errorHandler: true,
    });
    await within(5000, () => auth.stats().revocation?.loaded === true, 'the revocation list to load');
    return made;
  }
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('answers 204, and the token is refused from then on', async () => {
    const made = await app();
    const token = sign(shapeB());
    await request(made).get('/me').set(bearer(token)).expect(200);
    await request(made).post('/logout').set(bearer(token)).expect(204);
    await request(made).get('/me').set(bearer(token)).expect(401);
  });

  it('while Redis is paused, answers 503 JSON with Retry-After (the outcome is unknown: retry), never an HTML stack page', async () => {
    const made = await app();
    const routes = name === 'express 5' ? ['/logout', '/logout-async'] : ['/logout'];
    for (const route of routes) {
      redis.server.pause();
      const res = await request(made)
        .post(route)
        .set(bearer(sign(shapeB())));
      redis.server.resume();
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
      expect(res.text).not.toMatch(/<html|<pre|at .*\.(ts|js):\d+/i);
    }
  });
});
