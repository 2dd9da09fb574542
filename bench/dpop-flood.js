'use strict';
// One DPoP key holder floods the in-process replay store (issue 19, items 1 and 3): the middleware on a minimal
// request object, in one process, no HTTP (the fastest a flooder can be here). The flooder has one bound token and
// one key and sends pre-signed proofs (`iat` = now + 4, inside the clock tolerance, so each is remembered longest);
// after every 1 000 of them a victim (another key, another token) sends one proof. Prints how many flood proofs and
// how many seconds it took until the victim was refused (or that it never was), then, with the flood standing,
// median CPU µs of a flood request, a victim request and one claimOnce on a full store (100 000 live ids). The
// proof window is 10 min, so that no flood proof expires while this runs on a slow machine.
// Usage: npm run build && node bench/dpop-flood.js [flood proofs] [dist]
const path = require('node:path');
const { ORDERS_URL, requestFor } = require('./dpop-request');
const { randomUUID } = require('node:crypto');

const dist = path.resolve(process.argv[3] ?? path.join(__dirname, '..', 'dist'));
const { createTokenAuth } = require(`${dist}/index.js`);
const { createTestIssuer, createDpopHolder } = require(`${dist}/testing.js`);
const { createMemoryReplayStore } = require(`${dist}/dpop/replay.js`);

const FLOOD = Number(process.argv[2] ?? 120_000);

/** Run one request; the status it got (200 when next() was called). */
function send(middleware, req) {
  let status = 0;
  const res = {
    status: (s) => ((status = s), res),
    setHeader: () => undefined,
    json: () => undefined,
    headersSent: false,
  };
  middleware(req, res, () => (status = 200));
  return status;
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
const cpu = (fn, n) => {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const before = process.cpuUsage();
    fn();
    const used = process.cpuUsage(before);
    samples.push(used.user + used.system);
  }
  return median(samples);
};

async function main() {
  const issuer = await createTestIssuer({ alg: 'ES256', dpop: true });
  const middleware = createTokenAuth({ ...issuer.options, dpop: { iatWindow: '10m' } }).requireVerifiedUser([
    'identify',
  ]);
  const flooder = issuer.holder;
  const floodToken = issuer.sign();
  const victim = createDpopHolder('ES256');
  const victimToken = issuer.sign({ cnf: { jkt: victim.jkt } });
  const victimRequest = () =>
    requestFor(`DPoP ${victimToken}`, victim.proof({ method: 'GET', url: ORDERS_URL, token: victimToken }));

  const made = Date.now();
  const iat = Math.floor(Date.now() / 1000) + 4;
  const flood = Array.from({ length: FLOOD }, () =>
    requestFor(
      `DPoP ${floodToken}`,
      flooder.proof({ method: 'GET', url: ORDERS_URL, token: floodToken, claims: { iat } }),
    ),
  );
  console.log(
    `node ${process.version}, ${dist}: ${FLOOD} flood proofs signed in ${((Date.now() - made) / 1000).toFixed(1)} s`,
  );

  const start = process.hrtime.bigint();
  let accepted = 0;
  let refused = 0;
  let victimRefusedAt;
  for (let i = 0; i < flood.length; i++) {
    if (send(middleware, flood[i]) === 200) accepted++;
    else refused++;
    if (i % 1000 === 999 && victimRefusedAt === undefined) {
      const status = send(middleware, victimRequest());
      if (status !== 200)
        victimRefusedAt = { proofs: i + 1, seconds: Number(process.hrtime.bigint() - start) / 1e9, status };
    }
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(`flood: ${accepted} accepted, ${refused} refused in ${seconds.toFixed(1)} s`);
  console.log(
    victimRefusedAt === undefined
      ? `victim: never refused (every 1 000th request of ${FLOOD} answered 200)`
      : `victim: first refused (${victimRefusedAt.status}) after ${victimRefusedAt.proofs} flood proofs, ${victimRefusedAt.seconds.toFixed(1)} s`,
  );

  const more = Array.from({ length: 200 }, () =>
    requestFor(`DPoP ${floodToken}`, flooder.proof({ method: 'GET', url: ORDERS_URL, token: floodToken })),
  );
  let k = 0;
  console.log(
    `with the flood standing, median CPU µs: flood request ${cpu(() => send(middleware, more[k++]), more.length)}, victim request ${cpu(() => send(middleware, victimRequest()), 200)}`,
  );

  const store = createMemoryReplayStore({ clock: () => 1000 });
  for (let i = 0; i < 100_000; i++) store.claimOnce(`live-${i}`, 1060);
  const full = cpu(() => {
    try {
      store.claimOnce(randomUUID(), 1060);
    } catch {
      // full: the answer under test is the cost of finding out
    }
  }, 200);
  console.log(`claimOnce on a full store of 100 000 live ids: median ${full} µs CPU`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
