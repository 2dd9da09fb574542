// Drivers of docs/fleet.md's code blocks (see __tests__/fixtures/doc-run.ts): two instances of the page's app on
// one real redis-server.
import { call, type DocDrivers, type DocRun } from '../fixtures/doc-run';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';
import { startRedisServer } from '../fixtures/redis-server';
import { until } from '../fixtures/loopback-server';

/** A route only the test adds to each instance: it answers the caller's claims, and changes nothing. */
export const PROBE = `
app.get('/doc-test/me', auth.requireVerifiedUser(), (req, res) => {
  res.json(auth.claims(req));
});
`;

/** GET the probe with `token`: 200 while the instance accepts it, 401 once it knows it is revoked. */
export const probe = async (origin: string, token: string) => (await call(`${origin}/doc-test/me`, { token })).status;

/** Wait until an instance has loaded the fleet's revocation list (it answers 503 with Retry-After: 1 before). */
export async function loaded(origin: string): Promise<void> {
  await until(
    async () => (await probe(origin, sign(shapeB(undefined, { sub: 'probe' })))) === 200,
    `${origin} to load the revocation list`,
    200,
  );
}

/**
 * The page's app twice on one real redis-server, A on Express 5 and B on Express 4 (the express4 alias), each with
 * its revocation list loaded.
 */
async function twoInstances(t: DocRun) {
  const redis = t.own(await startRedisServer());
  const env = { REDIS_URL: redis.url, TOKEN_SECRET: SECRET };
  const express4 = { "require('express')": "require('express4')" };
  const [a, b] = await Promise.all([t.serve({ env }), t.serve({ env, replace: express4 })]);
  await Promise.all([loaded(a.origin), loaded(b.origin)]);
  return { a, b, redis };
}

export const drivers: DocDrivers = {
  // Subject and session rules: a user disabled through instance A (Express 5) is refused by B (Express 4), and a
  // session ended through B is refused by A, with the user's tokens without sid; nothing else is.
  'fleet-rules': {
    after: `${PROBE}
app.post('/doc-test/rules', express.json(), (req, res, next) => {
  const done = req.body.sid ? endSession(req.body.sid, req.body.sub) : disableUser(req.body.sub);
  done.then(() => res.sendStatus(204), next);
});
`,
    replace: { 'https://idp.example.com/realms/acme': ISSUER, "'orders-api'": `'${AUDIENCE}'` },
    async run(t) {
      const { a, b } = await twoInstances(t);
      const token = (claims: Record<string, unknown>) => sign(shapeB(Math.floor(Date.now() / 1000) - 60, claims));
      const alice = token({ sub: 'alice' });
      const [bobInSession, bobElsewhere, bobWithoutSid] = [
        token({ sub: 'bob', sid: 'session-1' }),
        token({ sub: 'bob', sid: 'session-2' }),
        token({ sub: 'bob' }),
      ];
      for (const t2 of [alice, bobInSession, bobElsewhere, bobWithoutSid]) expect(await probe(b.origin, t2)).toBe(200);

      const disable = await call(`${a.origin}/doc-test/rules`, { method: 'POST', body: { sub: 'alice' } });
      expect(disable.status).toBe(204);
      await until(async () => (await probe(b.origin, alice)) === 401, 'B to refuse the disabled user', 100);
      expect(await probe(b.origin, bobInSession)).toBe(200);

      const end = await call(`${b.origin}/doc-test/rules`, { method: 'POST', body: { sid: 'session-1', sub: 'bob' } });
      expect(end.status).toBe(204);
      await until(async () => (await probe(a.origin, bobInSession)) === 401, 'A to refuse the ended session', 100);
      expect(await probe(a.origin, bobWithoutSid)).toBe(401);
      expect(await probe(a.origin, bobElsewhere)).toBe(200);
      const orders = await call(`${a.origin}/orders`, { token: token({ sub: 'carol' }) });
      expect(orders).toMatchObject({ status: 200, body: { user: 'carol' } });
    },
  },
  // A logout on one instance (Express 5) is refused by the other (Express 4), which never saw it; so is a token
  // revoked by jti and exp (revokeToken, through a route only the test adds); with Redis down, logout is 503 JSON
  // with Retry-After.
  'fleet-revocation': {
    after: `${PROBE}
app.post('/doc-test/revoke', express.json(), (req, res, next) => {
  revokeToken(req.body.jti, req.body.exp).then(() => res.sendStatus(204), next);
});
`,
    replace: { "issuer: '…', audience: '…'": `issuer: '${ISSUER}', audience: '${AUDIENCE}'` },
    async run(t) {
      // "Express 4 and 5 alike": instance A on Express 5, instance B on Express 4 (the express4 alias).
      const { a, b, redis } = await twoInstances(t);

      const first = sign(shapeB());
      expect(await probe(b.origin, first)).toBe(200);
      expect((await call(`${a.origin}/logout`, { method: 'POST', token: first })).status).toBe(204);
      await until(async () => (await probe(b.origin, first)) === 401, 'B to refuse the token A revoked', 100);
      const again = await call(`${b.origin}/logout`, { method: 'POST', token: first });
      expect(again.status).toBe(401);
      expect(again.body).toEqual({ status: 'error', message: 'Invalid access token' });

      const claims = shapeB();
      const second = sign(claims);
      expect(await probe(a.origin, second)).toBe(200);
      const body = { jti: claims.jti, exp: claims.exp };
      expect((await call(`${b.origin}/doc-test/revoke`, { method: 'POST', body })).status).toBe(204);
      await until(async () => (await probe(a.origin, second)) === 401, 'A to refuse the token revoked by jti', 100);

      await redis.stop();
      const down = await call(`${a.origin}/logout`, { method: 'POST', token: sign(shapeB()) });
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('1');
      expect(down.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    },
  },
};
