'use strict';
// Ten DPoP keys flood the in-process replay store together (the security review's finding): the store alone, two
// builds side by side in one process (before, after), no HTTP. Each of ten keys claims in turn until refused; then
// prints what the flood left free, whether a fresh key still gets in, and CPU ns per claimOnce, interleaved rounds
// of both builds: a flooder refused, a fresh key (each claim a new key), a keyless claim on a store full of live
// ids, and an accepted claim on a store 72 % full. Medians over rounds of process CPU time (user + system).
// Usage: npm run build && node bench/dpop-replay-share.js <dist before> [dist after = dist] [rounds = 7]
const path = require('node:path');

const before = path.resolve(process.argv[2] ?? '');
const after = path.resolve(process.argv[3] ?? path.join(__dirname, '..', 'dist'));
const ROUNDS = Number(process.argv[4] ?? 7);
const MAX = 100_000;
const BATCH = 2000;
const builds = [
  ['before', before],
  ['after', after],
].map(([name, dist]) => [name, require(`${dist}/dpop/replay.js`).createMemoryReplayStore]);

let ids = 0;
const claim = (store, key) => {
  try {
    return store.claimOnce(`id-${ids++}`, 1060, key) ? 'ok' : 'replay';
  } catch (err) {
    return /full/.test(err.message) ? 'full' : 'share';
  }
};

/** Ten keys claiming in turn, each until refused (at most MAX rounds). */
function flooded(create) {
  const store = create({ max: MAX, clock: () => 1000 });
  const live = new Set(Array.from({ length: 10 }, (_, i) => `flooder-${i}`));
  for (let round = 0; round < MAX && live.size > 0; round++) {
    for (const key of [...live]) if (claim(store, key) !== 'ok') live.delete(key);
  }
  return store;
}

/** CPU ns per call of `fn`, BATCH calls. */
function nsPer(fn) {
  const start = process.cpuUsage();
  for (let i = 0; i < BATCH; i++) fn(i);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / BATCH;
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

const scenarios = {
  'flooder refused (ten keys flooded the store)': (create) => {
    const store = flooded(create);
    return () => claim(store, 'flooder-3');
  },
  'fresh key (ten keys flooded the store; a new key each claim)': (create) => {
    const store = flooded(create);
    let n = 0;
    return () => claim(store, `fresh-${n++}`);
  },
  'keyless claim, store full of 100 000 live ids': (create) => {
    const store = create({ max: MAX, clock: () => 1000 });
    for (let i = 0; i < MAX; i++) store.claimOnce(`live-${i}`, 1060);
    return () => claim(store, undefined);
  },
  'accepted claim, 72 000 held by 720 keys, a new key each claim': (create) => {
    const store = create({ max: MAX, clock: () => 1000 });
    for (let i = 0; i < 72_000; i++) store.claimOnce(`bg-${i}`, 1060, `bg-${i % 720}`);
    let n = 0;
    return () => claim(store, `new-${n++}`);
  },
};

console.log(
  `node ${process.version}; before ${before}; after ${after}; ${ROUNDS} interleaved rounds of ${BATCH} claims`,
);
for (const [name, create] of builds) {
  const store = flooded(create);
  const free = MAX - store.size;
  const fresh = Array.from({ length: 20 }, () => claim(store, 'one-fresh-key'));
  console.log(
    `${name}: ten keys flooding leave ${free} of ${MAX} free; a fresh key's 20 claims: ${[...new Set(fresh)].join(', ')}`,
  );
}
for (const [label, make] of Object.entries(scenarios)) {
  const samples = { before: [], after: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, create] of builds) {
      const run = make(create); // a fresh store each round, so a round never runs out of room
      samples[name].push(nsPer(run));
    }
  }
  const [b, a] = [median(samples.before), median(samples.after)];
  console.log(
    `${label}: before ${b.toFixed(0)} ns, after ${a.toFixed(0)} ns CPU per claimOnce (after ÷ before ${(a / b).toFixed(2)})`,
  );
}
