'use strict';
// Which JWKS approach serves a `jwksUri` key (docs/remote-keys.md) best: this package's source (Node's fetch +
// crypto.createPublicKey, keys held as KeyObjects) or jwks-rsa (a dev dependency here, for this comparison only).
// Measures, on one machine, one run:
//   1. the per-request key lookup on a warm cache;
//   2. lookup + jsonwebtoken.verify (RS256), since jwks-rsa hands out a PEM string that jsonwebtoken re-parses;
//   3. behaviour the rules ask for: fetches for concurrent misses on distinct unknown kids, known keys during an
//      outage once the key cache's max age has passed;
//   4. footprint: packages and bytes jwks-rsa would add to the runtime dependencies, and cold require time.
// Usage: node bench/jwks-approach.js [seconds per sample, default 0.3]
// It compiles lib/ into bench/.tmp/jwks-dist first (never touching dist/). A run takes about 75 s, 60 of them idle:
// jwks-rsa's rate limiter holds the 11th to 20th fetch until the next minute.
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const jwt = require('jsonwebtoken');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(__dirname, '.tmp', 'jwks-dist');
const { median, nsPerCall } = require('./timing');

const SECONDS = Number(process.argv[2] ?? 0.3);
const SAMPLES = 5;

function build() {
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', DIST],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

/** Median ns per call of fn(i) (sync, or async when it returns a promise). */
const time = (fn) => nsPerCall(fn, { seconds: SECONDS, samples: SAMPLES, batch: 32 });

async function jwksServer(keys) {
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    uri: `http://127.0.0.1:${server.address().port}/jwks.json`,
    get requests() {
      return requests;
    },
    stop() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

function fmt(ns) {
  return ns >= 10_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`;
}

/** Packages (name@version → dir) a package pulls in at run time, found as Node would resolve them. */
function runtimeClosure(name, from, seen = new Map()) {
  let manifestPath;
  try {
    manifestPath = require.resolve(`${name}/package.json`, { paths: [from] });
  } catch {
    return seen;
  }
  const dir = path.dirname(manifestPath);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const id = `${manifest.name}@${manifest.version}`;
  if (seen.has(id)) return seen;
  seen.set(id, dir);
  for (const dep of Object.keys(manifest.dependencies ?? {})) runtimeClosure(dep, dir, seen);
  return seen;
}

/** Bytes on disk of a package directory, not counting its nested node_modules (those are packages of their own). */
function packageBytes(dir) {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? packageBytes(full) : fs.statSync(full).size;
  }
  return total;
}

/** Median ms to require a module in a fresh process. */
function requireMs(target) {
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `const t=process.hrtime.bigint();require(${JSON.stringify(target)});console.log(Number(process.hrtime.bigint()-t)/1e6)`,
      ],
      { cwd: ROOT },
    );
    runs.push(Number(out.toString()));
  }
  return median(runs);
}

async function main() {
  build();
  const { jwksKeySource } = require(path.join(DIST, 'keys', 'jwks.js'));
  const { createTokenAuth } = require(path.join(DIST, 'index.js'));
  const { sampleShapeB } = require(path.join(DIST, 'token', 'sample.js'));
  const { JwksClient } = require('jwks-rsa');

  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const published = [
    { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
    { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec-1', alg: 'ES256', use: 'sig' },
  ];
  const server = await jwksServer(published);
  const header = { alg: 'RS256', kid: 'rsa-1' };
  const now = Math.floor(Date.now() / 1000);
  const payload = sampleShapeB({ issuer: 'bench', audience: 'bench', now, lifetime: 3600 });
  const token = jwt.sign(payload, rsa.privateKey, { algorithm: 'RS256', keyid: 'rsa-1' });
  const verifyOptions = { algorithms: ['RS256'] };

  const ours = jwksKeySource({
    url: new URL(server.uri),
    cooldown: 30,
    timeout: 5,
    algorithms: undefined,
    clock: () => Date.now() / 1000,
  });
  await ours.keyFor({ alg: 'RS256', kid: 'nope' }).catch(() => undefined); // warm: one fetch
  const client = new JwksClient({ jwksUri: server.uri });
  await client.getSigningKey('rsa-1'); // warm
  const auth = createTokenAuth({ key: { jwksUri: server.uri }, issuer: 'bench', audience: 'bench', cache: false });
  await auth.verify(token); // warm

  const lookup = {
    ours: await time(() => ours.keyFor(header)),
    rsa: await time(() => client.getSigningKey('rsa-1').then((k) => k.getPublicKey())),
    rsaKeyObject: await time(() => client.getSigningKey('rsa-1').then((k) => crypto.createPublicKey(k.getPublicKey()))),
  };
  const verify = {
    ours: await time(() => jwt.verify(token, ours.keyFor(header), verifyOptions)),
    rsa: await time(() =>
      client.getSigningKey('rsa-1').then((k) => jwt.verify(token, k.getPublicKey(), verifyOptions)),
    ),
    full: await time(() => auth.verify(token)),
  };

  // Concurrent misses on 20 distinct unknown kids (a flood of made-up kids), after warm-up.
  const before = server.requests;
  const oursFlood = jwksKeySource({
    url: new URL(server.uri),
    cooldown: 30,
    timeout: 5,
    algorithms: undefined,
    clock: () => Date.now() / 1000,
  });
  await Promise.allSettled(
    Array.from({ length: 20 }, (_v, i) => oursFlood.keyFor({ alg: 'RS256', kid: `unknown-${i}` })),
  );
  const oursFetches = server.requests - before;
  const mid = server.requests;
  const floodClient = new JwksClient({ jwksUri: server.uri });
  await Promise.allSettled(Array.from({ length: 20 }, (_v, i) => floodClient.getSigningKey(`unknown-${i}`)));
  const rsaFetches = server.requests - mid;
  const limitedStart = server.requests;
  const limitedClient = new JwksClient({ jwksUri: server.uri, rateLimit: true, jwksRequestsPerMinute: 10 });
  const floodStart = Date.now();
  const limited = await Promise.allSettled(
    Array.from({ length: 20 }, (_v, i) => limitedClient.getSigningKey(`unknown-${i}`)),
  );
  const limitedSeconds = (Date.now() - floodStart) / 1000;
  const limitedFetches = server.requests - limitedStart;
  const rateLimited = limited.filter((r) => r.status === 'rejected' && r.reason?.name === 'JwksRateLimitError').length;

  // Known key during an outage once the key cache's max age has passed (jwks-rsa's default cacheMaxAge is 10 min;
  // shortened here to 100 ms; our source's max age is pushed past by its injectable clock).
  let fakeNow = Date.now() / 1000;
  const oursOutage = jwksKeySource({
    url: new URL(server.uri),
    cooldown: 30,
    timeout: 1,
    algorithms: undefined,
    clock: () => fakeNow,
  });
  await Promise.resolve(oursOutage.keyFor(header));
  const agedClient = new JwksClient({ jwksUri: server.uri, cacheMaxAge: 100, timeout: 1000 });
  await agedClient.getSigningKey('rsa-1');
  await server.stop();
  await new Promise((resolve) => setTimeout(resolve, 150));
  fakeNow += 601;
  const oursKept = await Promise.resolve()
    .then(() => oursOutage.keyFor(header))
    .then(
      () => 'still verifies',
      (e) => `fails (${e.code})`,
    );
  const rsaKept = await agedClient.getSigningKey('rsa-1').then(
    () => 'still verifies',
    (e) => `fails (${e.code ?? e.name})`,
  );
  for (const source of [ours, oursFlood, oursOutage]) source.close();
  auth.close();

  // Footprint: what jwks-rsa would add to a runtime closure that is jsonwebtoken + lru-cache + ms today.
  const base = new Map();
  for (const dep of ['jsonwebtoken', 'lru-cache', 'ms']) runtimeClosure(dep, ROOT, base);
  const withJwks = runtimeClosure('jwks-rsa', ROOT, new Map(base));
  const added = [...withJwks].filter(([id]) => !base.has(id));
  const addedBytes = added.reduce((sum, [, dir]) => sum + packageBytes(dir), 0);
  const ourBytes = [
    ['keys', 'jwks.js'],
    ['fetch', 'bounded-fetch.js'],
  ].reduce((sum, [dir, f]) => sum + fs.statSync(path.join(DIST, dir, f)).size, 0);
  const requireOurs = requireMs(path.join(DIST, 'keys', 'jwks.js'));
  const requireRsa = requireMs('jwks-rsa');

  const rows = [
    ['warm key lookup (per request)', fmt(lookup.ours), fmt(lookup.rsa), `${(lookup.rsa / lookup.ours).toFixed(0)}×`],
    [
      'warm lookup → KeyObject',
      fmt(lookup.ours),
      fmt(lookup.rsaKeyObject),
      `${(lookup.rsaKeyObject / lookup.ours).toFixed(0)}×`,
    ],
    [
      'lookup + jsonwebtoken.verify RS256',
      fmt(verify.ours),
      fmt(verify.rsa),
      `${(verify.rsa / verify.ours).toFixed(2)}×`,
    ],
    [
      'fetches for 20 concurrent distinct unknown kids',
      String(oursFetches),
      `${rsaFetches} (with rateLimit 10/min: ${limitedFetches} fetches, ${rateLimited} JwksRateLimitError, last answer after ${limitedSeconds.toFixed(0)} s)`,
      '',
    ],
    ['known key in an outage after cache max age', oursKept, `${rsaKept} (unless cacheMaxAgeFallback is set)`, ''],
    ['runtime packages added', '0', `${added.length}: ${added.map(([id]) => id).join(', ')}`, ''],
    [
      'bytes on disk added',
      `${(ourBytes / 1024).toFixed(1)} KiB (our compiled jwks.js + bounded-fetch.js)`,
      `${(addedBytes / 1024).toFixed(0)} KiB`,
      '',
    ],
    ['cold require', `${requireOurs.toFixed(1)} ms`, `${requireRsa.toFixed(1)} ms`, ''],
  ];
  const line = (cells) => `| ${cells.join(' | ')} |`;
  console.log(
    `\nJWKS approach, node ${process.version}, ${require('node:os').cpus().length} CPUs, ${SECONDS}s × ${SAMPLES} samples (median)\n`,
  );
  console.log(line(['measure', 'this package (fetch + createPublicKey)', 'jwks-rsa 4', 'jwks-rsa / ours']));
  console.log(line(['---', '---', '---', '---']));
  for (const row of rows) console.log(line(row));
  console.log(`\nfull createTokenAuth().verify() per token, JWKS key warm, result cache off: ${fmt(verify.full)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
