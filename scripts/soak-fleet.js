'use strict';
/**
 * `npm run soak -- --fleet`: three instances of an Express app (separate processes, __tests__/fixtures/fleet-app.js
 * on the compiled package; Express 5, 4 and 5; node-redis, ioredis and node-redis) share a real redis-server
 * started here on 127.0.0.1. autocannon drives all three at once while tokens are revoked during the run, and
 * every answer is checked:
 *
 * - valid tokens → 200; tokens revoked before the run → 401; forged tokens → 401;
 * - tokens revoked during the run → 200 only if the request was sent before the revocation was stored plus 1 s
 *   (the propagation bound of docs/fleet.md), 401 only if it was sent after the revocation started.
 *
 * Passes with 0 wrong answers, 0 5xx and no connection errors; prints the figures.
 *
 *   npm run soak -- --fleet --seconds 20 --connections 24
 */
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const autocannon = require('autocannon');
const { option, compilePackage, signHs256, range } = require('./load-common');

require('./ts-register');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');
const { startInstance, stopAllInstances, within } = require('../__tests__/fixtures/fleet');

const seconds = option('seconds', 20);
const connections = option('connections', 24);
const secret = randomBytes(48).toString('base64url');
const now = Math.floor(Date.now() / 1000);
const PROPAGATION_MS = 1000;

function token(jti, key = secret) {
  const exp = now + 3600 + seconds;
  return {
    jti,
    exp,
    token: signHs256(
      {
        iss: 'auth.example.com',
        aud: 'api.example.com',
        iat: now - 60,
        exp,
        jti,
        scopes: ['identify'],
        providers: {},
        metadata: { createdAt: new Date((now - 60) * 1000).toISOString(), authorizer: 'soak' },
        sub: null,
      },
      key,
    ),
  };
}
const INVALID = '{"status":"error","message":"Invalid access token"}';

async function main() {
  const DIST = compilePackage();
  const redis = await startRedisServer();
  const { createClient } = require('redis');
  const { createRedisStore } = require(path.join(DIST, 'redis'));
  const admin = createClient({ url: redis.url });
  admin.on('error', () => undefined);
  await admin.connect();
  const store = createRedisStore(admin, { prefix: 'soak:' });

  const valid = range(2000, (i) => token(`valid-${i}`));
  const before = range(200, (i) => token(`before-${i}`));
  const doomed = range(60, (i) => token(`doomed-${i}`));
  const forged = range(200, (i) => token(`forged-${i}`, randomBytes(32)));
  for (const t of before) await store.revoke(t.jti, t.exp);
  /** jti → { started, stored } (ms) of its revocation during the run. */
  const revokedAt = new Map();

  const base = {
    redisUrl: redis.url,
    key: { secret },
    issuer: 'auth.example.com',
    audience: 'api.example.com',
    prefix: 'soak:',
  };
  process.env.FLEET_DIST = DIST;
  const instances = await Promise.all([
    startInstance({ ...base, express: 5 }),
    startInstance({ ...base, express: 4, client: 'ioredis' }),
    startInstance({ ...base, express: 5 }),
  ]);
  for (const instance of instances)
    await within(10_000, async () => (await instance.get(valid[0].token)).status === 200, 'an instance to load');

  const tally = { answers: 0, wrong: 0, fivexx: 0, examples: [], byKind: {} };
  const kinds = [
    { name: 'valid', weight: 5, pool: valid, judge: (status, body) => status === 200 && body.startsWith('{"jti":') },
    {
      name: 'revoked before the run',
      weight: 1,
      pool: before,
      judge: (status, body) => status === 401 && body === INVALID,
    },
    { name: 'forged', weight: 1, pool: forged, judge: (status, body) => status === 401 && body === INVALID },
    {
      name: 'revoked during the run',
      weight: 2,
      pool: doomed,
      judge(status, body, sentAt, t) {
        const when = revokedAt.get(t.jti);
        if (status === 200)
          return when === undefined || when.stored === undefined || sentAt < when.stored + PROPAGATION_MS;
        return status === 401 && body === INVALID && when !== undefined && sentAt >= when.started;
      },
    },
  ];
  const requests = [];
  for (const kind of kinds) {
    let next = 0;
    tally.byKind[kind.name] = { answers: 0, wrong: 0 };
    const entry = {
      method: 'GET',
      path: '/me',
      setupRequest(req, context) {
        const t = kind.pool[next++ % kind.pool.length];
        context.sent = { t, at: Date.now() };
        return { ...req, headers: { ...req.headers, authorization: `Bearer ${t.token}` } };
      },
      onResponse(status, body, context) {
        const seen = tally.byKind[kind.name];
        seen.answers++;
        tally.answers++;
        if (status >= 500) tally.fivexx++;
        if (!kind.judge(status, String(body), context.sent.at, context.sent.t)) {
          seen.wrong++;
          tally.wrong++;
          if (tally.examples.length < 5) tally.examples.push(`${kind.name}: ${status} ${String(body).slice(0, 80)}`);
        }
      },
    };
    for (let i = 0; i < kind.weight; i++) requests.push(entry);
  }

  // Revoke the doomed tokens one by one, spread over the run (not past its last 20 %).
  const every = Math.max(50, Math.floor((seconds * 800) / doomed.length));
  let revoking = 0;
  const revoker = setInterval(() => {
    const t = doomed[revoking++];
    if (t === undefined) return;
    const when = { started: Date.now(), stored: undefined };
    revokedAt.set(t.jti, when);
    store.revoke(t.jti, t.exp).then(
      () => (when.stored = Date.now()),
      (err) => console.error('revoke failed', err.message),
    );
  }, every);

  console.log(
    `soak --fleet: ${seconds} s, ${connections} connections over 3 instances, redis-server on 127.0.0.1:${redis.port}`,
  );
  const per = Math.max(1, Math.floor(connections / instances.length));
  const results = await Promise.all(
    instances.map((instance) =>
      autocannon({
        url: `http://127.0.0.1:${instance.port}`,
        connections: per,
        duration: seconds,
        requests,
      }),
    ),
  );
  clearInterval(revoker);

  // After the run: every instance refuses every token revoked during it.
  let stale = 0;
  for (const t of doomed.slice(0, revoking))
    for (const instance of instances) if ((await instance.get(t.token)).status !== 401) stale++;
  const total = results.reduce((n, r) => n + r.requests.total, 0);
  const errors = results.reduce((n, r) => n + r.errors + r.timeouts, 0);
  console.log(
    `requests: ${total} answered (${Math.round(total / seconds)}/s), latency p50 ${results.map((r) => r.latency.p50).join('/')} ms, ` +
      `p99 ${results.map((r) => r.latency.p99).join('/')} ms per instance; errors+timeouts ${errors}`,
  );
  for (const [name, t] of Object.entries(tally.byKind))
    console.log(`  ${name}: ${t.answers} answers, ${t.wrong} wrong`);
  console.log(
    `revocations during the run: ${Math.min(revoking, doomed.length)}; afterwards still accepted somewhere: ${stale}`,
  );
  console.log(
    `checked: ${tally.answers}, wrong answers: ${tally.wrong}, 5xx: ${tally.fivexx}${tally.examples.length ? ` (${tally.examples.join('; ')})` : ''}`,
  );
  const ok = tally.wrong === 0 && tally.fivexx === 0 && errors === 0 && stale === 0 && tally.answers === total;
  console.log(ok ? 'soak --fleet: passed' : 'soak --fleet: FAILED');
  if (!ok) process.exitCode = 1;

  store.close();
  admin.destroy();
  await stopAllInstances();
  await redis.close();
}

main().catch(async (err) => {
  console.error(err);
  process.exitCode = 1;
  await stopAllInstances();
});
