'use strict';
/**
 * Subject and session rules (docs/fleet.md#subject-and-session-rules), against a real redis-server started here on
 * 127.0.0.1 (Debian's, or REDIS_SERVER):
 *
 * 1. memory: the V8 heap an instance's store holds for 10 000 and 100 000 rule entries loaded from Redis (a fresh
 *    store after full GCs), the same for createMemoryRevocationStore, and Redis `MEMORY USAGE` of the rules key;
 *    realistic entries (a 35-character issuer, UUID `sub`s; UUID `sid`s) and hostile ones (256-character values, each
 *    rule another issuer: the worst a flood can write within the bounds). An instance's figure includes its store's
 *    two connections.
 * 2. propagation: `--rules` revocations written by this process (on its own store, as an admin tool or an events
 *    receiver would), alternately a subject rule (`revokeSubject`) and a `jti` (`revoke`, for comparison), each timed
 *    from its promise resolving until the last of three instances (separate processes,
 *    __tests__/fixtures/fleet-app.js, Express 5, 4, 5) refuses the token over HTTP; each instance is asked in a loop,
 *    one request at a time on a kept-alive connection. p50, p99, max of each kind.
 * 3. check (with BENCH_BASELINE_DIST, a build of the commit before, and `npm run build` first): ns per call of the
 *    revocation check a request runs after the verdict cache (`checkRevocation`, dist/verify/revocation.js) on the
 *    frozen claims of a cached token, the build before with a jti list (a Map, as a Redis store's) against this build
 *    with createMemoryRevocationStore holding 0, 10 000 and 100 000 rule entries of the token's issuer (none naming
 *    its user: every map looked up, every lookup missed), interleaved in `--rounds` rounds; the median of the
 *    per-round differences.
 *
 *   node --expose-gc bench/rules.js [--rules 500] [--rounds 21] [--parts memory,propagation,check]
 */
require('../scripts/ts-register');
const { randomUUID } = require('node:crypto');
const { Agent, request } = require('node:http');
const path = require('node:path');
const { median, nsPerCall } = require('./timing');
const { Redis } = require('ioredis');
const { createMemoryRevocationStore } = require('../lib');
const { createRedisStore } = require('../lib/redis');
const { ruleMember } = require('../lib/verify/rule-set');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');
const { startInstance, stopAllInstances, within } = require('../__tests__/fixtures/fleet');
const { shapeB, sign, SECRET, ISSUER, AUDIENCE } = require('../__tests__/fixtures/issuer');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}
const RULES = Number(option('rules', 500));
const ROUNDS = Number(option('rounds', 21));
const PARTS = new Set(option('parts', 'memory,propagation,check').split(','));
const IDP = 'https://idp.example.com/realms/acme'; // 35 characters
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const mib = (bytes) => (bytes / 1048576).toFixed(1);

function heap() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

/**
 * A string as a caller holds one read from JSON (a SET, a logout token): flat. randomUUID()'s own strings are built
 * by concatenation and held about 320 bytes each here, which would be measured as the store's.
 */
const flat = (text) => JSON.parse(JSON.stringify(text));

/** `count` entries: realistic (half subject rules, half session rules by sid) or hostile (long, every issuer new). */
function entries(count, hostile) {
  const out = [];
  const long = (i) => `${i}-`.padEnd(256, 'x');
  for (let i = 0; i < count; i++) {
    if (hostile) out.push({ kind: 's', iss: flat(`https://${long(i)}`.slice(0, 256)), key: flat(long(i)) });
    else if (i % 2 === 0) out.push({ kind: 's', iss: IDP, key: flat(randomUUID()) });
    else out.push({ kind: 'x', iss: IDP, key: flat(randomUUID()) });
  }
  return out;
}

async function memory(url, admin) {
  const rows = [];
  for (const hostile of [false, true]) {
    for (const count of [10_000, 100_000]) {
      // Each measured in a function of its own, the memory store first: nothing of one is alive in the other.
      const memory = await memoryStoreBytes(count, hostile);
      const prefix = `m${randomUUID().slice(0, 8)}:`;
      const key = `${prefix}rules:{${prefix}rules}`;
      await fill(admin, key, count, hostile);
      const redisBytes = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
      const mirror = await mirrorBytes(url, prefix, count);
      await admin.del(key);
      const row = {
        kind: hostile ? 'hostile (256-character values, an issuer each)' : 'realistic (UUID sub / sid)',
        count,
        mirror,
        memory,
        redis: redisBytes,
      };
      rows.push(row);
      console.log(
        `${row.kind}, ${count} entries: instance ${mib(mirror)} MiB (${Math.round(mirror / count)} B each), ` +
          `memory store ${mib(memory)} MiB (${Math.round(memory / count)} B), ` +
          `Redis ${mib(redisBytes)} MiB (${Math.round(redisBytes / count)} B)`,
      );
    }
  }
  return rows;
}

/** Write `count` entries straight into the rules key, as revokeSubject / revokeSession store them. */
async function fill(admin, key, count, hostile) {
  const all = entries(count, hostile);
  const before = String(Math.floor(Date.now() / 1000));
  for (let i = 0; i < all.length; i += 1000) {
    const args = [];
    for (const entry of all.slice(i, i + 1000)) args.push(before, ruleMember(entry));
    await admin.zadd(key, ...args);
  }
}

/** The heap an instance's store holds once it has loaded `count` entries from Redis (its connections included). */
async function mirrorBytes(url, prefix, count) {
  const client = new Redis(url);
  await within(5000, () => client.status === 'ready', 'the client');
  const h0 = heap();
  const store = createRedisStore(client, { prefix, maxRules: count });
  const list = store.follow(() => undefined, { ruleLifetime: 3605 });
  await within(60_000, () => list.stats().loaded, 'the rules loaded');
  const bytes = heap() - h0;
  if (list.stats().rules !== count) throw new Error(`loaded ${list.stats().rules} of ${count}`);
  store.close();
  client.disconnect();
  await new Promise((resolve) => setTimeout(resolve, 500)); // its sockets closed before anything else is measured
  return bytes;
}

/**
 * The heap createMemoryRevocationStore holds for `count` entries written through revokeSubject / revokeSession,
 * with strings made after the first measure (each iss a string of its own, as a caller would pass them).
 */
async function memoryStoreBytes(count, hostile) {
  const m0 = heap();
  const store = createMemoryRevocationStore({ maxRules: count });
  const before = Math.floor(Date.now() / 1000);
  for (const entry of entries(count, hostile)) {
    const iss = flat(entry.iss);
    if (entry.kind === 's') await store.revokeSubject({ iss, sub: entry.key }, { before });
    else await store.revokeSession({ iss, sid: entry.key }, { before });
  }
  const bytes = heap() - m0;
  const held = store.follow(() => undefined, { ruleLifetime: 3605 }).stats().rules;
  if (held !== count) throw new Error(`the memory store holds ${held} of ${count}`);
  return bytes;
}

/** GET /me with `token` on `port` (one kept-alive connection per instance): the status. */
function status(port, token, agent) {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/me', headers: { Authorization: `Bearer ${token}` }, agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * `--rules` revocations, alternately a subject rule and a `jti` (the list that was there before, for comparison on
 * the same machine at the same moment), each timed from its promise resolving in this process until the last of
 * three instances refuses the token.
 */
async function propagation(url) {
  const prefix = `p${randomUUID().slice(0, 8)}:`;
  const config = {
    redisUrl: url,
    key: { secret: SECRET },
    issuer: ISSUER,
    audience: AUDIENCE,
    prefix,
    maxLifetime: '1h',
  };
  const instances = await Promise.all([5, 4, 5].map((express) => startInstance({ ...config, express })));
  const agents = instances.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const probe = sign(shapeB());
  for (const [k, instance] of instances.entries())
    await within(20_000, async () => (await status(instance.port, probe, agents[k])) === 200, 'the instance to load');
  const client = new Redis(url);
  const store = createRedisStore(client, { prefix });
  const took = { subject: [], jti: [] };
  for (let i = 0; i < RULES; i++) {
    const kind = i % 2 === 0 ? 'subject' : 'jti';
    const sub = `user-${i}-${randomUUID()}`;
    const claims = shapeB(Math.floor(Date.now() / 1000) - 10, { sub });
    const token = sign(claims);
    for (const [k, instance] of instances.entries())
      if ((await status(instance.port, token, agents[k])) !== 200) throw new Error('not accepted');
    if (kind === 'subject') await store.revokeSubject({ iss: ISSUER, sub });
    else await store.revoke(claims.jti, claims.exp);
    const resolved = process.hrtime.bigint();
    // Each instance asked in a loop until it refuses (bounded: 5 s), all three at once.
    const last = await Promise.all(
      instances.map(async (instance, k) => {
        for (let n = 0; n < 5000; n++) {
          if ((await status(instance.port, token, agents[k])) === 401) return process.hrtime.bigint();
          if (Number(process.hrtime.bigint() - resolved) > 5e9) break;
        }
        throw new Error('an instance did not refuse within 5 s');
      }),
    );
    const slowest = last.reduce((a, b) => (a > b ? a : b));
    took[kind].push(Number(slowest - resolved) / 1e6);
  }
  store.close();
  client.disconnect();
  for (const agent of agents) agent.destroy();
  await stopAllInstances();
  for (const [kind, values] of Object.entries(took))
    console.log(
      `propagation, ${values.length} ${kind === 'subject' ? 'subject rules' : 'jti revocations'}, until the last of 3 ` +
        `instances refuses: p50 ${percentile(values, 0.5).toFixed(1)} ms, p99 ${percentile(values, 0.99).toFixed(1)} ms, ` +
        `max ${Math.max(...values).toFixed(1)} ms`,
    );
}

/**
 * The jti list as the build before follows a store (a Map of revoked jtis, as stores/revocation-list.ts holds it):
 * what every build pays already, so that the difference is the rule check alone.
 */
const revokedJtis = new Map([[randomUUID(), 2e9]]);
const JTI_LIST = {
  isRevoked(jti, at) {
    const exp = revokedJtis.get(jti);
    return exp !== undefined && exp > at;
  },
  stats: () => ({ loaded: true, available: true, size: revokedJtis.size }),
  unfollow: () => undefined,
};

async function check() {
  const baseDist = process.env.BENCH_BASELINE_DIST;
  if (baseDist === undefined)
    throw new Error('the check part needs BENCH_BASELINE_DIST (a build of the commit before)');
  const dist = path.join(__dirname, '..', 'dist');
  /** A build's modules loaded afresh: each row's check has call sites of its own, as in an app with one store. */
  const fresh = (root) => {
    for (const file of Object.keys(require.cache)) if (file.startsWith(path.resolve(root))) delete require.cache[file];
    return {
      revocation: require(path.join(path.resolve(root), 'verify', 'revocation.js')),
      entry: require(path.join(path.resolve(root), 'index.js')),
    };
  };
  const now = Math.floor(Date.now() / 1000);
  const claims = Object.freeze({ ...shapeB(now - 60), iss: IDP, sub: 'user-0' });
  const before = fresh(baseDist).revocation;
  const rows = [['the build before, a jti list (no rules)', () => before.checkRevocation(JTI_LIST, claims, now, 5)]];
  const same = fresh(dist).revocation;
  rows.push(['this build, the same jti list', () => same.checkRevocation(JTI_LIST, claims, now, 5)]);
  for (const count of [0, 10_000, 100_000]) {
    const { revocation, entry } = fresh(dist);
    const store = entry.createMemoryRevocationStore({ maxRules: Math.max(count, 1) });
    const list = store.follow(() => undefined, { ruleLifetime: 3605 });
    for (let i = 0; i < count / 4; i++) {
      await store.revokeSubject({ iss: IDP, sub: `revoked-${2 * i}` });
      await store.revokeSubject({ iss: IDP, sub: `revoked-${2 * i + 1}` });
      await store.revokeSession({ iss: IDP, sid: `session-${i}`, sub: `ended-${i}` });
    }
    if (list.stats().rules !== count) throw new Error(`the store holds ${list.stats().rules} of ${count}`);
    rows.push([
      `this build, createMemoryRevocationStore, ${count} rule entries`,
      () => revocation.checkRevocation(list, claims, now, 5),
    ]);
  }
  for (const [, fn] of rows) await nsPerCall(fn, { seconds: 0.1, samples: 1 }); // warm up
  const times = rows.map(() => []);
  for (let round = 0; round < ROUNDS; round++)
    for (let k = 0; k < rows.length; k++) {
      const at = (k + round) % rows.length;
      times[at].push(await nsPerCall(rows[at][1], { seconds: 0.1, samples: 1 }));
    }
  console.log(`check after the cache, ns per call, median of ${ROUNDS} interleaved rounds; vs the build before:`);
  for (let k = 0; k < rows.length; k++) {
    const diff = median(times[k].map((t, round) => t - times[0][round]));
    console.log(
      `  ${rows[k][0].padEnd(62)} ${median(times[k]).toFixed(1).padStart(7)} ns  ${k === 0 ? '' : `${diff >= 0 ? '+' : ''}${diff.toFixed(1)} ns`}`,
    );
  }
}

async function main() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  console.log(`load average ${require('node:os').loadavg()[0].toFixed(1)}, ${new Date().toISOString()}`);
  if (PARTS.has('check')) await check();
  if (!PARTS.has('memory') && !PARTS.has('propagation')) return;
  const redis = await startRedisServer();
  const admin = new Redis(redis.url);
  try {
    if (PARTS.has('memory')) await memory(redis.url, admin);
    if (PARTS.has('propagation')) await propagation(redis.url);
  } finally {
    await stopAllInstances();
    admin.disconnect();
    await redis.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
