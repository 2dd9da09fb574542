'use strict';
/**
 * Introspection figures (docs/introspection.md), against a real oidc-provider 9 issuing opaque tokens
 * (__tests__/fixtures/authorization-server.ts), one instance, `verify()` in-process. Calls are counted at the
 * provider.
 *
 * 1. Calls to the authorization server per 1 000 requests: 10 or 100 distinct tokens, requests in waves of 10
 *    concurrent, with the cache on (default) and off (`cache: false`).
 * 2. Calls per token for 5 minutes of steady traffic (one request a second, simulated with the `clock` option, so
 *    the figure does not depend on this machine's speed) per `cache.ttl`.
 * 3. Revocation delay per `cache.ttl`: a token is verified (and cached), revoked at the provider at once, then asked
 *    every 50 ms until refused; wall clock, median and max of `--reps` runs.
 * 4. The time of one introspection call (cache off), median and p95 of 200: this machine, loopback.
 *
 *   node bench/introspection.js [--reps 3]
 */
require('../scripts/ts-register');
const { createTokenAuth } = require('../lib');
const { startAuthorizationServer } = require('../__tests__/fixtures/authorization-server');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const REPS = option('reps', 3);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

function introspecting(as, extra = {}) {
  return createTokenAuth({
    issuerBaseURL: as.issuer,
    audience: as.resource,
    introspection: { clientId: 'rs-basic', clientSecret: as.resourceServerSecret },
    ...extra,
  });
}

async function calls(as, run) {
  const before = await as.introspections();
  await run();
  return (await as.introspections()) - before;
}

async function perThousand(as, distinct, cache) {
  const tokens = await Promise.all(Array.from({ length: distinct }, () => as.token()));
  const auth = introspecting(as, cache ? {} : { cache: false });
  try {
    return await calls(as, async () => {
      for (let wave = 0; wave < 100; wave++) {
        await Promise.all(Array.from({ length: 10 }, (_, i) => auth.verify(tokens[(wave * 10 + i) % distinct])));
      }
    });
  } finally {
    auth.close();
  }
}

async function steadyTraffic(as, ttl) {
  const token = await as.token();
  let now = Date.now() / 1000;
  const auth = introspecting(as, { cache: ttl === 0 ? false : { ttl }, clock: () => now });
  try {
    return await calls(as, async () => {
      for (let second = 0; second < 300; second++, now += 1) await auth.verify(token);
    });
  } finally {
    auth.close();
  }
}

async function revocationDelay(as, ttl) {
  const delays = [];
  for (let rep = 0; rep < REPS; rep++) {
    const token = await as.token();
    const auth = introspecting(as, ttl === 0 ? { cache: false } : { cache: { ttl } });
    try {
      await auth.verify(token);
      await as.revoke(token);
      const revokedAt = performance.now();
      for (let tries = 0; tries < 400; tries++) {
        const refused = await auth.verify(token).then(
          () => false,
          () => true,
        );
        if (refused) break;
        await sleep(50);
      }
      delays.push((performance.now() - revokedAt) / 1000);
    } finally {
      auth.close();
    }
  }
  return { median: percentile(delays, 0.5), max: Math.max(...delays) };
}

async function callTime(as) {
  const token = await as.token();
  const auth = introspecting(as, { cache: false });
  const times = [];
  try {
    await auth.verify(token);
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      await auth.verify(token);
      times.push(performance.now() - started);
    }
  } finally {
    auth.close();
  }
  return { median: percentile(times, 0.5), p95: percentile(times, 0.95) };
}

async function main() {
  const as = await startAuthorizationServer({ introspection: {} });
  try {
    console.log('## Calls to the authorization server per 1 000 requests (one instance, waves of 10 concurrent)\n');
    console.log('| distinct tokens | cache on (default) | cache: false |');
    console.log('|---|---|---|');
    for (const distinct of [10, 100]) {
      console.log(
        `| ${distinct} | ${await perThousand(as, distinct, true)} | ${await perThousand(as, distinct, false)} |`,
      );
    }

    console.log('\n## Calls per token for 5 minutes of one request a second (simulated clock)\n');
    console.log('| cache.ttl | calls |');
    console.log('|---|---|');
    for (const ttl of [0, 10, 30, 60, 600])
      console.log(`| ${ttl === 0 ? 'cache: false' : `${ttl} s`} | ${await steadyTraffic(as, ttl)} |`);

    console.log(
      `\n## Revocation delay (revoked at the provider right after the token was cached; ${REPS} runs, polled every 50 ms)\n`,
    );
    console.log('| cache.ttl | median | max |');
    console.log('|---|---|---|');
    for (const ttl of [0, 1, 2, 5]) {
      const { median, max } = await revocationDelay(as, ttl);
      console.log(`| ${ttl === 0 ? 'cache: false' : `${ttl} s`} | ${median.toFixed(2)} s | ${max.toFixed(2)} s |`);
    }

    const { median, p95 } = await callTime(as);
    console.log(
      `\n## One introspection call (loopback, cache: false, 200 calls): median ${median.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms`,
    );
  } finally {
    await as.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
