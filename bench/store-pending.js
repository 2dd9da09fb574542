'use strict';
/**
 * What a stalled Redis costs the app's own client (docs/fleet.md, `maxPending`): a real redis-server started here
 * on 127.0.0.1 is paused (SIGSTOP), then 50 000 DPoP claims (`claimOnce`) go to a store on node-redis and on
 * ioredis; each times out after the store's `timeout`, yet the client keeps it queued. Heap and RSS growth are
 * measured after two full GCs, with no bound (`maxPending` 1e9) and with the default (1 000).
 *
 *   node --expose-gc bench/store-pending.js [--claims 50000]
 *
 * `--verdicts N` measures shared-verdict writes of 256 KiB instead (N of them, default 1 000): what the count bound
 * alone lets the client hold, and what `maxPendingBytes` (default 4 MiB) does; `--count-only` runs the count bound
 * alone (a build before `maxPendingBytes`, run from its own checkout).
 */
require('../scripts/ts-register');
const { randomUUID } = require('node:crypto');
const { createClient } = require('redis');
const { Redis } = require('ioredis');
const { createRedisStore } = require('../lib/redis');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');

const at = process.argv.indexOf('--claims');
const CLAIMS = at === -1 ? 50_000 : Number(process.argv[at + 1]);
const verdictsAt = process.argv.indexOf('--verdicts');
const VERDICTS = verdictsAt === -1 ? 0 : Number(process.argv[verdictsAt + 1] ?? 1000) || 1000;
const COUNT_ONLY = process.argv.includes('--count-only');
/** A verdict of 256 KiB, a string of its own each time (a shared string would cost the client nothing). */
const verdict = (i) => JSON.stringify({ ok: true, payload: { i, pad: 'x'.repeat(256 * 1024 - 50) } });
const MiB = (bytes) => (bytes / 2 ** 20).toFixed(1);

async function client(kind, url) {
  if (kind === 'ioredis') return new Redis(url);
  const made = createClient({ url });
  await made.connect();
  return made;
}

async function held(server, kind, maxPending, maxPendingBytes) {
  await server.restart();
  const app = await client(kind, server.url);
  app.on('error', () => undefined);
  const store = createRedisStore(app, maxPendingBytes === undefined ? { maxPending } : { maxPending, maxPendingBytes });
  await store.claimOnce(randomUUID(), Date.now() / 1000 + 60);
  global.gc();
  global.gc();
  const before = process.memoryUsage();
  server.pause();
  let refused = 0;
  const send =
    VERDICTS > 0
      ? (i) => store.setVerdict(`k${i}`, verdict(i), 60)
      : () => store.claimOnce(randomUUID(), Date.now() / 1000 + 60);
  await Promise.all(
    Array.from({ length: VERDICTS || CLAIMS }, (_, i) =>
      send(i).catch((err) => void (err.name === 'StoreBusyError' && refused++)),
    ),
  );
  global.gc();
  global.gc();
  const after = process.memoryUsage();
  server.resume();
  if (kind === 'ioredis') app.disconnect();
  else app.destroy();
  const external = after.external + after.arrayBuffers - before.external - before.arrayBuffers;
  return {
    kind,
    maxPending,
    maxPendingBytes,
    refused,
    heap: MiB(after.heapUsed - before.heapUsed),
    external: MiB(external),
    rss: MiB(after.rss - before.rss),
  };
}

async function main() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  const server = await startRedisServer();
  try {
    console.log(
      `${VERDICTS > 0 ? `${VERDICTS} verdicts of 256 KiB` : `${CLAIMS} claims`}\n\n` +
        `| client | bound | refused unsent | heap held (MiB) | buffers held (MiB) | RSS growth (MiB) |\n| --- | --- | --- | --- | --- | --- |`,
    );
    const bounds =
      VERDICTS > 0
        ? [[1000, COUNT_ONLY ? undefined : 1e15], ...(COUNT_ONLY ? [] : [[1000, undefined]])]
        : [[1e9], [1000]];
    for (const kind of ['ioredis', 'redis']) {
      for (const [maxPending, maxPendingBytes] of bounds) {
        const r = await held(server, kind, maxPending, maxPendingBytes);
        const bound =
          r.maxPending === 1e9
            ? 'no bound (1e9)'
            : r.maxPendingBytes === 1e15
              ? `${r.maxPending}, no byte bound`
              : VERDICTS > 0 && !COUNT_ONLY
                ? `${r.maxPending}, default bytes (4 MiB)`
                : String(r.maxPending);
        console.log(`| ${r.kind} | ${bound} | ${r.refused} | ${r.heap} | ${r.external} | ${r.rss} |`);
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
