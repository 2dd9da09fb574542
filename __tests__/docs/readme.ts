// Drivers of README.md's code blocks (see __tests__/fixtures/doc-run.ts).
import { startAuthorizationServer } from '../fixtures/authorization-server';
import { call, excerpt, type DocDrivers } from '../fixtures/doc-run';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';
import { until } from '../fixtures/loopback-server';
import { startRedisServer } from '../fixtures/redis-server';
import { authorizationServer, callTool, expectProtectedResource, token } from './mcp';
import { loaded, probe, PROBE } from './fleet';
import { YOUR_APP } from './testing';

export const drivers: DocDrivers = {
  // The 10-line example against oidc-provider: discovery, then 401 without a token, 200 with the claims, 403 short.
  'readme-quick-start': {
    async run(t) {
      const as = t.own(
        await startAuthorizationServer({
          resource: 'https://api.example.com',
          scopes: ['read:profile', 'write', 'orders:write'],
          // Tokens granted read:profile carry the admin role, as an authorization server's role mapping would.
          extraClaimsByScope: { 'read:profile': { roles: ['admin'] } },
        }),
      );
      const app = await t.serve({ replace: { "'https://tenant.example.com/'": `'${as.issuer}/'` } });
      const none = await call(`${app.origin}/me`);
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ status: 'error', message: 'Missing access token' });
      const good = await call(`${app.origin}/me`, { token: await as.token({ scope: 'read:profile' }) });
      expect(good.status).toBe(200);
      expect(good.body).toMatchObject({ iss: as.issuer, aud: 'https://api.example.com', scope: 'read:profile' });
      const short = await call(`${app.origin}/me`, { token: await as.token({ scope: 'write' }) });
      expect(short.status).toBe(403);
      expect(short.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="read:profile"/);
      // A URL that is no issuer stops the app at `await auth.ready()`, before it listens: no user finds it.
      const wrong = t.serve({ replace: { "'https://tenant.example.com/'": `'${as.issuer}/no-such-tenant/'` } });
      await expect(wrong).rejects.toThrow(/exited \(1\) before it listened/);
      // The roles route: its scope and the admin role; a token with the scope and no role is 403 forbidden.
      const admin = await as.token({ scope: 'orders:write read:profile' });
      expect((await call(`${app.origin}/orders/7`, { method: 'DELETE', token: admin })).status).toBe(204);
      const noRole = await call(`${app.origin}/orders/7`, {
        method: 'DELETE',
        token: await as.token({ scope: 'orders:write' }),
      });
      expect(noRole.status).toBe(403);
      expect(noRole.body).toEqual({ status: 'error', message: 'Forbidden' });
      expect(noRole.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    },
  },
  'readme-shape-b-options': excerpt(),
  // The MCP lines, in an app whose handler answers the AuthInfo it got: the same gate as docs/mcp.md's server.
  'readme-mcp': {
    before: `import express from 'express';
import { createTokenAuth } from 'express-verified-user';
const issuerBaseURL = 'https://as.example.com';
const app = express();
const mcpHandler: express.RequestHandler = (req, res) => {
  res.json({ clientId: req.auth?.clientId, scopes: req.auth?.scopes });
};
`,
    after: 'app.listen(3000);\n',
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const server = await t.serve(run);
      await expectProtectedResource(server.origin, as.issuer);
      const whoami = await callTool(server.origin, 'whoami', await token(as, 'mcp:tools'));
      expect(whoami.status).toBe(200);
      expect(whoami.body).toEqual({ clientId: 'docs-client', scopes: ['mcp:tools'] });
      const refused = await callTool(server.origin, 'reindex', await token(as, 'mcp:tools'));
      expect(refused.status).toBe(403);
      expect(refused.headers.get('www-authenticate')).toContain(
        'error="insufficient_scope", scope="mcp:tools mcp:admin"',
      );
    },
  },
  // The fleet lines in two instances on one redis-server: a logout on one is refused by the other, which never saw it.
  'readme-fleet': {
    before: `import express from 'express';
import { createClient } from 'redis';
import { createTokenAuth, errorHandler } from 'express-verified-user';
const redisClient = createClient({ url: process.env.REDIS_URL });
redisClient.on('error', () => undefined);
await redisClient.connect();
const options = { key: { secret: process.env.TOKEN_SECRET! }, issuer: '${ISSUER}', audience: '${AUDIENCE}' };
const app = express();
`,
    after: `${PROBE}app.listen(3000);\n`,
    async run(t) {
      const redis = t.own(await startRedisServer());
      const env = { REDIS_URL: redis.url, TOKEN_SECRET: SECRET };
      const [a, b] = await Promise.all([t.serve({ env }), t.serve({ env })]);
      await Promise.all([loaded(a.origin), loaded(b.origin)]);
      const token = sign(shapeB());
      expect(await probe(b.origin, token)).toBe(200);
      expect((await call(`${a.origin}/logout`, { method: 'POST', token })).status).toBe(204);
      await until(async () => (await probe(b.origin, token)) === 401, 'B to refuse the token A revoked', 100);
    },
  },
  // The test lines as a script: its request(...).expect(200) rejects, and the script fails, unless /me answers 200.
  'readme-testing': {
    before: `import request from 'supertest';
import { createTokenAuth } from 'express-verified-user';
import { buildApp } from './src/app.mjs';
`,
    files: YOUR_APP,
    async run(t) {
      await t.script();
    },
  },
};
