'use strict';
// Profiling aid: run one verification path in a tight loop (no HTTP) so `node --cpu-prof` sees only our code.
//   node bench/run.js --micro   (builds bench/.tmp/dist), or build it by hand, then:
//   node --cpu-prof --cpu-prof-dir=bench/.tmp/prof bench/profile.js <dist> <HS256|RS256|ES256> <hot|cold|nocache> [seconds]
//   node bench/profile.js --summary bench/.tmp/prof/<file>.cpuprofile     self time by function, top 30
const fs = require('node:fs');

function summary(file) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const f = node.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^.*\/work\/main\//, '')}:${f.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + (dt[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) {
    process.stdout.write(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}\n`);
  }
}

async function loop(dist, alg, mode, seconds) {
  const { loadFixtures } = require('./fixtures');
  const fixtures = await loadFixtures(dist);
  const { createTokenAuth } = require(`${dist}/index.js`);
  const pool = fixtures.pools[alg];
  const key = alg === 'HS256' ? { secret: fixtures.keys.HS256.secret } : { publicKey: fixtures.keys[alg].publicKey };
  const auth = createTokenAuth({
    key,
    issuer: fixtures.issuer,
    audience: fixtures.audience,
    ...(mode === 'nocache' ? { cache: false } : {}),
  });
  const mw = auth.requireVerifiedUser(['identify']);
  const reqs = (mode === 'hot' ? pool.slice(0, 1) : pool).map((t) => ({
    method: 'GET',
    headers: { authorization: `Bearer ${t}` },
    rawHeaders: ['Host', '127.0.0.1', 'Authorization', `Bearer ${t}`],
  }));
  let failures = 0;
  const res = { status: () => res, setHeader: () => undefined, json: () => failures++ };
  const stop = Date.now() + seconds * 1000;
  let n = 0;
  while (Date.now() < stop) {
    for (let k = 0; k < 256; k++) mw(reqs[n++ % reqs.length], res, () => undefined);
  }
  process.stdout.write(`${n} calls, ${((seconds * 1e9) / n).toFixed(0)} ns/call, ${failures} failures\n`);
}

const args = process.argv.slice(2);
if (args[0] === '--summary') summary(args[1]);
else loop(args[0], args[1], args[2], Number(args[3] ?? 5));
