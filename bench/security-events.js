'use strict';
/**
 * Security event figures (docs/continuous-access.md#figures):
 *
 * 1. Propagation: three instances (separate processes, __tests__/fixtures/events-app.js) on a real redis-server,
 *    behind one loopback load balancer, a push stream from the Keycloak-shaped loopback transmitter. For each of
 *    `--events` users: a token accepted (and cached) by all three, then the transmitter POSTs account-disabled for
 *    that user; timed from just before the POST until the last instance refuses the token (each instance asked in
 *    a loop). p50, p99, max.
 * 2. CPU per SET (push, verified): the receiver in this process (createMemoryRevocationStore, a real Express app on
 *    127.0.0.1), `--sets` distinct SETs POSTed one after the other by a child process; this process's CPU time
 *    (user + system) divided by the SETs.
 * 3. A flood: `--flood` hostile SETs (half with the push Authorization and a forged signature, half with a wrong
 *    Authorization) POSTed by a child, 32 at a time, while this process POSTs one genuine SET every 20 ms itself;
 *    the genuine SETs' latency (POST → 202) during the flood and without it, how many were stored, and the CPU per
 *    hostile SET.
 *
 *   node bench/security-events.js [--events 100] [--sets 2000] [--flood 10000] [--only propagation|cpu|flood]
 */
require('../scripts/ts-register');
const { fork } = require('node:child_process');
const os = require('node:os');
const { createHmac, generateKeyPairSync, randomUUID } = require('node:crypto');
const { createMemoryRevocationStore } = require('../lib');
const { receiveSet } = require('../lib/events/receive');
const { transmitterMetadata } = require('../lib/events/metadata');
const { createMemoryReceiverState } = require('../lib/events/state');
const { decodeJws } = require('../lib/jose/jws');
const { verifyJws } = require('../lib/jose/signature');
const { keysForHeader } = require('../lib/keys/source');
const { startRedisServer } = require('../__tests__/fixtures/redis-server');
const { startSsfTransmitter, keycloakSubjects, RISC } = require('../__tests__/fixtures/ssf-transmitter');
const { startEventsInstance, startBalancer, killAllEventsInstances } = require('../__tests__/fixtures/events-fleet');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}
const EVENTS = Number(option('events', 100));
const SETS = Number(option('sets', 2000));
const FLOOD = Number(option('flood', 10000));
const ONLY = option('only', undefined);
const SECRET = 'bench-security-events-secret-long-enough';
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const ms = (value) => `${value.toFixed(1)} ms`;
const clock = () => Date.now() / 1000;
const loadAverage = () =>
  `   load average ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}`;
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
function accessToken(iss, sub) {
  const now = Math.floor(Date.now() / 1000) - 2;
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iss, sub, aud: 'api', iat: now, exp: now + 600 })}`;
  return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
}

async function propagation() {
  const redis = await startRedisServer();
  const transmitter = await startSsfTransmitter();
  const instances = [];
  const balancer = await startBalancer(() => instances.map((instance) => `${instance.origin}/`));
  try {
    const config = {
      redisUrl: redis.url,
      secret: SECRET,
      tokenIssuer: transmitter.issuer,
      transmitter: {
        issuer: transmitter.issuer,
        audience: 'https://api.example.test',
        clientId: transmitter.clientId,
        clientSecret: transmitter.clientSecret,
      },
      delivery: 'push',
      authorization: `Bearer ${randomUUID()}`,
      publicUrl: `${balancer.origin}/security-events`,
    };
    instances.push(...(await Promise.all([1, 2, 3].map(() => startEventsInstance(config)))));
    const ready = await Promise.all(instances.map((instance) => instance.ready));
    if (ready.some((reason) => reason !== undefined)) throw new Error(`not ready: ${ready}`);
    const times = [];
    const stored = [];
    for (let i = 0; i < EVENTS; i++) {
      const user = `user-${i}`;
      const token = accessToken(transmitter.issuer, user);
      for (const instance of instances)
        if ((await instance.status(token)) !== 200) throw new Error('token refused before');
      const set = transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, user));
      const started = performance.now();
      const posted = transmitter.deliver(set).then((answer) => {
        stored.push(performance.now() - started);
        return answer;
      });
      const refusedAt = await Promise.all(
        instances.map(async (instance) => {
          // Asked again every millisecond or so: the asking itself must not be what the figure measures.
          for (let tries = 0; tries < 10_000; tries++) {
            if ((await instance.status(token)) === 401) return performance.now();
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          throw new Error('never refused');
        }),
      );
      if ((await posted).status !== 202) throw new Error('SET not accepted');
      times.push(Math.max(...refusedAt) - started);
    }
    console.log(`\n1. POST of the SET → the last of 3 instances refusing the token (${EVENTS} events, loopback Redis)`);
    console.log(
      `   p50 ${ms(percentile(times, 0.5))}   p99 ${ms(percentile(times, 0.99))}   max ${ms(Math.max(...times))}`,
    );
    console.log(
      `   (the POST answered 202, its rule stored: p50 ${ms(percentile(stored, 0.5))}, p99 ${ms(percentile(stored, 0.99))})`,
    );
    console.log(loadAverage());
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await killAllEventsInstances();
    await balancer.close();
    await transmitter.close();
    await redis.close();
  }
}

/** The receiver alone in a child process (bench/security-events-receiver.js): its URL, and what it asks of it. */
async function receiver(transmitter, authorization) {
  const child = fork(require.resolve('./security-events-receiver.js'), [], {
    env: { ...process.env, RECEIVER_CONFIG: JSON.stringify({ issuer: transmitter.issuer, authorization }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ask = (question) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send(question);
    });
  const { port } = await new Promise((resolve) => child.once('message', resolve));
  return {
    url: `http://127.0.0.1:${port}/events`,
    /** Its CPU time so far, µs. */
    cpu: async () => {
      const { cpu } = await ask('cpu');
      return cpu.user + cpu.system;
    },
    stats: async () => (await ask('stats')).stats.transmitters[0],
    close: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.disconnect();
      }),
  };
}

/**
 * POST these bodies from a child process (bench/security-events-sender.js), `concurrency` at a time: resolves with a
 * `start()` to call once the child holds them (so that their transfer is not in a measure), which resolves with the
 * count of each status.
 */
function sender(url, items, concurrency) {
  return new Promise((resolve, reject) => {
    const child = fork(require.resolve('./security-events-sender.js'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('error', reject);
    child.once('message', () =>
      resolve({
        start: () =>
          new Promise((done) => {
            child.once('message', done);
            child.send({ go: true });
          }),
      }),
    );
    child.send({ url, items, concurrency });
  });
}

/** POST these bodies from a child process and wait for its answer. */
const send = async (url, items, concurrency) => (await sender(url, items, concurrency)).start();

async function cpuPerSet() {
  const transmitter = await startSsfTransmitter();
  const authorization = `Bearer ${randomUUID()}`;
  const target = await receiver(transmitter, authorization);
  try {
    const set = (i) =>
      transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, `cpu-${i}`));
    await send(target.url, [{ body: set(-1), authorization }], 1); // warm: metadata and key set fetched
    const items = Array.from({ length: SETS }, (_, i) => ({ body: set(i), authorization }));
    const loaded = await sender(target.url, items, 1);
    const before = await target.cpu();
    const answered = await loaded.start();
    const used = (await target.cpu()) - before;
    const { applied } = await target.stats();
    console.log(`\n2. CPU per SET, push, signature verified, rule stored (${SETS} SETs, RS256, memory store)`);
    console.log(
      `   ${(used / SETS).toFixed(1)} µs of the receiver's CPU per SET (HTTP and Express included); ${applied - 1} applied, statuses ${JSON.stringify(answered.statuses)}`,
    );
    console.log(loadAverage());
  } finally {
    await target.close();
    await transmitter.close();
  }
  await pipelineCpu();
}

/**
 * The same SETs through the receiver's own pipeline in this process, without HTTP: read and verify (the one JOSE
 * core, RS256), the event table, the jti memory, the rule stored in createMemoryRevocationStore.
 */
async function pipelineCpu() {
  const transmitter = await startSsfTransmitter();
  const metadata = transmitterMetadata(transmitter.issuer, { clock, allowInsecureHttp: false, named: 'bench' });
  try {
    await metadata.get();
    await metadata.keys.ready();
    const source = {
      issuer: transmitter.issuer,
      audience: 'https://api.example.test',
      keys: metadata.keys,
      criticalMembers: () => [],
      verification: async () => 'unrequested',
      streamUpdated: () => undefined,
    };
    const context = {
      store: createMemoryRevocationStore({ maxRules: 1_000_000 }),
      state: createMemoryReceiverState(),
      actions: new Map(),
      naming: { claims: new Map(), names: () => true, defaultIssuer: transmitter.issuer },
      tokenLife: 3600,
      clock,
      clockTolerance: 0,
      maxAge: 7 * 24 * 3600,
    };
    const sets = Array.from({ length: SETS + 1 }, (_, i) =>
      transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, `pipeline-${i}`)),
    );
    await receiveSet(sets[0], source, context);
    // For scale on this machine now: the strict read and the RS256 signature check alone, per SET.
    const [key] = await keysForHeader(metadata.keys, decodeJws(sets[0]).header, {});
    const scale = process.cpuUsage();
    for (let i = 1; i < sets.length; i++) verifyJws(sets[i], decodeJws(sets[i]).signedEnd, 'RS256', key);
    const verified = process.cpuUsage(scale);
    const before = process.cpuUsage();
    for (let i = 1; i < sets.length; i++) {
      const outcome = await receiveSet(sets[i], source, context);
      if (outcome.status !== 'accepted' || outcome.outcome !== 'applied') throw new Error(JSON.stringify(outcome));
    }
    const used = process.cpuUsage(before);
    console.log(
      `   the receiver's own work in process, without HTTP: ${((used.user + used.system) / SETS).toFixed(1)} µs CPU per SET (verify, decide, store)`,
    );
    console.log(
      `   (for scale, the same run: decoding and the RS256 signature check alone ${((verified.user + verified.system) / SETS).toFixed(1)} µs per SET)`,
    );
    console.log(loadAverage());
  } finally {
    metadata.close();
    await transmitter.close();
  }
}

async function flood() {
  const transmitter = await startSsfTransmitter();
  const authorization = `Bearer ${randomUUID()}`;
  const target = await receiver(transmitter, authorization);
  const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  try {
    const genuine = (tag, i) =>
      transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, `${tag}-${i}`));
    const post = async (body) => {
      const started = performance.now();
      const answer = await fetch(target.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/secevent+jwt', Authorization: authorization },
        body,
      });
      await answer.body?.cancel();
      if (answer.status !== 202) throw new Error(`genuine SET answered ${answer.status}`);
      return performance.now() - started;
    };
    await post(genuine('warm', 0));
    /** One genuine SET every 20 ms until `done` settles: their latencies. */
    const steady = async (tag, done) => {
      const times = [];
      let over = false;
      void done.then(() => (over = true));
      for (let i = 0; !over || times.length < 20; i++) {
        times.push(await post(genuine(tag, i)));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return times;
    };
    const quiet = await steady('quiet', new Promise((resolve) => setTimeout(resolve, 2000)));
    const hostile = Array.from({ length: FLOOD }, (_, i) => {
      const claims = {
        jti: randomUUID(),
        iss: transmitter.issuer,
        iat: Math.floor(Date.now() / 1000),
        aud: 'https://api.example.test',
        sub_id: keycloakSubjects.user(transmitter.issuer, 'victim'),
        events: { [`${RISC}account-disabled`]: {} },
      };
      return i % 2 === 0
        ? { body: transmitter.sign(claims, { key: forger }), authorization }
        : { body: transmitter.sign(claims), authorization: 'Bearer guessed' };
    });
    const loaded = await sender(target.url, hostile, 32);
    const before = await target.cpu();
    const storedBefore = (await target.stats()).applied;
    const flooding = loaded.start();
    const during = await steady('flood', flooding);
    const answered = await flooding;
    const used = (await target.cpu()) - before;
    const stats = await target.stats();
    console.log(
      `\n3. ${FLOOD} hostile SETs (half forged signatures with the push Authorization, half a wrong one), 32 at a time`,
    );
    console.log(`   hostile statuses ${JSON.stringify(answered.statuses)}, refused ${JSON.stringify(stats.refused)}`);
    console.log(
      `   genuine SETs: without the flood p50 ${ms(percentile(quiet, 0.5))} p99 ${ms(percentile(quiet, 0.99))}; during it p50 ${ms(percentile(during, 0.5))} p99 ${ms(percentile(during, 0.99))}; ${during.length} sent during, ${stats.applied - storedBefore} stored, all 202`,
    );
    console.log(
      `   receiver CPU during the flood: ${(used / FLOOD).toFixed(1)} µs per hostile SET (the genuine ones included)`,
    );
    console.log(loadAverage());
  } finally {
    await target.close();
    await transmitter.close();
  }
}

async function main() {
  if (ONLY === undefined || ONLY === 'propagation') await propagation();
  if (ONLY === undefined || ONLY === 'cpu') await cpuPerSet();
  if (ONLY === undefined || ONLY === 'flood') await flood();
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
