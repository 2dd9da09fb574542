'use strict';
/**
 * `npm run fuzz`: the long fuzzing run (issue 6). Random Authorization headers and random damage to genuine tokens,
 * sent over HTTP to real Express 5 and Express 4 apps (HS256 and RS256), checked case by case against the oracle of
 * __tests__/security/fuzzing.ts: a 2xx only for a genuine token, otherwise the exact 401 of the README's error table;
 * never a 5xx; no unhandled rejection. Exits non-zero on the first counterexample (printed, shrunk, with the seed to
 * replay it).
 *
 *   npm run fuzz                       # 12 500 cases per property, app and Express version: 100 000 in all
 *   npm run fuzz -- --runs 50000 --seed 42
 */
require('./ts-register');
const { performance } = require('node:perf_hooks');
const { EXPRESS_VERSIONS } = require('../__tests__/fixtures/express');
const { runFuzz } = require('../__tests__/security/fuzzing');
const { option } = require('./load-common');

async function main() {
  const numRuns = option('runs', 12_500, { allowZero: true });
  const seed = option('seed', Date.now() % 2 ** 31, { allowZero: true });
  console.log(`fuzz: ${numRuns} runs per property per app per Express version, seed ${seed}`);
  let total = 0;
  const started = performance.now();
  for (const [name, express] of EXPRESS_VERSIONS) {
    for (const cache of [false, { max: 1000 }]) {
      const t0 = performance.now();
      const figures = await runFuzz({
        express,
        numRuns: cache === false ? numRuns : Math.ceil(numRuns / 10),
        seed,
        cache,
      });
      const cases = Object.values(figures.cases).reduce((a, b) => a + b, 0);
      total += cases;
      const seconds = (performance.now() - t0) / 1000;
      console.log(
        `${name}, cache ${cache === false ? 'off' : 'on (max 1000)'}: ${cases} cases in ${seconds.toFixed(1)} s (${Math.round(cases / seconds)}/s)`,
      );
      for (const [property, n] of Object.entries(figures.cases)) console.log(`  ${property}: ${n}`);
      console.log(
        `  statuses: ${JSON.stringify(figures.statuses)}; unhandled rejections: ${figures.unhandledRejections}`,
      );
      if (figures.unhandledRejections !== 0) throw new Error('unhandled rejections seen');
    }
  }
  console.log(`fuzz: ${total} cases, 0 failures, ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
