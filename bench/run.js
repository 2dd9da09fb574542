#!/usr/bin/env node
'use strict';
// `npm run bench`: the in-process CPU table (bench/cpu.js, the headline: every middleware called directly,
// interleaved rounds, medians), load benchmarks (every scenario's Express 5 server in its own process, autocannon
// in this one, scenarios interleaved over several rounds, medians and ratios to bare Express of the same round),
// then the micro-benchmarks of verify() and the 1 000 000-token memory run. Writes bench/RESULTS.md on a full run.
//
//   npm run bench                 full run (about 17 minutes on 2 cores), writes bench/RESULTS.md
//   npm run bench -- --quick      under 2 minutes: load only, 2 rounds of 1 s, no reference rows
//   npm run bench -- --ci         every scenario for ~1 s, a short micro and memory pass: keeps the script working
//   npm run bench -- --memory     the memory run only;  --micro: the micro-benchmarks only;  --load: load only;
//                                 --cpu: the in-process CPU table only
//   options: --algs HS256,RS256  --scenarios bare,ours-cold  --rounds N  --duration S  --prof (CPU profiles of
//            this package's servers into bench/.tmp/prof)  --baseline DIR (a copy of an earlier lib/ in DIR/lib:
//            its ours-* scenarios run too, as "…@base", interleaved with the current ones: before/after in one run)
const { execFileSync, fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const autocannon = require('autocannon');
const { loadFixtures, ALGS, TMP } = require('./fixtures');
const { SCENARIOS, ROUTE, BODY } = require('./scenarios');
const { median, fmtInt, fmtRatio, table } = require('./stats');

const ROOT = path.join(__dirname, '..');
const DIST = path.join(TMP, 'dist');
const BASE_DIST = path.join(TMP, 'dist-base');
const CONNECTIONS = 10;
/** The cold targets of docs/benchmarks.md, as a share of bare Express. */
const COLD_TARGET = { HS256: 0.9, RS256: 0.8, ES256: 0.6 };
const HOT_TARGET = 0.95;
const PEERS = ['express-jwt', 'oauth2-bearer', 'passport-jwt', 'fast-jwt'];

function parseArgs(argv) {
  const opts = { mode: 'full', parts: new Set(['cpu', 'load', 'micro', 'memory']) };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => argv[++i];
    if (arg === '--quick') opts.mode = 'quick';
    else if (arg === '--ci') opts.mode = 'ci';
    else if (arg === '--memory' || arg === '--micro' || arg === '--load' || arg === '--cpu') {
      if (!opts.only) opts.parts = new Set();
      opts.only = true;
      opts.parts.add(arg.slice(2));
    } else if (arg === '--algs') opts.algs = value().split(',');
    else if (arg === '--scenarios') opts.scenarios = value().split(',');
    else if (arg === '--rounds') opts.rounds = Number(value());
    else if (arg === '--duration') opts.duration = Number(value());
    else if (arg === '--prewarm') opts.prewarm = Number(value());
    else if (arg === '--prof') opts.prof = true;
    else if (arg === '--baseline') opts.baseline = path.resolve(value());
    else throw new Error(`unknown argument ${arg}`);
  }
  const plans = {
    full: {
      rounds: 8,
      duration: 2,
      warmup: 2,
      prewarm: 1,
      microSeconds: 0.6,
      memoryTokens: 1_000_000,
      cpuSeconds: 0.3,
      cpuRounds: 11,
    },
    // autocannon runs whole seconds, so the quick run is 3 s per scenario and leaves out the two reference rows.
    quick: {
      rounds: 2,
      duration: 1,
      warmup: 1,
      prewarm: 0,
      microSeconds: 0.2,
      memoryTokens: 200_000,
      skip: ['limit', 'floor'],
      cpuSeconds: 0.1,
      cpuRounds: 3,
    },
    ci: {
      rounds: 1,
      duration: 1,
      warmup: 0,
      prewarm: 0,
      microSeconds: 0.05,
      memoryTokens: 20_000,
      cpuSeconds: 0.02,
      cpuRounds: 1,
    },
  };
  opts.plan = { ...plans[opts.mode] };
  if (opts.mode === 'quick' && !opts.only) opts.parts = new Set(['cpu', 'load']);
  if (opts.rounds) opts.plan.rounds = opts.rounds;
  if (opts.duration) opts.plan.duration = opts.duration;
  if (opts.prewarm !== undefined) opts.plan.prewarm = opts.prewarm;
  opts.algs ??= ALGS;
  return opts;
}

const log = (msg) => process.stderr.write(`${msg}\n`);

/** A private build of lib/ so the benchmark never races with others' dist/. */
function build() {
  log('building lib/ into bench/.tmp/dist');
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', DIST],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

/** Compile an earlier copy of lib/ (DIR/lib) with the same compiler settings, for before/after runs. */
function buildBaseline(dir) {
  log(`building baseline ${path.relative(ROOT, dir)}/lib into bench/.tmp/dist-base`);
  const config = path.join(dir, 'tsconfig.bench.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      extends: path.join(ROOT, 'tsconfig.build.json'),
      compilerOptions: { rootDir: 'lib', outDir: BASE_DIST, declaration: false },
      include: ['lib'],
    }),
  );
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', config], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}

/** The baseline twin of each of this package's scenarios: same setup, the earlier build. */
function withBaseline(scenarios) {
  const twins = scenarios
    .filter((s) => s.name.startsWith('ours'))
    .map((s) => ({ ...s, name: `${s.name}@base`, label: `${s.label} [baseline]`, dist: BASE_DIST }));
  return [...scenarios, ...twins];
}

function startServer(scenario, alg, fixtures, prof) {
  const execArgv =
    prof && scenario.name.startsWith('ours')
      ? [
          '--cpu-prof',
          `--cpu-prof-dir=${path.join(TMP, 'prof')}`,
          `--cpu-prof-name=${scenario.name}-${alg}-${process.pid}.cpuprofile`,
        ]
      : [];
  const child = fork(path.join(__dirname, 'server.js'), [], {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${scenario.name} (${alg}) server exited with ${code}`)));
    child.once('message', (msg) => resolve({ scenario, child, port: msg.port }));
    child.send({
      scenario: scenario.name.replace(/@base$/, ''),
      alg,
      dist: scenario.dist ?? DIST,
      keys: fixtures.keys,
      issuer: fixtures.issuer,
      audience: fixtures.audience,
    });
  });
}

function stopServer(server) {
  server.child.removeAllListeners('exit');
  return new Promise((resolve) => {
    server.child.once('exit', resolve);
    server.child.send('stop');
  });
}

/** Before measuring: a valid token gets the body, no token and a forged token get 401 (except on bare Express). */
async function sanityCheck(server, token) {
  const url = `http://127.0.0.1:${server.port}${ROUTE}`;
  const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = await ok.text();
  if (ok.status !== 200 || body !== JSON.stringify(BODY))
    throw new Error(`${server.scenario.name}: valid token answered ${ok.status}`);
  if (server.scenario.name === 'bare' || server.scenario.name === 'floor') return;
  // The limit scenario checks only the signature, so a missing token is merely unreadable: still a 401.
  const forged = `${token.slice(0, -6)}${token.slice(-6) === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA'}`;
  for (const headers of [{}, { authorization: `Bearer ${forged}` }]) {
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 401)
      throw new Error(
        `${server.scenario.name}: ${headers.authorization ? 'forged' : 'missing'} token answered ${res.status}`,
      );
  }
}

/** The server's CPU time (µs) and requests answered so far. */
function usage(server) {
  return new Promise((resolve) => {
    const onMessage = (msg) => {
      if (msg.usage === undefined) return;
      server.child.off('message', onMessage);
      resolve(msg.usage);
    };
    server.child.on('message', onMessage);
    server.child.send('usage');
  });
}

/**
 * Load one server for `seconds` with CONNECTIONS connections; the tokens rotate, one per request. Resolves to
 * requests/s and the server's CPU µs per request over the same window.
 */
async function measure(server, seconds, prewarm) {
  // Unmeasured load first: interleaving leaves each server idle while the others run, and V8 shrinks an idle
  // heap; without this, every window would start by regrowing it (worst for large caches), not in steady state.
  if (prewarm > 0) await load(server, server.tokens, server.cursor, prewarm);
  const before = await usage(server);
  const rps = await load(server, server.tokens, server.cursor, seconds);
  const after = await usage(server);
  return { rps, cpu: (after.cpu - before.cpu) / (after.requests - before.requests) };
}

/** autocannon counts whole seconds: a fraction runs for the next whole second. */
function load(server, tokens, cursor, seconds) {
  const headers = tokens.map((t) => `Bearer ${t}`);
  return autocannon({
    url: `http://127.0.0.1:${server.port}${ROUTE}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        setupRequest(req) {
          req.headers.authorization = headers[cursor.next++ % headers.length];
          return req;
        },
      },
    ],
  }).then((result) => {
    const failures = result.non2xx + result.errors + result.timeouts;
    if (failures > 0) throw new Error(`${server.scenario.name}: ${failures} failed requests under load`);
    return result.requests.total / result.duration;
  });
}

async function runLoadGroup(alg, scenarios, fixtures, plan, prof) {
  const pool = fixtures.pools[alg];
  log(`\n[${alg}] starting ${scenarios.length} servers`);
  const servers = await Promise.all(scenarios.map((s) => startServer(s, alg, fixtures, prof)));
  const rps = new Map(servers.map((s) => [s.scenario.name, []]));
  const cpu = new Map(servers.map((s) => [s.scenario.name, []]));
  try {
    for (const server of servers) {
      await sanityCheck(server, pool[pool.length - 1]);
      server.tokens = server.scenario.traffic === 'hot' ? [pool[0]] : pool;
      server.cursor = { next: 0 };
      if (plan.warmup > 0) await load(server, server.tokens, server.cursor, plan.warmup);
    }
    for (let round = 0; round < plan.rounds; round++) {
      // Interleaved: every scenario once per round; the starting scenario rotates so none always follows another.
      for (let k = 0; k < servers.length; k++) {
        const server = servers[(k + round) % servers.length];
        const value = await measure(server, plan.duration, plan.prewarm);
        rps.get(server.scenario.name).push(value.rps);
        cpu.get(server.scenario.name).push(value.cpu);
        log(
          `[${alg}] round ${round + 1}/${plan.rounds} ${server.scenario.name.padEnd(20)} ${fmtInt(value.rps)} req/s  ${value.cpu.toFixed(1)} CPU µs/req`,
        );
      }
    }
  } finally {
    await Promise.all(servers.map(stopServer));
  }
  return { rps, cpu };
}

/**
 * Per scenario: median req/s, the median over rounds of its ratio to bare Express in the same round, and the same
 * two for CPU time per request (the ratio as bare's CPU µs ÷ the scenario's, so that higher is better everywhere).
 */
function summarize({ rps, cpu }) {
  const bare = rps.get('bare');
  const bareCpu = cpu.get('bare');
  const out = {};
  for (const [name, values] of rps) {
    const ratios = bare ? values.map((v, r) => v / bare[r]) : [];
    const cpus = cpu.get(name);
    out[name] = {
      rps: median(values),
      ratio: median(ratios),
      min: Math.min(...ratios),
      max: Math.max(...ratios),
      values,
      cpu: median(cpus),
      cpuRatio: bareCpu ? median(cpus.map((c, r) => bareCpu[r] / c)) : NaN,
      cpus,
    };
  }
  for (const name of ['ours-cold', 'ours-cold@base']) {
    const ours = rps.get(name);
    if (!ours) continue;
    for (const peer of PEERS) {
      if (rps.has(peer)) out[name][`vs:${peer}`] = median(ours.map((v, r) => v / rps.get(peer)[r]));
    }
  }
  for (const [name, values] of rps) {
    const base = rps.get(`${name}@base`);
    if (base) out[name]['vs:base'] = median(values.map((v, r) => v / base[r]));
    const baseCpu = cpu.get(`${name}@base`);
    if (baseCpu) out[name]['cpu:vs:base'] = median(cpu.get(name).map((c, r) => baseCpu[r] / c));
  }
  return out;
}

function runChild(script, args, execArgv = []) {
  const child = fork(path.join(__dirname, script), args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let result;
    child.on('message', (msg) => {
      result = msg;
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 && result ? resolve(result) : reject(new Error(`${script} exited with ${code}`)),
    );
  });
}

function loadReport(load, plan) {
  const parts = [];
  const label = (name) =>
    `${SCENARIOS.find((s) => s.name === name.replace(/@base$/, '')).label}${name.endsWith('@base') ? ' [baseline]' : ''}`;
  for (const [alg, summary] of Object.entries(load)) {
    const compared = Object.values(summary).some((s) => 'vs:base' in s);
    const rows = Object.entries(summary).map(([name, s]) => [
      label(name),
      fmtInt(s.rps),
      name === 'bare' ? '1.00×' : fmtRatio(s.ratio),
      name === 'bare' ? '' : `${fmtRatio(s.min)} – ${fmtRatio(s.max)}`,
      s.cpu.toFixed(1),
      name === 'bare' ? '1.00×' : fmtRatio(s.cpuRatio),
      ...(compared ? [fmtRatio(s['vs:base']), fmtRatio(s['cpu:vs:base'])] : []),
    ]);
    const header = [
      'scenario',
      'req/s (median)',
      '× bare (median of rounds)',
      'range over rounds',
      'server CPU µs/req',
      'CPU: bare ÷ this',
      ...(compared ? ['req/s × baseline', 'CPU: baseline ÷ this'] : []),
    ];
    parts.push(`### ${alg}\n\n${table(header, rows)}`);
  }
  const peerRows = [];
  const cpuRows = [];
  for (const [alg, summary] of Object.entries(load)) {
    const ours = summary['ours-cold'];
    const hot = summary['ours-hot'];
    const limit = summary.limit;
    if (!ours) continue;
    const ahead = PEERS.every((p) => !(p in summary) || ours[`vs:${p}`] > 1);
    peerRows.push([
      alg,
      ...PEERS.map((p) => fmtRatio(ours[`vs:${p}`])),
      COLD_TARGET[alg] === undefined
        ? fmtRatio(ours.ratio)
        : `${fmtRatio(ours.ratio)} (target ${COLD_TARGET[alg].toFixed(2)}: ${ours.ratio >= COLD_TARGET[alg] ? 'met' : 'missed'})`,
      hot ? `${fmtRatio(hot.ratio)} (target ${HOT_TARGET}: ${hot.ratio >= HOT_TARGET ? 'met' : 'missed'})` : '—',
      limit ? fmtRatio(limit.ratio) : '—',
      summary.floor ? fmtRatio(summary.floor.ratio) : '—',
      ahead ? 'yes' : 'no',
    ]);
    const cpuVs = (name) =>
      summary[name] ? fmtRatio(median(summary[name].cpus.map((c, r) => c / ours.cpus[r]))) : '—';
    cpuRows.push([
      alg,
      ours.cpu.toFixed(1),
      summary.bare ? summary.bare.cpu.toFixed(1) : '—',
      ...PEERS.map(cpuVs),
      fmtRatio(ours.cpuRatio),
      hot ? fmtRatio(hot.cpuRatio) : '—',
      limit ? fmtRatio(limit.cpuRatio) : '—',
      summary.floor ? fmtRatio(summary.floor.cpuRatio) : '—',
    ]);
  }
  if (peerRows.length > 0) {
    parts.unshift(
      `### Summary: this package, cold traffic, against each peer (same run, same tokens)\n\n${table(
        [
          'alg',
          '× express-jwt',
          '× express-oauth2-jwt-bearer',
          '× passport-jwt',
          '× fast-jwt',
          'cold × bare',
          'hot × bare',
          'limit × bare',
          'floor × bare',
          'ahead of every peer',
        ],
        peerRows,
      )}\n\nEach "× peer" is the median over rounds of (this package's cold req/s ÷ the peer's, same round). "limit" is no ` +
        'verifier: a raw node:crypto signature check plus JSON.parse of the payload in the thinnest middleware, the most ' +
        'any verifier can reach on cold traffic on this machine. "floor" is no verifier either: one no-op middleware that ' +
        'sets req.auth, the most any auth middleware can reach, hot or cold.\n\n' +
        `Server CPU time per request (user + system, all threads, GC included) is far less disturbed by other processes ` +
        `than requests/s on a shared machine; the same comparison by CPU (peer's CPU µs ÷ ours, bare's ÷ ours):\n\n${table(
          [
            'alg',
            'ours cold µs/req',
            'bare µs/req',
            '× express-jwt',
            '× express-oauth2-jwt-bearer',
            '× passport-jwt',
            '× fast-jwt',
            'cold × bare',
            'hot × bare',
            'limit × bare',
            'floor × bare',
          ],
          cpuRows,
        )}`,
    );
  }
  return (
    `## Load: requests/s through Express 5\n\n${CONNECTIONS} connections, ${plan.rounds} interleaved rounds of ${plan.duration} s per scenario ` +
    `(after ${plan.warmup} s of warm-up each, and ${plan.prewarm} s of unmeasured load just before each measured window, so that no ` +
    `server is measured while waking from the idle time interleaving imposes); cold traffic walks a pool of 20 000 distinct valid tokens, one per request. ` +
    `Ratios are medians over rounds of (scenario ÷ bare Express in the same round).\n\n${parts.join('\n\n')}`
  );
}

/** The in-process table: per algorithm, each scenario's CPU µs per request and its cost above the limit. */
function cpuReport(cpu, mode) {
  const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
  /** Median over rounds of (a − b) in the same round. */
  const above = (a, b) => median(a.cpu.map((v, r) => v - b.cpu[r]));
  const targets = [];
  const parts = [];
  for (const [alg, rows] of Object.entries(cpu.results)) {
    const limit = rows.limit;
    const floor = rows.floor;
    const peers = Object.entries(rows).filter(([, r]) => r.peer !== undefined);
    const [bestName, best] = peers.reduce((a, b) => (above(b[1], limit) < above(a[1], limit) ? b : a));
    const ours = above(rows['ours-cold'], limit);
    const peerOverhead = above(best, limit);
    const hit = above(rows['ours-hot'], floor);
    const onOff = median(rows['ours-cold'].cpu.map((v, r) => v - rows['ours-nocache'].cpu[r]));
    const verdict = (met, by) => (mode === 'full' ? (met ? 'met' : `missed by ${by}`) : 'not judged (short run)');
    targets.push([
      alg,
      `${ours.toFixed(2)}`,
      `${peerOverhead.toFixed(2)} (${best.label})`,
      `${(ours / peerOverhead).toFixed(2)}×`,
      verdict(ours <= peerOverhead / 2, `${(ours - peerOverhead / 2).toFixed(2)} µs`),
      `${hit.toFixed(2)}`,
      verdict(hit <= 1, `${(hit - 1).toFixed(2)} µs`),
      `${onOff >= 0 ? '+' : ''}${onOff.toFixed(2)}`,
      verdict(onOff <= 0, `${onOff.toFixed(2)} µs`),
    ]);
    void bestName;
    const body = Object.values(rows).map((r) => [
      r.label,
      median(r.cpu).toFixed(2),
      r === limit || r === floor ? '' : above(r, limit).toFixed(2),
      `${Math.min(...r.cpu).toFixed(2)} – ${Math.max(...r.cpu).toFixed(2)}`,
    ]);
    parts.push(
      `### ${alg}\n\n${table(['scenario', 'CPU µs/req (median)', 'above the limit (µs, median of rounds)', 'range over rounds'], body)}`,
    );
  }
  const summary = table(
    [
      'alg',
      'ours: cold, above the limit (µs)',
      'best peer: above the limit (µs)',
      'ours ÷ best peer',
      'target ≤ 0.5×',
      'cache hit above a no-op (µs)',
      'target ≤ 1 µs',
      'cold: cache on − `cache: false` (µs)',
      'target ≤ 0',
    ],
    targets,
  );
  return (
    `## In-process CPU per request (the headline)\n\nEvery middleware called directly in one process (no HTTP), a fresh ` +
    `request object per call; ${cpu.rounds} interleaved rounds of ${cpu.seconds} s per scenario; process CPU time (user + system, GC ` +
    'included) per request, medians over rounds. Cold traffic walks 20 000 distinct valid tokens. "limit" is no verifier: ' +
    "node:crypto's signature check plus JSON.parse of the payload. Peers run as their READMEs configure them (string secret, " +
    'PEM string) and at their best (a KeyObject) where those differ; express-oauth2-jwt-bearer and fast-jwt parse a string ' +
    `key once themselves (fast-jwt refuses a KeyObject).\n\n### Targets (docs/benchmarks.md)\n\n${summary}\n\n${parts.join('\n\n')}`
  );
}

function microReport(micro) {
  const rows = micro.rows.map((r) => [
    r.alg,
    r.name,
    r.nsPerOp === undefined ? '' : fmtInt(r.nsPerOp),
    fmtInt(r.opsPerSec),
  ]);
  return (
    `## Micro-benchmarks (one process, no HTTP)\n\n${table(['alg', 'what', 'ns/op', 'ops/s'], rows)}\n\n` +
    '"raw" rows are the signature check alone on pre-split, pre-decoded inputs (HMAC + constant-time compare, or ' +
    '`crypto.verify` with a KeyObject): the physical limit of a cold verification. "middleware" rows call ' +
    'the Express middleware function directly with a minimal request object.'
  );
}

function memoryReport(memory) {
  const mb = (b) => (b / 1048576).toFixed(1);
  const rows = memory.samples.map((s) => [
    fmtInt(s.tokens),
    mb(s.rss),
    mb(s.heapUsed),
    fmtInt(s.size),
    fmtInt(s.evictions),
  ]);
  return (
    `## Memory: ${fmtInt(memory.tokens)} distinct valid tokens through one verifier\n\n` +
    `HS256 tokens minted with node:crypto, each passed to \`verify()\` twice (a success is stored on its second sighting, so every token is admitted: the worst case); default cache bounds (${fmtInt(memory.cacheMax)} entries, ` +
    `${mb(memory.cacheMaxBytes)} MiB); figures after a forced GC.\n\n${table(['tokens', 'RSS (MiB)', 'heap used (MiB)', 'cache entries', 'evictions'], rows)}`
  );
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = new Date();
  build();
  const fixtures = await loadFixtures(DIST, log);
  const results = { mode: opts.mode, plan: opts.plan };
  const sections = [];

  if (opts.parts.has('cpu')) {
    log('\nin-process CPU per request');
    results.cpu = await runChild('cpu.js', [
      DIST,
      String(opts.plan.cpuSeconds),
      String(opts.plan.cpuRounds),
      opts.algs.join(','),
    ]);
    sections.push(cpuReport(results.cpu, opts.mode));
  }
  if (opts.parts.has('load')) {
    let scenarios = SCENARIOS.filter(
      (s) =>
        (!opts.scenarios || opts.scenarios.includes(s.name) || s.name === 'bare') && !opts.plan.skip?.includes(s.name),
    );
    if (opts.baseline) {
      buildBaseline(opts.baseline);
      scenarios = withBaseline(scenarios);
    }
    results.load = {};
    for (const alg of opts.algs) {
      // A peer that cannot verify this algorithm (jsonwebtoken and EdDSA) sits this group out.
      results.load[alg] = summarize(
        await runLoadGroup(
          alg,
          scenarios.filter((s) => !s.unsupported?.includes(alg)),
          fixtures,
          opts.plan,
          opts.prof,
        ),
      );
    }
    sections.push(loadReport(results.load, opts.plan));
  }
  if (opts.parts.has('micro')) {
    log('\nmicro-benchmarks');
    results.micro = await runChild('micro.js', [DIST, String(opts.plan.microSeconds)]);
    sections.push(microReport(results.micro));
  }
  if (opts.parts.has('memory')) {
    log('\nmemory run');
    results.memory = await runChild('memory.js', [DIST, String(opts.plan.memoryTokens)], ['--expose-gc']);
    sections.push(memoryReport(results.memory));
  }

  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  const cpus = os.cpus();
  const machine =
    `${cpus.length} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, ${os.platform()} ${os.release()}, ` +
    `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, load average at start ${os.loadavg()[0].toFixed(2)}`;
  const report = `# Benchmark results\n\nMachine: ${machine}\n\nCommand: \`${command}\`\n\n${sections.join('\n\n')}\n`;
  fs.mkdirSync(TMP, { recursive: true });
  fs.writeFileSync(path.join(TMP, `results-${opts.mode}.json`), JSON.stringify(results, null, 2));
  const isFull =
    opts.mode === 'full' &&
    !opts.only &&
    opts.algs.length === ALGS.length &&
    !opts.scenarios &&
    !opts.rounds &&
    !opts.duration &&
    opts.prewarm === undefined &&
    !opts.baseline &&
    !opts.prof;
  const target = isFull ? path.join(__dirname, 'RESULTS.md') : path.join(TMP, `results-${opts.mode}.md`);
  fs.writeFileSync(target, report);
  process.stdout.write(`\n${report}\nwritten to ${path.relative(ROOT, target)}\n`);
}

main().catch((err) => {
  log(err.stack);
  process.exit(1);
});
