'use strict';
/**
 * The DPoP replay store in Redis (docs/fleet.md): the bytes one proof id costs in Redis, what one proof key's flood
 * of 30 000 ids leaves there, and the round trip of `claimOnce`, for this build and, with BENCH_BASELINE_DIST, a
 * build before it (round trips interleaved, round by round). A real redis-server on 127.0.0.1, ioredis.
 *
 *   npm run build && BENCH_BASELINE_DIST=<dist of the build before> node bench/redis-replay.js [--rounds 5]
 */
require('../scripts/ts-register');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { Redis } = require('ioredis');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');

const at = process.argv.indexOf('--rounds');
const ROUNDS = at === -1 ? 5 : Number(process.argv[at + 1]);
const builds = [{ name: 'this build', dist: path.join(__dirname, '..', 'dist') }];
if (process.env.BENCH_BASELINE_DIST) builds.push({ name: 'baseline', dist: process.env.BENCH_BASELINE_DIST });
for (const build of builds) build.createRedisStore = require(path.join(build.dist, 'redis')).createRedisStore;

const newId = () => randomBytes(32).toString('base64url');
const soon = () => Date.now() / 1000 + 120;

async function usedMemory(admin) {
  return Number(/used_memory:(\d+)/.exec(await admin.info('memory'))[1]);
}

/** Claim `count` ids spread over `keys` proof keys, 200 at a time; how many were taken. */
async function claim(store, count, keys) {
  const jkts = Array.from({ length: keys }, newId);
  let taken = 0;
  for (let done = 0; done < count; done += 200) {
    const batch = await Promise.allSettled(
      Array.from({ length: Math.min(200, count - done) }, (_, i) =>
        store.claimOnce(newId(), soon(), jkts[(done + i) % keys]),
      ),
    );
    taken += batch.filter((o) => o.status === 'fulfilled' && o.value === true).length;
  }
  return taken;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function main() {
  const server = await startRedisServer();
  const admin = new Redis(server.url);
  const clients = [];
  const storeOf = (build) => {
    const client = new Redis(server.url);
    clients.push(client);
    return build.createRedisStore(client, { prefix: `${build.name.replace(' ', '-')}:` });
  };
  try {
    console.log(
      '| build | bytes per id, 1 key × 10 000 | bytes per id, 1 000 keys × 10 | one key floods 30 000: taken, MiB added |',
    );
    console.log('| --- | --- | --- | --- |');
    for (const build of builds) {
      const row = [build.name];
      for (const [count, keys] of [
        [10_000, 1],
        [10_000, 1000],
      ]) {
        await admin.flushall();
        const store = storeOf(build);
        await store.claimOnce(newId(), soon(), newId());
        const before = await usedMemory(admin);
        const taken = await claim(store, count, keys);
        row.push(((await usedMemory(admin)) - before) / taken);
      }
      await admin.flushall();
      const store = storeOf(build);
      await store.claimOnce(newId(), soon(), newId());
      const before = await usedMemory(admin);
      const taken = await claim(store, 30_000, 1);
      row.push(`${taken}, ${(((await usedMemory(admin)) - before) / 2 ** 20).toFixed(2)}`);
      console.log(`| ${row.map((v) => (typeof v === 'number' ? v.toFixed(0) : v)).join(' | ')} |`);
    }

    await admin.flushall();
    await admin.config('RESETSTAT');
    const samples = new Map(builds.map((b) => [b.name, []]));
    const stores = new Map(builds.map((b) => [b.name, storeOf(b)]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        const store = stores.get(build.name);
        // 100 proof keys, 20 ids each per round: a fleet's ordinary traffic, far below every share.
        const jkts = Array.from({ length: 100 }, newId);
        for (let i = 0; i < 2000; i++) {
          const started = process.hrtime.bigint();
          await store.claimOnce(newId(), soon(), jkts[i % 100]);
          samples.get(build.name).push(Number(process.hrtime.bigint() - started) / 1000);
        }
      }
    }
    console.log(`\n| build | claimOnce round trip, median / p95 (µs, ${ROUNDS} interleaved rounds of 2 000) |`);
    console.log('| --- | --- |');
    for (const build of builds) {
      const sorted = samples.get(build.name).sort((a, b) => a - b);
      console.log(`| ${build.name} | ${percentile(sorted, 0.5).toFixed(0)} / ${percentile(sorted, 0.95).toFixed(0)} |`);
    }
    // Redis's own time per command (this build claims with EVALSHA, builds before it with SET … NX).
    const stats = (await admin.info('commandstats')).split('\n').filter((l) => /cmdstat_(evalsha|set):/.test(l));
    console.log(`\nRedis CPU per command: ${stats.map((l) => l.replace(/,rejected.*$/, '').trim()).join('; ')}`);
  } finally {
    for (const client of clients) client.disconnect();
    admin.disconnect();
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
