'use strict';
// CPU per MCP request of requireMcpAuth reading the JSON body itself, against express.json() reading it before the
// gate (the recipe before), and against express.raw() leaving a Buffer the gate parses; with the baseline build's
// gate behind express.json() and reading the body itself when BENCH_BASELINE_DIST is set. In process, as bench/cpu.js: each request a fresh
// stream (the body pushed as one chunk, as a small HTTP body arrives), the middleware chain called directly, a
// cached token (HS256), scenarios interleaved in rounds, medians of process CPU time per request.
//   BENCH_BASELINE_DIST=<base>/dist node bench/mcp-body.js <dist> [seconds] [rounds] [body bytes, comma-separated]
const path = require('node:path');
const { Readable } = require('node:stream');
const express = require('express');
const { loadFixtures } = require('./fixtures');
const { median } = require('./timing');

const [distArg, secondsArg = '0.3', roundsArg = '11', sizesArg = '160,8192'] = process.argv.slice(2);
if (!distArg) throw new Error('usage: node bench/mcp-body.js <dist> [seconds] [rounds] [body bytes, comma-separated]');
const DIST = path.resolve(distArg);
const BASELINE = process.env.BENCH_BASELINE_DIST;
const SECONDS = Number(secondsArg);
const ROUNDS = Number(roundsArg);

/** A `tools/call` of `whoami` padded to about `bytes` (an argument carries the padding). */
function body(bytes) {
  const call = (pad) =>
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: { pad } } });
  return Buffer.from(call('x'.repeat(Math.max(0, bytes - call('').length))));
}

/** A fresh request per call: a readable stream holding the body, with what Express and the parsers read. */
function request(authorization, bytes) {
  const req = new Readable({ read() {} });
  req.push(bytes);
  req.push(null);
  return Object.assign(req, {
    method: 'POST',
    url: '/mcp',
    originalUrl: '/mcp',
    headers: {
      host: '127.0.0.1',
      authorization,
      'content-type': 'application/json',
      'content-length': String(bytes.length),
      accept: 'application/json, text/event-stream',
    },
    rawHeaders: ['Host', '127.0.0.1', 'Authorization', authorization, 'Content-Type', 'application/json'],
    socket: {},
  });
}

/** Run a chain on one request; resolves when the last middleware calls next() with the parsed call in req.body. */
function runner(chain) {
  let failures = 0;
  let settle = () => undefined;
  // An answer written is a refusal: counted, and the request is over.
  const refused = () => {
    failures++;
    settle();
  };
  const res = {
    status: () => res,
    json: () => {
      refused();
      return res;
    },
    set: () => res,
    setHeader: () => undefined,
    getHeader: () => undefined,
    end: refused,
  };
  const run = (req) =>
    new Promise((resolve) => {
      settle = resolve;
      const step = (i) => (err) => {
        if (err || i === chain.length) {
          if (err || req.body?.params?.name !== 'whoami') failures++;
          resolve();
          return;
        }
        chain[i](req, res, step(i + 1));
      };
      step(0)();
    });
  return { run, failures: () => failures };
}

function gateOf(dist, fixtures) {
  const { createTokenAuth } = require(`${dist}/index.js`);
  const { requireMcpAuth } = require(`${dist}/mcp.js`);
  const auth = createTokenAuth({
    key: { secret: fixtures.keys.HS256.secret },
    issuer: fixtures.issuer,
    audience: fixtures.audience,
  });
  return requireMcpAuth(auth, { tools: { admin: ['mcp:admin'] } });
}

async function window(scenario, token, bytes) {
  const cpuStart = process.cpuUsage();
  const stop = process.hrtime.bigint() + BigInt(Math.round(SECONDS * 1e9));
  let n = 0;
  do {
    for (let k = 0; k < 32; k++) await scenario.run(request(token, bytes));
    n += 32;
  } while (process.hrtime.bigint() < stop);
  const cpu = process.cpuUsage(cpuStart);
  return (cpu.user + cpu.system) / n;
}

async function main() {
  const fixtures = await loadFixtures(DIST);
  const token = `Bearer ${fixtures.pools.HS256[0]}`;
  const gate = gateOf(DIST, fixtures);
  const chains = {
    'express.json() alone': [express.json()],
    'express.json() + gate': [express.json(), gate],
    'gate reads the body': [gate],
    'express.raw() + gate': [express.raw({ type: 'application/json' }), gate],
  };
  if (BASELINE) {
    const base = gateOf(path.resolve(BASELINE), fixtures);
    chains['express.json() + gate@base'] = [express.json(), base];
    chains['gate reads the body@base'] = [base];
  }
  for (const size of sizesArg.split(',').map(Number)) {
    const bytes = body(size);
    const scenarios = Object.entries(chains).map(([name, chain]) => ({ name, ...runner(chain), cpu: [] }));
    for (const s of scenarios) await window(s, token, bytes); // warm up, JIT
    for (let round = 0; round < ROUNDS; round++)
      for (let k = 0; k < scenarios.length; k++) {
        const s = scenarios[(k + round) % scenarios.length];
        s.cpu.push(await window(s, token, bytes));
      }
    const json = scenarios.find((s) => s.name === 'express.json() + gate');
    console.log(`\nbody ${bytes.length} B: CPU µs per request, median of ${ROUNDS} rounds of ${SECONDS} s`);
    console.log(`${'chain'.padEnd(30)}${'median'.padStart(9)}${'vs express.json() + gate'.padStart(26)}`);
    for (const s of scenarios) {
      if (s.failures() > 0) throw new Error(`${s.name}: ${s.failures()} requests failed`);
      const diff = median(s.cpu.map((value, round) => value - json.cpu[round]));
      console.log(`${s.name.padEnd(30)}${median(s.cpu).toFixed(2).padStart(9)}${diff.toFixed(2).padStart(26)}`);
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
