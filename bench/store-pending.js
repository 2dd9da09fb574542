'use strict';
/**
 * What a stalled Redis costs the app's own client (docs/fleet.md, `maxPending`): a real redis-server started here
 * on 127.0.0.1 is paused (SIGSTOP), then 50 000 DPoP claims (`claimOnce`) go to a store on node-redis and on
 * ioredis; each times out after the store's `timeout`, yet the client keeps it queued. Heap and RSS growth are
 * measured after two full GCs, with no bound (`maxPending` 1e9) and with the default (1 000).
 *
 *   node --expose-gc bench/store-pending.js [--claims 50000]
 */
require('../scripts/ts-register');
const { randomUUID } = require('node:crypto');
const { createClient } = require('redis');
const { Redis } = require('ioredis');
const { createRedisStore } = require('../lib/redis');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');

const at = process.argv.indexOf('--claims');
const CLAIMS = at === -1 ? 50_000 : Number(process.argv[at + 1]);
const MiB = (bytes) => (bytes / 2 ** 20).toFixed(1);

async function client(kind, url) {
  if (kind === 'ioredis') return new Redis(url);
  const made = createClient({ url });
  await made.connect();
  return made;
}

async function held(server, kind, maxPending) {
  await server.restart();
  const app = await client(kind, server.url);
  app.on('error', () => undefined);
  const store = createRedisStore(app, { maxPending });
  await store.claimOnce(randomUUID(), Date.now() / 1000 + 60);
  global.gc();
  global.gc();
  const before = process.memoryUsage();
  server.pause();
  let refused = 0;
  await Promise.all(
    Array.from({ length: CLAIMS }, () =>
      store.claimOnce(randomUUID(), Date.now() / 1000 + 60).catch(() => void refused++),
    ),
  );
  global.gc();
  global.gc();
  const after = process.memoryUsage();
  server.resume();
  if (kind === 'ioredis') app.disconnect();
  else app.destroy();
  return { kind, maxPending, refused, heap: MiB(after.heapUsed - before.heapUsed), rss: MiB(after.rss - before.rss) };
}

async function main() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  const server = await startRedisServer();
  try {
    console.log(
      `| client | maxPending | claims refused | heap held (MiB) | RSS growth (MiB) |\n| --- | --- | --- | --- | --- |`,
    );
    for (const kind of ['ioredis', 'redis']) {
      for (const maxPending of [1e9, 1000]) {
        const r = await held(server, kind, maxPending);
        console.log(
          `| ${r.kind} | ${r.maxPending === 1e9 ? 'no bound (1e9)' : r.maxPending} | ${r.refused} | ${r.heap} | ${r.rss} |`,
        );
      }
    }
  } finally {
    await server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
