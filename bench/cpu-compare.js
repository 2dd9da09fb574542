'use strict';
// bench/cpu.js as a child, its answer saved and summed up: the before/after table of a change on the request path.
//   BENCH_BASELINE_DIST=$PWD/bench/.tmp/dist-base node bench/cpu-compare.js <dist> [seconds] [rounds] [algs] [scenarios]
// cpu.js reports over IPC; this saves that message to bench/.tmp/cpu-<time>.json and prints, per algorithm and
// scenario, the median CPU µs per request, the median of its per-round differences to the limit ("above the
// limit") and, for a row with a baseline twin (`<name>@base`), the median of its per-round differences to that twin;
// "vs pair" for a row that names another (`versus`: the same route with and without requirements).
// Differences are taken within a round (the scenarios of one round run back to back), so they hold better than
// the medians when the machine's load drifts.
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { median } = require('./timing');
const { TMP } = require('./fixtures');

const DEFAULT_SCENARIOS =
  'floor,limit,fast-jwt,ours-cold,ours-nocache,ours-hot,ours-cold@base,ours-nocache@base,ours-hot@base';

function run(args) {
  const child = fork(path.join(__dirname, 'cpu.js'), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let result;
    child.on('message', (message) => {
      result = message;
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`cpu.js exited ${code}`))));
  });
}

const perRound = (a, b) => median(a.map((value, round) => value - b[round]));
const f2 = (value) => (Number.isFinite(value) ? value.toFixed(2) : '—');

function summary(report) {
  const lines = [];
  for (const [alg, rows] of Object.entries(report.results)) {
    lines.push(`\n${alg}: CPU µs per request, median of ${report.rounds} rounds of ${report.seconds} s`);
    lines.push(
      `${'scenario'.padEnd(20)}${'median'.padStart(9)}${'above limit'.padStart(13)}${'vs @base'.padStart(10)}${'vs pair'.padStart(10)}`,
    );
    const limit = rows.limit?.cpu;
    for (const [name, row] of Object.entries(rows)) {
      const above = limit && name !== 'limit' ? perRound(row.cpu, limit) : NaN;
      const base = rows[`${name}@base`];
      const change = base ? perRound(row.cpu, base.cpu) : NaN;
      const pair = row.versus && rows[row.versus] ? perRound(row.cpu, rows[row.versus].cpu) : NaN;
      lines.push(
        `${name.padEnd(20)}${f2(row.median).padStart(9)}${f2(above).padStart(13)}${f2(change).padStart(10)}${f2(pair).padStart(10)}`,
      );
    }
  }
  return lines.join('\n');
}

async function main() {
  const [dist, seconds = '0.3', rounds = '11', algs = 'HS256,RS256,ES256,EdDSA', scenarios] = process.argv.slice(2);
  if (!dist) throw new Error('usage: node bench/cpu-compare.js <dist> [seconds] [rounds] [algs] [scenarios]');
  const started = new Date();
  const load = os.loadavg()[0];
  const report = await run([path.resolve(dist), seconds, rounds, algs, scenarios ?? DEFAULT_SCENARIOS]);
  const saved = {
    started: started.toISOString(),
    loadAverage: [load, os.loadavg()[0]],
    dist,
    baseline: process.env.BENCH_BASELINE_DIST,
    ...report,
  };
  const file = path.join(TMP, `cpu-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(saved));
  process.stdout.write(
    `${summary(saved)}\n\nload average ${load.toFixed(1)} → ${os.loadavg()[0].toFixed(1)}; saved ${file}\n`,
  );
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
}

module.exports = { summary };
