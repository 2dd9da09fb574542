'use strict';
// CPU per DPoP request with a hostile RSA proof key (issue 19, item 2), next to a good ES256 proof: the middleware
// on a minimal request object, in one process, CPU µs per request (process.cpuUsage). Hostile keys are made up
// (a random odd modulus, never a real key pair) and the signature is random bytes: the cost under test is what the
// verifier spends before it refuses. "other key": the token is bound to the client's own key, the proof carries the
// hostile one; "bound": the token is bound to the hostile key itself (an authorization server that issued it).
// Interleaved rounds, medians.  Usage: npm run build && node bench/dpop-hostile.js [rounds] [requests] [dist]
const path = require('node:path');
const { ORDERS_URL, requestFor } = require('./dpop-request');
const { randomBytes, randomUUID, createHash } = require('node:crypto');

const dist = path.resolve(process.argv[4] ?? path.join(__dirname, '..', 'dist'));
const { createTokenAuth } = require(`${dist}/index.js`);
const { createTestIssuer } = require(`${dist}/testing.js`);

const ROUNDS = Number(process.argv[2] ?? 5);
const REQUESTS = Number(process.argv[3] ?? 100);
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A random odd number of exactly `bits` bits, base64url big-endian (a JWK member). */
function oddNumber(bits) {
  const bytes = randomBytes(Math.ceil(bits / 8));
  bytes[0] |= 0x80 >> ((8 - (bits % 8)) % 8);
  bytes[0] &= 0xff >> ((8 - (bits % 8)) % 8);
  bytes[bytes.length - 1] |= 1;
  return bytes.toString('base64url');
}

function thumbprint(jwk) {
  return createHash('sha256').update(`{"e":"${jwk.e}","kty":"RSA","n":"${jwk.n}"}`).digest('base64url');
}

/** A proof signed by nobody: right in every claim, with a random signature one byte shorter than the modulus. */
function hostileProof(jwk, token, modulusBytes) {
  const payload = {
    htm: 'GET',
    htu: ORDERS_URL,
    iat: Math.floor(Date.now() / 1000),
    jti: randomUUID(),
    ath: createHash('sha256').update(token).digest('base64url'),
  };
  const signature = Buffer.concat([Buffer.from([0]), randomBytes(modulusBytes - 1)]).toString('base64url');
  return `${b64({ typ: 'dpop+jwt', alg: 'RS256', jwk })}.${b64(payload)}.${signature}`;
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];

function cpuMicrosPerRequest(middleware, requests, expectFailures) {
  let failures = 0;
  const res = { status: () => res, setHeader: () => undefined, json: () => failures++, headersSent: false };
  const before = process.cpuUsage();
  for (const req of requests) middleware(req, res, () => undefined);
  const used = process.cpuUsage(before);
  if (failures !== (expectFailures ? requests.length : 0))
    throw new Error(`${failures} of ${requests.length} requests refused`);
  return (used.user + used.system) / requests.length;
}

async function main() {
  const issuer = await createTestIssuer({ alg: 'ES256', dpop: true });
  const holder = issuer.holder;
  const middleware = createTokenAuth({ ...issuer.options, dpop: {} }).requireVerifiedUser(['identify']);
  const token = issuer.sign();
  const keys = {
    'RSA 16 384-bit modulus': { jwk: { kty: 'RSA', n: oddNumber(16384), e: 'AQAB' }, bytes: 2048 },
    'RSA 3 064-bit exponent': { jwk: { kty: 'RSA', n: oddNumber(3072), e: oddNumber(3064) }, bytes: 384 },
  };
  const scenarios = {
    'ES256 proof, good': () => [
      false,
      Array.from({ length: REQUESTS }, () =>
        requestFor(`DPoP ${token}`, holder.proof({ method: 'GET', url: ORDERS_URL, token })),
      ),
    ],
  };
  for (const [name, { jwk, bytes }] of Object.entries(keys)) {
    scenarios[`${name}, token bound to another key`] = () => [
      true,
      Array.from({ length: REQUESTS }, () => requestFor(`DPoP ${token}`, hostileProof(jwk, token, bytes))),
    ];
    const bound = issuer.sign({ cnf: { jkt: thumbprint(jwk) } });
    scenarios[`${name}, token bound to it`] = () => [
      true,
      Array.from({ length: REQUESTS }, () => requestFor(`DPoP ${bound}`, hostileProof(jwk, bound, bytes))),
    ];
  }
  const results = Object.fromEntries(Object.keys(scenarios).map((name) => [name, []]));
  for (const name of Object.keys(scenarios)) {
    const [refused, requests] = scenarios[name]();
    cpuMicrosPerRequest(middleware, requests.slice(0, 10), refused); // warm-up
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of Object.keys(scenarios)) {
      const [refused, requests] = scenarios[name]();
      results[name].push(cpuMicrosPerRequest(middleware, requests, refused));
    }
  }
  console.log(
    `node ${process.version}, ${dist}, ${ROUNDS} interleaved rounds x ${REQUESTS} requests, median CPU µs per request`,
  );
  const good = median(results['ES256 proof, good']);
  for (const [name, values] of Object.entries(results)) {
    const m = median(values);
    console.log(`${name.padEnd(52)} ${m.toFixed(0).padStart(7)} µs  ${(m / good).toFixed(2)}×`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
