// Drivers of docs/edge.md's code blocks (see __tests__/fixtures/doc-run.ts): each proxy's app runs against a loopback
// stand-in that serves its vendor's documented formats (fixtures/edge-proxies.ts) and is called with the proxy's
// header (200 with the claims), with no header and with the same token as Authorization (both 401).
import { createTokenAuth } from '../../lib';
import { call, excerpt, type DocDriver, type DocDrivers, type RunningBlock } from '../fixtures/doc-run';
import { startAwsAlb, startCloudflareAccess, startGoogleIap } from '../fixtures/edge-proxies';

const MISSING = { status: 'error', message: 'Missing access token' };

/**
 * `auth.ready()` lands with the other half of issue 25 (issuer templates, `tenants`, `ready()`); the blocks call it
 * as the page shows. Until this build has it, the type-check excuses the call and the run leaves it out; once it
 * has it, the blocks run it as written, so nothing here needs changing when the two halves meet.
 */
const probe = createTokenAuth({ key: { secret: 'r'.repeat(32) }, issuer: false, audience: false });
const HAS_READY = 'ready' in probe;
probe.close();
const READY_LINE = 'await auth.ready();';
const withReady: Pick<DocDriver, 'knownTypeErrors'> = HAS_READY
  ? {}
  : { knownTypeErrors: [{ code: 2339, line: READY_LINE, why: 'auth.ready() is not in this build yet' }] };
const readyRun = (replace: Record<string, string>) =>
  HAS_READY ? replace : { ...replace, [READY_LINE]: '/* auth.ready() is not in this build yet */' };

/** The proxy's header gets 200 and the claims; no header, or the token as Authorization, 401 missing_token. */
async function expectProtected(app: RunningBlock, header: string, token: string, claims: Record<string, unknown>) {
  const good = await call(`${app.origin}/me`, { headers: { [header]: token } });
  expect(good.status).toBe(200);
  expect(good.body).toEqual(claims);
  const none = await call(`${app.origin}/me`);
  expect([none.status, none.body]).toEqual([401, MISSING]);
  const bearer = await call(`${app.origin}/me`, { token });
  expect([bearer.status, bearer.body]).toEqual([401, MISSING]);
}

export const drivers: DocDrivers = {
  // The test keys' options against the loopback stand-in: its assertion (iss the team domain) gets 200, another 401.
  'edge-cloudflare-test-keys': {
    before: `import express from 'express';
import { createTokenAuth } from 'express-verified-user';
import { cloudflareAccess } from 'express-verified-user/edge';
const AUD_TAG = process.env.AUD_TAG!;
`,
    after: `const app = express();
app.get('/me', auth.requireVerifiedUser(), (req, res) => res.json({ iss: auth.claims(req).iss }));
app.listen(3000);
`,
    async run(t) {
      const cf = t.own(await startCloudflareAccess());
      const app = await t.serve({
        replace: { 'http://127.0.0.1:8787': cf.teamDomain },
        env: { AUD_TAG: cf.aud },
      });
      const team = 'https://acme.cloudflareaccess.com';
      const good = await call(`${app.origin}/me`, { headers: { 'Cf-Access-Jwt-Assertion': cf.mint({ iss: team }) } });
      expect([good.status, good.body]).toEqual([200, { iss: team }]);
      const stranger = await call(`${app.origin}/me`, { headers: { 'Cf-Access-Jwt-Assertion': cf.mint() } });
      expect(stranger.status).toBe(401);
    },
  },
  'edge-combine': excerpt(
    "import { cloudflareAccess } from 'express-verified-user/edge';\ndeclare const AUD_TAG: string;\n",
  ),
  'edge-cloudflare': {
    ...withReady,
    async run(t) {
      const cf = t.own(await startCloudflareAccess());
      const app = await t.serve({
        replace: readyRun({
          "'https://acme.cloudflareaccess.com'": `'${cf.teamDomain}'`,
          '9f0c2d6ab1e34e7d8a15c0b7f2d94e6c3a8b51d07e26f49c1b3d5a7e9f0c2d6a': cf.aud,
        }),
      });
      const token = cf.mint({ sub: '7335d417-61da-459d-899c-0a01c76a2f94' });
      await expectProtected(app, 'Cf-Access-Jwt-Assertion', token, {
        email: 'user@example.com',
        sub: '7335d417-61da-459d-899c-0a01c76a2f94',
      });
      const otherApp = await call(`${app.origin}/me`, {
        headers: { 'Cf-Access-Jwt-Assertion': cf.mint({ aud: ['0'.repeat(64)] }) },
      });
      expect(otherApp.status).toBe(401);
    },
  },
  'edge-iap': {
    ...withReady,
    async run(t) {
      const iap = t.own(await startGoogleIap());
      const app = await t.serve({
        replace: readyRun({
          "googleIap({ audience: '/projects/123456/global/backendServices/789' })": `googleIap({ audience: '${iap.audience}', jwksUri: '${iap.jwksUri}' })`,
        }),
      });
      await expectProtected(app, 'x-goog-iap-jwt-assertion', iap.mint(), {
        email: 'user@example.com',
        hd: 'example.com',
      });
      expect((await call(`${app.origin}/healthz`)).status).toBe(200);
    },
  },
  'edge-alb': {
    async run(t) {
      const alb = t.own(await startAwsAlb());
      const app = await t.serve({
        replace: { "clientId: 'orders',": `clientId: 'orders', keysBaseURL: '${alb.keysBaseURL}',` },
      });
      await expectProtected(app, 'x-amzn-oidc-data', alb.mint(), { sub: '6f7c2a3e-8d1b', email: 'user@example.com' });
      const otherAlb = alb.mint(
        {},
        {
          header: { signer: 'arn:aws:elasticloadbalancing:eu-west-1:210987654321:loadbalancer/app/x/0123456789abcdef' },
        },
      );
      expect((await call(`${app.origin}/me`, { headers: { 'x-amzn-oidc-data': otherAlb } })).status).toBe(401);
      expect(alb.fetches()).toBe(1);
    },
  },
};
