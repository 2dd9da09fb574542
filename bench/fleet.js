'use strict';
/**
 * Fleet single flight and shared verdicts (docs/fleet.md), against a real redis-server started here on 127.0.0.1
 * (Debian's, or REDIS_SERVER) and a loopback upstream that counts its calls:
 *
 * 1. Upstream calls per 1 000 requests for a fleet of three processes (__tests__/fixtures/fleet-app.js): each new
 *    token is sent to all three at once (a burst), then used seven more times round the fleet; waves of
 *    `--parallel` tokens at a time. Three fleets: no sharing, shared verdicts without single flight (a store
 *    without locks), shared verdicts with single flight (createRedisStore). Also the slowest answer of each burst.
 * 2. Latency of one verification in-process (`auth.verify`, no HTTP), interleaved in rounds: a local cache hit,
 *    a shared-cache hit (a verdict another instance stored in Redis: one round trip) and a local miss in upstream
 *    mode without sharing (one loopback HTTP call to an upstream that answers at once).
 *
 * 3. Redis Cluster (three masters, `redis-cli --cluster create`) and Sentinel (master, replica, three sentinels):
 *    a fleet of three processes on each (node-redis and ioredis); upstream calls per burst, and `--revocations`
 *    revocations each timed until all three refuse over HTTP. Sentinel: the master killed under traffic, the time
 *    until the sentinels name a new master and until every instance serves from it, and the answers meanwhile.
 *
 *   node bench/fleet.js [--tokens 100] [--parallel 10] [--upstream-ms 20] [--rounds 5] [--per-round 200]
 *                       [--revocations 20]
 */
require('../scripts/ts-register');
const { randomBytes, randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { Redis } = require('ioredis');
const { createTokenAuth } = require('../lib');
const { createRedisStore } = require('../lib/redis');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');
const { startInstance, stopAllInstances } = require('../__tests__/fixtures/fleet');
const { startLoopbackServer, json } = require('../__tests__/fixtures/loopback-server');
const { startRedisCluster, startRedisSentinel } = require('../__tests__/fixtures/redis-topologies');
const { shapeB, ISSUER, AUDIENCE } = require('../__tests__/fixtures/issuer');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const TOKENS = option('tokens', 100);
const PARALLEL = option('parallel', 10);
const UPSTREAM_MS = option('upstream-ms', 20);
const ROUNDS = option('rounds', 5);
const PER_ROUND = option('per-round', 200);
const REVOCATIONS = option('revocations', 20);
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const median = (values) => percentile(values, 0.5);

const issued = new Map();
let delayMs = UPSTREAM_MS;
function identityService(req, res) {
  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const claims = token === undefined ? undefined : issued.get(token);
  const answer = () =>
    claims === undefined
      ? json(res, 401, { status: 'error', message: 'Invalid access token' })
      : json(res, 200, claims);
  if (delayMs > 0) setTimeout(answer, delayMs);
  else answer();
}
function issue() {
  const token = `${randomBytes(24).toString('base64url')}~opaque`;
  issued.set(token, shapeB(Math.floor(Date.now() / 1000)));
  return token;
}

async function fleetCalls(redis, upstream, label, extra) {
  const config = {
    redisUrl: redis.url,
    client: 'redis',
    key: { upstream: upstream.origin, breaker: false },
    issuer: ISSUER,
    audience: AUDIENCE,
    revocation: false,
    prefix: `bench-${randomUUID().slice(0, 8)}:`,
    ...extra,
  };
  const instances = await Promise.all([config, { ...config, client: 'ioredis' }, config].map((c) => startInstance(c)));
  await Promise.all(
    instances.map((i) => i.call('claim', { claimId: randomUUID(), expiresAt: Date.now() / 1000 + 60 })),
  );
  upstream.reset();
  let requests = 0;
  let wrong = 0;
  const slowest = [];
  for (let wave = 0; wave < Math.ceil(TOKENS / PARALLEL); wave++) {
    await Promise.all(
      Array.from({ length: Math.min(PARALLEL, TOKENS - wave * PARALLEL) }, async () => {
        const token = issue();
        const started = performance.now();
        const burst = await Promise.all(
          instances.map(async (instance) => {
            const answer = await instance.get(token);
            return { status: answer.status, ms: performance.now() - started };
          }),
        );
        slowest.push(Math.max(...burst.map((b) => b.ms)));
        requests += 3;
        wrong += burst.filter((b) => b.status !== 200).length;
        for (let i = 0; i < 7; i++) {
          requests++;
          if ((await instances[i % 3].get(token)).status !== 200) wrong++;
        }
      }),
    );
  }
  const calls = upstream.requests;
  await stopAllInstances();
  console.log(
    `   ${label.padEnd(44)} ${String(Math.round((calls / requests) * 1000)).padStart(4)} calls per 1 000 requests (${calls} for ${requests}; ${(calls / TOKENS).toFixed(2)} per token), slowest answer of a burst: median ${median(slowest).toFixed(1)} ms, p95 ${percentile(slowest, 0.95).toFixed(1)} ms${wrong ? `, ${wrong} not 200` : ''}`,
  );
}

async function latency(redis, upstream) {
  delayMs = 0;
  const client = new Redis(redis.url);
  client.on('error', () => undefined);
  await client.ping();
  const prefix = `lat-${randomUUID().slice(0, 8)}:`;
  const store = createRedisStore(client, { prefix });
  const base = { key: { upstream: upstream.origin, breaker: false }, issuer: ISSUER, audience: AUDIENCE };
  const writer = createTokenAuth({ ...base, cache: { shared: store } });
  const rows = { hit: [], shared: [], miss: [] };
  const time = async (fn) => {
    const started = performance.now();
    await fn();
    return (performance.now() - started) * 1000;
  };
  for (let round = 0; round < ROUNDS; round++) {
    const tokens = Array.from({ length: PER_ROUND }, issue);
    for (const token of tokens) await writer.verify(token); // the verdicts, in Redis and in the writer's cache
    const reader = createTokenAuth({ ...base, cache: { shared: store } }); // a cold instance of the same fleet
    const alone = createTokenAuth(base); // an instance without sharing
    for (const token of tokens) {
      rows.hit.push(await time(() => writer.verify(token)));
      rows.shared.push(await time(() => reader.verify(token)));
      rows.miss.push(await time(() => alone.verify(token)));
    }
    reader.close();
    alone.close();
  }
  writer.close();
  store.close();
  client.disconnect();
  const line = (label, values) =>
    console.log(
      `   ${label.padEnd(62)} median ${median(values).toFixed(0).padStart(5)} µs, p95 ${percentile(values, 0.95).toFixed(0).padStart(5)} µs`,
    );
  console.log(`2. one verification in-process (${ROUNDS} interleaved rounds of ${PER_ROUND} tokens):`);
  line('local cache hit', rows.hit);
  line('shared-cache hit (cold instance, verdict in Redis)', rows.shared);
  line('local miss, no sharing (loopback upstream answering at once)', rows.miss);
  console.log(
    `   a shared-cache hit adds ${(median(rows.shared) - median(rows.hit)).toFixed(0)} µs to a local hit and saves ${(median(rows.miss) - median(rows.shared)).toFixed(0)} µs of a local miss (medians)`,
  );
}

/** Until `condition` holds, polling every 5 ms (at most `limitMs`); the milliseconds it took. */
async function waitFor(limitMs, condition) {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (await condition()) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`not within ${limitMs} ms`);
}

async function topologyFleet(upstream, label, where) {
  delayMs = UPSTREAM_MS;
  const config = {
    ...where,
    client: 'redis',
    key: { upstream: upstream.origin, timeout: '1s' },
    issuer: ISSUER,
    audience: AUDIENCE,
    revocation: true,
    shared: true,
    prefix: `bench-${randomUUID().slice(0, 8)}:`,
  };
  const instances = await Promise.all([config, { ...config, client: 'ioredis' }, config].map((c) => startInstance(c)));
  await waitFor(20_000, async () =>
    (await Promise.all(instances.map((i) => i.call('stats')))).every((s) => s.revocation.loaded),
  );
  upstream.reset();
  const tokens = Array.from({ length: REVOCATIONS }, issue);
  for (const token of tokens) await Promise.all(instances.map((i) => i.get(token)));
  const calls = upstream.requests;
  const propagation = [];
  for (const [n, token] of tokens.entries()) {
    const claims = issued.get(token);
    const started = performance.now();
    await instances[n % 3].call('revoke', { jti: claims.jti, exp: claims.exp });
    await waitFor(5000, async () =>
      (await Promise.all(instances.map((i) => i.get(token)))).every((a) => a.status === 401),
    );
    propagation.push(performance.now() - started);
  }
  console.log(
    `   ${label}: ${calls} upstream calls for ${tokens.length} bursts of one new token to all three; revocation until all three refuse over HTTP: median ${median(propagation).toFixed(1)} ms, max ${Math.max(...propagation).toFixed(1)} ms (${REVOCATIONS})`,
  );
  return instances;
}

async function topologies(upstream) {
  console.log('3. Redis Cluster and Sentinel, a fleet of three processes (node-redis, ioredis, node-redis):');
  const cluster = await startRedisCluster();
  try {
    await topologyFleet(upstream, 'Cluster, 3 masters', { cluster: cluster.nodes });
  } finally {
    await stopAllInstances();
    await cluster.close();
  }
  const sentinel = await startRedisSentinel();
  try {
    const instances = await topologyFleet(upstream, 'Sentinel, master + replica', {
      sentinel: { sentinels: sentinel.sentinels, name: sentinel.name },
    });
    const good = issue();
    const revoked = issue();
    for (const token of [good, revoked]) await Promise.all(instances.map((i) => i.get(token)));
    const claims = issued.get(revoked);
    await instances[0].call('revoke', { jti: claims.jti, exp: claims.exp });
    await waitFor(5000, () => sentinel.replicated());
    const answers = { right: 0, wrong: 0, unavailable: 0 };
    let running = true;
    const traffic = instances.map(async (instance) => {
      while (running) {
        for (const [token, expected] of [
          [good, 200],
          [revoked, 401],
        ]) {
          const { status } = await instance.get(token);
          if (status === expected) answers.right++;
          else if (status === 503) answers.unavailable++;
          else answers.wrong++;
        }
      }
    });
    const killed = performance.now();
    await sentinel.killMaster();
    const named = performance.now() - killed;
    await waitFor(30_000, async () =>
      (await Promise.all(instances.map((i) => i.call('stats')))).every((s) => s.revocation.available),
    );
    const back = performance.now() - killed;
    // A revocation after the failover, through the node-redis Sentinel client (asked again while it reconnects).
    const after = issue();
    await Promise.all(instances.map((i) => i.get(after)));
    const afterClaims = issued.get(after);
    const started = performance.now();
    await waitFor(10_000, () =>
      instances[2].call('revoke', { jti: afterClaims.jti, exp: afterClaims.exp }).then(
        () => true,
        () => false,
      ),
    );
    await waitFor(5000, async () =>
      (await Promise.all(instances.map((i) => i.get(after)))).every((a) => a.status === 401),
    );
    const firstRevocation = performance.now() - started;
    running = false;
    await Promise.all(traffic);
    console.log(
      `   Sentinel failover (master SIGKILLed, down-after 500 ms): new master named after ${(named / 1000).toFixed(2)} s, every instance's list available again after ${(back / 1000).toFixed(2)} s; answers meanwhile: ${answers.right} right, ${answers.wrong} wrong, ${answers.unavailable} 503; first revocation after it refused everywhere in ${firstRevocation.toFixed(0)} ms`,
    );
  } finally {
    await stopAllInstances();
    await sentinel.close();
  }
}

async function main() {
  const redis = await startRedisServer();
  const upstream = await startLoopbackServer(identityService);
  try {
    console.log(
      `1. a fleet of 3 processes, ${TOKENS} new tokens (${PARALLEL} at a time), each sent to all three at once then used 7 more times; upstream answers after ${UPSTREAM_MS} ms:`,
    );
    await fleetCalls(redis, upstream, 'no sharing', { shared: false });
    await fleetCalls(redis, upstream, 'shared verdicts, no single flight', { shared: true, flight: false });
    await fleetCalls(redis, upstream, 'shared verdicts + single flight', { shared: true });
    await latency(redis, upstream);
    await topologies(upstream);
  } finally {
    await stopAllInstances();
    await upstream.close();
    await redis.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
