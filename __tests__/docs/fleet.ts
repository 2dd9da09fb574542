// Drivers of docs/fleet.md's code blocks (see __tests__/fixtures/doc-run.ts): two instances of the page's app on
// one real redis-server.
import { call, type DocDrivers } from '../fixtures/doc-run';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';
import { startRedisServer } from '../fixtures/redis-server';
import { until } from '../fixtures/loopback-server';

export const drivers: DocDrivers = {
  // A logout on one instance is refused by the other; so is a token revoked by jti and exp (revokeToken, reached
  // through a route only the test adds); with Redis down, logout is 503 JSON with Retry-After.
  'fleet-revocation': {
    after: `
app.post('/doc-test/revoke', express.json(), (req, res, next) => {
  revokeToken(req.body.jti, req.body.exp).then(() => res.sendStatus(204), next);
});
`,
    replace: { "issuer: '…', audience: '…'": `issuer: '${ISSUER}', audience: '${AUDIENCE}'` },
    knownTypeErrors: [
      {
        code: 2345,
        line: 'store.revoke(auth.claims(req))',
        why:
          'lib/token/claim-modes.ts ClaimsOf: without strictNullChecks (JavaScript, or TypeScript without strict) ' +
          '`undefined extends ClaimsMode` holds, so auth.claims(req) is typed Readonly<unknown> when no claims mode is given',
      },
    ],
    async run(t) {
      const redis = t.own(await startRedisServer());
      const env = { REDIS_URL: redis.url, TOKEN_SECRET: SECRET };
      const [a, b] = await Promise.all([t.serve({ env }), t.serve({ env })]);
      const logout = (origin: string, token: string) => call(`${origin}/logout`, { method: 'POST', token });
      const refused = async (origin: string, token: string) => (await logout(origin, token)).status === 401;

      const first = sign(shapeB());
      expect((await logout(a.origin, first)).status).toBe(204);
      await until(() => refused(b.origin, first), 'instance B to refuse the token A revoked', 100);
      const again = await logout(b.origin, first);
      expect(again.body).toEqual({ status: 'error', message: 'Invalid access token' });

      const claims = shapeB();
      const second = sign(claims);
      const revoked = await call(`${b.origin}/doc-test/revoke`, {
        method: 'POST',
        body: { jti: claims.jti, exp: claims.exp },
      });
      expect(revoked.status).toBe(204);
      await until(() => refused(a.origin, second), 'instance A to refuse the token revoked by jti', 100);

      await redis.stop();
      const down = await logout(a.origin, sign(shapeB()));
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('1');
      expect(down.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    },
  },
};
