'use strict';
// Instructions per request under callgrind: a count that does not move with the machine's load, for decisions on
// a shared machine where CPU time drifts by a few percent between windows. The scenarios, requests and runner are
// bench/cpu.js's own; each scenario runs in a process of its own under valgrind: a warm-up, then `rounds` windows of
// `n` requests, each window bracketed by calls to process.cpuUsage(), at which callgrind dumps its counters
// (`--dump-before=uv_getrusage`), so every window's instructions land in a file of their own. The figure is the
// mean over windows of a window's count divided by `n` (garbage collection included, as it falls). Node runs
// single-threaded (callgrind counts every thread: background compiles and GC would land in whichever window they
// overlap) with fixed seeds, so a run repeats its counts. Cold scenarios use a distinct token for every request,
// warm-up included (keep WARM + n × rounds within the pool of 20 000); hot ones one token throughout.
//   node bench/instructions.js <dist> [algs] [scenarios] [requests per window] [rounds]
// With BENCH_BASELINE_DIST set, the `ours-*@base` scenarios run on that build (as in bench/cpu.js). Needs valgrind
// on PATH (Debian: apt-get install valgrind); INSTRUCTIONS_JOBS valgrind processes at a time (default 2).
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadFixtures, ALGS, TMP } = require('./fixtures');

const WARM = 3000;
const DEFAULT_SCENARIOS = ['floor', 'limit', 'fast-jwt', 'ours-cold', 'ours-nocache', 'ours-hot'];

/** Inside valgrind: build one scenario, warm it, then run `rounds` windows of `n` requests. */
async function drive(file, dist, alg, name, n, rounds) {
  const { SCENARIOS, request, runner } = require('./cpu');
  const fixtures = JSON.parse(fs.readFileSync(file, 'utf8'));
  const ctx = { alg, dist, baseDist: process.env.BENCH_BASELINE_DIST, ...fixtures };
  const pool = fixtures.pool.map((t) => `Bearer ${t}`);
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (scenario === undefined) throw new Error(`no scenario ${name}`);
  const { run, failures } = runner(scenario.build(ctx));
  let cursor = 0;
  const go = async (count) => {
    for (let i = 0; i < count; i++) {
      const pending = run(request(pool[scenario.hot ? 0 : cursor++ % pool.length]));
      if (pending !== undefined) await pending;
    }
  };
  await go(WARM);
  process.cpuUsage(); // callgrind dumps here: start-up and warm-up are in dump 1
  for (let round = 0; round < rounds; round++) {
    await go(n);
    process.cpuUsage(); // and each window in a dump of its own
  }
  if (failures() > 0) throw new Error(`${alg} ${name}: ${failures()} requests refused`);
}

/** One valgrind run of one scenario: instructions per request of each window. */
function measure(file, dist, alg, name, n, rounds) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'instructions-'));
  const args = [
    '--tool=callgrind',
    '--dump-before=uv_getrusage',
    `--callgrind-out-file=${dir}/cg`,
    process.execPath,
    '--single-threaded',
    '--hash-seed=1',
    '--random-seed=1',
    path.join(__dirname, 'instructions.js'),
    '--drive',
    file,
    dist,
    alg,
    name,
    String(n),
    String(rounds),
  ];
  return new Promise((resolve, reject) => {
    execFile('valgrind', args, { maxBuffer: 1 << 24 }, (err, _stdout, stderr) => {
      try {
        if (err) throw new Error(`${alg} ${name}: ${err.message}\n${stderr.slice(-2000)}`);
        const windows = [];
        for (let k = 2; k <= rounds + 1; k++) {
          const text = fs.readFileSync(`${dir}/cg.${k}`, 'utf8');
          windows.push(Number(/^summary: (\d+)/m.exec(text)[1]) / n);
        }
        resolve(windows);
      } catch (error) {
        reject(error);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/** Run `jobs` (functions returning promises) at most `width` at a time. */
async function pooled(jobs, width) {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]();
  };
  await Promise.all(Array.from({ length: width }, worker));
}

async function main() {
  const [dist, algsArg, scenariosArg, nArg, roundsArg] = process.argv.slice(2);
  const n = Number(nArg ?? 2000);
  const rounds = Number(roundsArg ?? 5);
  const distPath = path.resolve(dist);
  const fixtures = await loadFixtures(distPath);
  const algs = algsArg ? algsArg.split(',') : ALGS;
  const names = scenariosArg ? scenariosArg.split(',') : DEFAULT_SCENARIOS;
  const results = {};
  const jobs = [];
  for (const alg of algs) {
    // Only what one algorithm needs, so that valgrind's node does not parse the whole pool file.
    const file = path.join(TMP, `instructions-${alg}.json`);
    const { keys, issuer, audience } = fixtures;
    fs.writeFileSync(
      file,
      JSON.stringify({ keys, issuer, audience, pool: fixtures.pools[alg].slice(0, WARM + n * rounds) }),
    );
    results[alg] = {};
    for (const name of names) {
      jobs.push(async () => {
        const windows = await measure(file, distPath, alg, name, n, rounds);
        results[alg][name] = { mean: mean(windows), windows };
        const shown = windows.map((w) => Math.round(w)).join(' ');
        process.stderr.write(`  ${alg} ${name.padEnd(18)} ${Math.round(mean(windows))} Ir/request (${shown})\n`);
      });
    }
  }
  // Counts do not depend on what else runs: two at a time, for the wall clock only.
  await pooled(jobs, Number(process.env.INSTRUCTIONS_JOBS ?? 2));
  process.stdout.write(`${''.padEnd(20)}${algs.map((a) => a.padStart(9)).join('')}\n`);
  for (const name of names) {
    const cells = algs.map((alg) => String(Math.round(results[alg][name].mean)).padStart(9));
    process.stdout.write(`${name.padEnd(20)}${cells.join('')}\n`);
  }
  const out = path.join(TMP, `instructions-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(out, JSON.stringify({ dist, baseline: process.env.BENCH_BASELINE_DIST, n, rounds, results }));
  process.stdout.write(`Ir per request, mean of ${rounds} windows of ${n} after ${WARM} to warm up; saved ${out}\n`);
}

if (process.argv[2] === '--drive') {
  const [file, dist, alg, name, n, rounds] = process.argv.slice(3);
  drive(file, dist, alg, name, Number(n), Number(rounds)).catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
}
