'use strict';
/**
 * Fleet figures (docs/fleet.md), against a real redis-server started here on 127.0.0.1 (Debian's, or
 * REDIS_SERVER):
 *
 * 1. CPU per request of the middleware (cache hit, HS256, in-process, no HTTP) with `revocation: store` and
 *    without, interleaved in rounds so that both see the same machine; the difference is the local lookup.
 * 2. Memory per revoked jti: the local list (V8 heap, after full GCs) and Redis (`MEMORY USAGE` of the sorted set).
 * 3. Propagation: 100 revocations made by an admin client, each timed until two instances (separate processes,
 *    __tests__/fixtures/fleet-app.js) refuse the token over HTTP; median, p95, max.
 * 4. The two clients, node-redis and ioredis: a claimOnce round trip (median), and the time from a Redis restart
 *    until the store counts the list available again.
 *
 *   node --expose-gc bench/revocation.js [--rounds 8] [--entries 100000] [--revocations 100]
 */
require('../scripts/ts-register');
const { randomUUID } = require('node:crypto');
const { createClient } = require('redis');
const { Redis } = require('ioredis');
const { createTokenAuth } = require('../lib');
const { createRedisStore } = require('../lib/redis');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');
const { startInstance, stopAllInstances, within } = require('../__tests__/fixtures/fleet');
const { shapeB, sign, SECRET, ISSUER, AUDIENCE } = require('../__tests__/fixtures/issuer');
const { median, nsPerCall } = require('./timing');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const ROUNDS = option('rounds', 8);
const ENTRIES = option('entries', 100_000);
const REVOCATIONS = option('revocations', 100);
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function nodeRedis(url) {
  const client = createClient({ url, socket: { reconnectStrategy: (n) => Math.min(50 * (n + 1), 300) } });
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: () => client.destroy() };
}

function ioRedis(url) {
  const client = new Redis(url, { retryStrategy: (n) => Math.min(50 * (n + 1), 300) });
  client.on('error', () => undefined);
  return { client, close: () => client.disconnect() };
}

async function cpuPerRequest(store) {
  const base = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE };
  const off = createTokenAuth(base);
  const on = createTokenAuth({ ...base, revocation: store });
  await within(5000, () => on.stats().revocation.loaded, 'the list loaded');
  // A list of realistic size to look up in.
  for (let i = 0; i < 1000; i++) await store.revoke(randomUUID(), Math.floor(Date.now() / 1000) + 3600);
  const token = sign(shapeB());
  const req = {
    method: 'GET',
    headers: { authorization: `Bearer ${token}` },
    rawHeaders: ['Authorization', `Bearer ${token}`],
  };
  let passed = 0;
  const next = (err) => {
    if (err === undefined) passed++;
  };
  const res = {};
  const offMw = off.requireVerifiedUser(['identify']);
  const onMw = on.requireVerifiedUser(['identify']);
  offMw(req, res, next);
  onMw(req, res, next);
  const rounds = { off: [], on: [] };
  for (let r = 0; r < ROUNDS; r++) {
    rounds.off.push(await nsPerCall(() => offMw(req, res, next), { seconds: 0.3, samples: 1 }));
    rounds.on.push(await nsPerCall(() => onMw(req, res, next), { seconds: 0.3, samples: 1 }));
  }
  const lookup = on.stats().revocation;
  off.close();
  on.close();
  const cpuOff = median(rounds.off) / 1000;
  const cpuOn = median(rounds.on) / 1000;
  console.log(`1. middleware, cache hit, HS256 (median of ${ROUNDS} interleaved rounds, ${lookup.size} jtis held):`);
  console.log(
    `   revocation off ${cpuOff.toFixed(3)} µs, on ${cpuOn.toFixed(3)} µs per request: +${(cpuOn - cpuOff).toFixed(3)} µs (${passed} requests passed)`,
  );
}

async function memoryPerJti(url) {
  if (typeof global.gc !== 'function') {
    console.log('2. memory: run with --expose-gc to measure');
    return;
  }
  const { client, close } = await nodeRedis(url);
  const prefix = `mem-${randomUUID().slice(0, 6)}:`;
  const admin = createRedisStore(client, { prefix });
  const exp = Math.floor(Date.now() / 1000) + 3600;
  for (let i = 0; i < ENTRIES; i += 500) {
    await Promise.all(Array.from({ length: Math.min(500, ENTRIES - i) }, () => admin.revoke(randomUUID(), exp)));
  }
  // What an instance pays: a fresh process loads the whole list (jti strings parsed from Redis's reply, the map).
  const child = require('node:child_process').spawnSync(
    process.execPath,
    ['--expose-gc', require.resolve('./revocation'), '--memory-child', url, prefix],
    { encoding: 'utf8' },
  );
  const local = JSON.parse(child.stdout);
  const redisBytes = Number(await client.sendCommand(['MEMORY', 'USAGE', `${prefix}revoked`, 'SAMPLES', '0']));
  console.log(
    `2. memory for ${local.size} revoked jtis (UUIDs, 36 characters): local list ${((local.after - local.before) / local.size).toFixed(0)} bytes per jti` +
      ` (V8 heap of a fresh process, after full GCs), Redis ${(redisBytes / ENTRIES).toFixed(0)} bytes per jti (MEMORY USAGE of the sorted set)`,
  );
  await client.sendCommand(['DEL', `${prefix}revoked`]);
  admin.close();
  close();
}

async function propagation(redis) {
  const config = { redisUrl: redis.url, key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, prefix: 'prop:' };
  const [b, c] = await Promise.all([
    startInstance(config),
    startInstance({ ...config, client: 'ioredis', express: 4 }),
  ]);
  const probe = sign(shapeB());
  for (const instance of [b, c])
    await within(10_000, async () => (await instance.get(probe)).status === 200, 'the instance to load');
  const { client, close } = await nodeRedis(redis.url);
  const admin = createRedisStore(client, { prefix: 'prop:' });
  const times = [];
  for (let i = 0; i < REVOCATIONS; i++) {
    const claims = shapeB();
    const token = sign(claims);
    const started = process.hrtime.bigint();
    await admin.revoke(claims.jti, claims.exp);
    // Ask again at once after each answer (one request in flight per instance), bounded by 5 s.
    await Promise.all(
      [b, c].map(async (instance) => {
        const limit = Date.now() + 5000;
        while ((await instance.get(token)).status !== 401)
          if (Date.now() > limit) throw new Error('revocation not seen in 5 s');
      }),
    );
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  console.log(
    `3. propagation of ${REVOCATIONS} revocations to both of 2 instances (each asked over HTTP again at once until it refuses):`,
  );
  console.log(
    `   median ${median(times).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`,
  );
  admin.close();
  close();
  await stopAllInstances();
}

async function clients(redis) {
  console.log('4. clients:');
  for (const [name, make] of [
    ['node-redis', nodeRedis],
    ['ioredis', ioRedis],
  ]) {
    const { client, close } = await make(redis.url);
    const store = createRedisStore(client, { prefix: `cl-${name}:` });
    const list = store.follow(() => undefined);
    await within(5000, () => list.stats().loaded, 'the list loaded');
    const claim = [];
    for (let i = 0; i < 2000; i++) {
      const t = process.hrtime.bigint();
      await store.claimOnce(randomUUID(), Date.now() / 1000 + 60);
      claim.push(Number(process.hrtime.bigint() - t) / 1000);
    }
    await redis.stop();
    await within(5000, () => !list.stats().available, 'the outage to be seen');
    const restarted = Date.now();
    await redis.start();
    const back = await within(10_000, () => list.stats().available, 'the list available again');
    console.log(
      `   ${name}: claimOnce round trip median ${median(claim).toFixed(0)} µs, p95 ${percentile(claim, 0.95).toFixed(0)} µs; ` +
        `list available again ${back} ms after Redis restarted (${Date.now() - restarted} ms)`,
    );
    store.close();
    close();
    await sleep(100);
  }
}

/** The child of memoryPerJti: heap before and after one store loads the list under `prefix`. */
async function memoryChild(url, prefix) {
  const { client, close } = await nodeRedis(url);
  await client.sendCommand(['PING']);
  const heap = () => {
    global.gc();
    global.gc();
    return process.memoryUsage().heapUsed;
  };
  const warm = createRedisStore(client, { prefix: 'warm:' });
  const warmList = warm.follow(() => undefined);
  await within(5000, () => warmList.stats().loaded, 'warm-up');
  const before = heap();
  const store = createRedisStore(client, { prefix });
  const list = store.follow(() => undefined);
  await within(20_000, () => list.stats().loaded, 'the list loaded');
  const after = heap();
  process.stdout.write(JSON.stringify({ before, after, size: list.stats().size }));
  store.close();
  warm.close();
  close();
}

async function main() {
  const child = process.argv.indexOf('--memory-child');
  if (child !== -1) return memoryChild(process.argv[child + 1], process.argv[child + 2]);
  const redis = await startRedisServer();
  try {
    const { client, close } = await nodeRedis(redis.url);
    const store = createRedisStore(client, { prefix: 'cpu:' });
    await cpuPerRequest(store);
    store.close();
    close();
    await memoryPerJti(redis.url);
    await propagation(redis);
    await clients(redis);
  } finally {
    await stopAllInstances();
    await redis.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
