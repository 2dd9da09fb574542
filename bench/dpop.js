'use strict';
// The cost of a DPoP request next to a Bearer one, in one process, no HTTP: the middleware on a minimal request
// object, CPU µs per request (process.cpuUsage), hot (token verdict cached, proof key seen before) and cold (no
// result cache, a new proof key every request). Proofs are made before timing (a client makes them); each is
// used once. Interleaved rounds, medians.  Usage: npm run build && node bench/dpop.js [rounds] [requests]
// With BENCH_BASELINE_DIST (an earlier build's dist/, e.g. of the commit before a change), the hot rows run again on
// that build as `<row>@base`, interleaved in the same rounds, and each row's median difference to its twin is shown.
const path = require('node:path');
const { ORDERS_URL, requestFor } = require('./dpop-request');

const dist = path.join(__dirname, '..', 'dist');
const { createTokenAuth } = require(`${dist}/index.js`);
const { createTestIssuer, createDpopHolder } = require(`${dist}/testing.js`);

const ROUNDS = Number(process.argv[2] ?? 7);
const REQUESTS = Number(process.argv[3] ?? 400);

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

function cpuMicrosPerRequest(middleware, requests) {
  let failures = 0;
  const res = { status: () => res, setHeader: () => undefined, json: () => failures++, headersSent: false };
  const before = process.cpuUsage();
  for (const req of requests) middleware(req, res, () => undefined);
  const used = process.cpuUsage(before);
  if (failures > 0) throw new Error(`${failures} requests failed`);
  return (used.user + used.system) / requests.length;
}

async function main() {
  const issuer = await createTestIssuer({ alg: 'ES256', dpop: true });
  const holder = issuer.holder;
  const base = { ...issuer.options, dpop: {} };
  const middleware = {
    hot: createTokenAuth(base).requireVerifiedUser(['identify']),
    cold: createTokenAuth({ ...base, cache: false }).requireVerifiedUser(['identify']),
  };
  const baseline = process.env.BENCH_BASELINE_DIST;
  if (baseline)
    middleware['hot@base'] = require(`${path.resolve(baseline)}/index.js`)
      .createTokenAuth(base)
      .requireVerifiedUser(['identify']);
  // More keys than the proof-header cache holds (1000), used in turn: every cold proof imports its key afresh.
  const coldHolders = Array.from({ length: 1200 }, () => createDpopHolder('ES256'));
  let coldIndex = 0;
  const hotToken = issuer.sign();
  const hotBearer = issuer.sign({ cnf: undefined });

  const scenarios = {
    'Bearer, hot': () => ['hot', Array.from({ length: REQUESTS }, () => requestFor(`Bearer ${hotBearer}`))],
    'DPoP, hot': () => [
      'hot',
      Array.from({ length: REQUESTS }, () =>
        requestFor(`DPoP ${hotToken}`, holder.proof({ method: 'GET', url: ORDERS_URL, token: hotToken })),
      ),
    ],
    'Bearer, cold': () => [
      'cold',
      Array.from({ length: REQUESTS }, () => requestFor(`Bearer ${issuer.sign({ cnf: undefined })}`)),
    ],
    'DPoP, cold': () => [
      'cold',
      Array.from({ length: REQUESTS }, () => {
        const h = coldHolders[coldIndex++ % coldHolders.length];
        const token = issuer.sign({ cnf: { jkt: h.jkt } });
        return requestFor(`DPoP ${token}`, h.proof({ method: 'GET', url: ORDERS_URL, token }));
      }),
    ],
  };
  if (baseline) {
    scenarios['Bearer, hot@base'] = () => ['hot@base', scenarios['Bearer, hot']()[1]];
    scenarios['DPoP, hot@base'] = () => ['hot@base', scenarios['DPoP, hot']()[1]];
  }
  const results = Object.fromEntries(Object.keys(scenarios).map((name) => [name, []]));
  for (const name of Object.keys(scenarios))
    cpuMicrosPerRequest(middleware[scenarios[name]()[0]], scenarios[name]()[1].slice(0, 50)); // warm-up
  const names = Object.keys(scenarios);
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts at another scenario, so that none always runs after the same neighbour.
    for (const name of names.map((_, k) => names[(k + round) % names.length])) {
      const [kind, requests] = scenarios[name]();
      results[name].push(cpuMicrosPerRequest(middleware[kind], requests));
    }
  }
  console.log(
    `node ${process.version}, ${ROUNDS} interleaved rounds x ${REQUESTS} requests, median CPU µs per request (ES256 token, ES256 proof)`,
  );
  const bearer = { hot: median(results['Bearer, hot']), cold: median(results['Bearer, cold']) };
  for (const [name, values] of Object.entries(results)) {
    const m = median(values);
    const ratio = m / bearer[name.includes('hot') ? 'hot' : 'cold'];
    const twin = results[`${name}@base`];
    // Within a round, so that the machine's drift cancels out.
    const change = twin === undefined ? '' : `   ${median(values.map((v, i) => v - twin[i])).toFixed(2)} µs vs @base`;
    console.log(`  ${name.padEnd(18)} ${m.toFixed(1).padStart(7)} µs   x${ratio.toFixed(2)} Bearer${change}`);
  }
  await issuer.close();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
