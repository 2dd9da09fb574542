'use strict';
/**
 * What a hostile client, key set or upstream costs (issue 19; SECURITY.md, docs/caching.md, docs/fleet.md,
 * docs/remote-keys.md), measured against the lib/ of a checkout, so that one command gives before and after:
 *
 * 1. cache: 5 000 users cached, then 10 000 distinct garbage tokens, or 1 100 forged ~15 KB tokens: how many of
 *    the users are still cache hits afterwards.
 * 2. jwks: a refetch of a set of 8 000 EC keys without `kid` (992 KiB): the longest event-loop stall (a 5 ms
 *    interval timer's largest gap) and the CPU to choose a key for a token without `kid` against that set.
 * 3. upstream: 300 new tokens at 200/s against an upstream that accepts connections and never answers (timeout
 *    1 s): sockets open at once, calls that waited the whole timeout, and the answers given.
 *
 *   node bench/hostile.js [ROOT] [--parts cache,jwks,upstream]
 *
 * ROOT (default: this checkout) is a directory holding `lib/` and `scripts/ts-register.js`; for "before", extract
 * an earlier commit there: `mkdir -p bench/.tmp/before && git archive <commit> lib scripts | tar -x -C bench/.tmp/before`
 * (inside the repository, so that its imports resolve this checkout's node_modules).
 */
const path = require('node:path');
const http = require('node:http');
const { createHmac, generateKeyPairSync, randomBytes } = require('node:crypto');

const args = process.argv.slice(2);
const partsAt = args.indexOf('--parts');
const parts = new Set(partsAt >= 0 ? args[partsAt + 1].split(',') : ['cache', 'jwks', 'upstream']);
const root = path.resolve(
  args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--parts') ?? path.join(__dirname, '..'),
);
require(path.join(root, 'scripts/ts-register'));
const { createTokenAuth } = require(path.join(root, 'lib'));
const { jwksKeySource } = require(path.join(root, 'lib/keys/jwks'));

const SECRET = 'hostile-bench-secret-that-is-long-enough!';
const NOW = Math.floor(Date.now() / 1000);
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
function sign(payload, secret = SECRET) {
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
const claims = (i, extra = {}) => ({
  iss: 'i',
  aud: 'a',
  sub: `u${i}`,
  iat: NOW,
  exp: NOW + 3600,
  jti: `j${i}`,
  ...extra,
});

async function cacheFlood(label, flood) {
  const auth = createTokenAuth({ key: { secret: SECRET }, issuer: 'i', audience: 'a', claims: 'jwt' });
  const users = Array.from({ length: 5000 }, (_, i) => sign(claims(i)));
  for (const token of users) {
    await auth.verify(token);
    await auth.verify(token);
  }
  for (const token of flood()) await auth.verify(token).catch(() => undefined);
  const before = auth.stats().hits;
  for (const token of users) await auth.verify(token);
  const result = {
    part: 'cache',
    flood: label,
    usersCached: users.length,
    userHitsAfter: auth.stats().hits - before,
    sizeAfter: auth.stats().size,
  };
  auth.close();
  return result;
}

async function jwksRefetch(n) {
  const keys = [];
  for (let i = 0; i < n; i++) {
    const { x, y } = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    keys.push({ kty: 'EC', crv: 'P-256', x, y });
  }
  const body = JSON.stringify({ keys });
  const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  let now = 1000;
  const source = jwksKeySource({
    url: new URL(`http://127.0.0.1:${server.address().port}/jwks`),
    cooldown: 0,
    timeout: 600,
    algorithms: undefined,
    clock: () => now,
  });
  await Promise.resolve(source.keyFor({ alg: 'ES256', kid: 'first' }, {})).catch(() => undefined);
  let last = performance.now();
  let longest = 0;
  const tick = setInterval(() => {
    const t = performance.now();
    longest = Math.max(longest, t - last);
    last = t;
  }, 5);
  now += 1;
  const started = performance.now();
  await Promise.resolve(source.keyFor({ alg: 'ES256', kid: 'second' }, {})).catch(() => undefined); // unknown kid: a refetch
  const refetchMs = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 30));
  clearInterval(tick);
  const cpu = process.cpuUsage();
  for (let i = 0; i < 1000; i++) {
    try {
      source.keyFor({ alg: 'ES256' }, {});
    } catch {
      // several keys fit: refused, as it should be; the cost of finding that out is what is measured
    }
  }
  const used = process.cpuUsage(cpu);
  source.close();
  server.close();
  return {
    part: 'jwks',
    keys: n,
    bytes: body.length,
    refetchMs: Math.round(refetchMs),
    longestStallMs: Math.round(longest),
    kidlessChoiceCpuUs: +((used.user + used.system) / 1000).toFixed(1),
  };
}

async function hangingUpstream() {
  let open = 0;
  let mostOpen = 0;
  const server = http.createServer(() => undefined);
  server.on('connection', (socket) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    socket.on('close', () => open--);
  });
  const warnings = new Set();
  const onWarning = (w) => warnings.add(w.name);
  process.on('warning', onWarning);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const auth = createTokenAuth({
    key: { upstream: `http://127.0.0.1:${server.address().port}`, timeout: 1 },
    issuer: 'i',
    audience: 'a',
  });
  const waits = [];
  const answers = {};
  const jobs = [];
  for (let i = 0; i < 300; i++) {
    const started = performance.now();
    jobs.push(
      auth
        .verify(`token${i}-${randomBytes(8).toString('hex')}`)
        .then(
          () => 'ok',
          (err) => `${err.code}:${err.reason}`,
        )
        .then((answer) => {
          waits.push(performance.now() - started);
          answers[answer] = (answers[answer] ?? 0) + 1;
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(jobs);
  auth.close();
  server.closeAllConnections();
  server.close();
  process.off('warning', onWarning);
  return {
    part: 'upstream',
    tokens: 300,
    mostSocketsOpen: mostOpen,
    waitedWholeTimeout: waits.filter((w) => w >= 900).length,
    answers,
    warnings: [...warnings],
  };
}

async function main() {
  const out = [];
  if (parts.has('cache')) {
    out.push(
      await cacheFlood('10 000 distinct garbage tokens', function* garbage() {
        for (let i = 0; i < 10_000; i++) yield `${randomBytes(12).toString('base64url')}.x.y`;
      }),
    );
    const pad = 'x'.repeat(11_000);
    out.push(
      await cacheFlood('1 100 forged ~15 KB tokens', function* forged() {
        for (let i = 0; i < 1100; i++) yield sign(claims(i, { pad }), 'another-secret-that-is-long-enough-too!');
      }),
    );
  }
  if (parts.has('jwks')) out.push(await jwksRefetch(8000));
  if (parts.has('upstream')) out.push(await hangingUpstream());
  for (const line of out) console.log(JSON.stringify(line));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
