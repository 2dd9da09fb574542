'use strict';
/**
 * `npm run soak`: a bounded load soak (issue 6). The package is compiled privately (scripts/.tmp/dist), then a
 * server process running it (scripts/soak-server.js) is driven with
 * autocannon on 127.0.0.1 by a mix of valid (a hot set and a pool larger than the cache), expired, forged,
 * missing-scope, alg-none, malformed and missing tokens, and every answer's status and body are checked
 * against what that token must get. Fails unless there are 0 wrong answers, 0 5xx, 0 connection errors, and
 * the server's resident memory is flat after warm-up (the median RSS of the last quarter of the run within
 * 10 % or 16 MiB, whichever is larger, of the median of the quarter that follows warm-up).
 *
 *   npm run soak                    # 60 s, 32 connections
 *   npm run soak -- --seconds 300 --connections 64
 *   SOAK_GC=1 npm run soak             # diagnosis: a full GC in the server before each sample
 *   npm run soak -- --fleet --seconds 20   # three instances sharing Redis, revocations during the run (soak-fleet.js)
 */
const { fork } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const path = require('node:path');
const autocannon = require('autocannon');
const { option, compilePackage, b64, signHs256, range } = require('./load-common');

const seconds = option('seconds', 60);
const connections = option('connections', 32);
const secret = randomBytes(48).toString('base64url');
const now = Math.floor(Date.now() / 1000);
const MiB = 1024 * 1024;

const token = (payload, key = secret) => signHs256(payload, key);
function claims(i, overrides = {}) {
  return {
    iss: 'auth.example.com',
    aud: 'api.example.com',
    iat: now - 60,
    exp: now + 3600 + seconds,
    jti: `soak-${i}`,
    scopes: ['identify', 'email', 'profile'],
    providers: {
      google: {
        id: String(1e12 + i),
        email: `u${i}@example.com`,
        name: `User ${i}`,
        picture: `https://example.com/${i}.png`,
      },
    },
    metadata: { createdAt: new Date((now - 60) * 1000).toISOString(), authorizer: 'soak' },
    sub: null,
    ...overrides,
  };
}

const INVALID = '{"status":"error","message":"Invalid access token"}';
const EXPIRED = '{"status":"error","message":"Access token expired"}';
const MISSING = '{"status":"error","message":"Missing access token"}';
const SCOPE = '{"status":"error","message":"Insufficient scope"}';

/** Each kind of traffic: its tokens, the status and body it must get, and its weight in the mix. */
const KINDS = [
  { name: 'valid (hot set of 100)', weight: 4, status: 200, tokens: range(100, (i) => token(claims(i))) },
  {
    name: 'valid (pool of 30 000, beyond the cache)',
    weight: 4,
    status: 200,
    tokens: range(30_000, (i) => token(claims(1000 + i))),
  },
  {
    name: 'expired',
    weight: 1,
    status: 401,
    body: EXPIRED,
    tokens: range(2000, (i) => token(claims(100_000 + i, { iat: now - 7200, exp: now - 3600 }))),
  },
  {
    name: 'forged (wrong key)',
    weight: 1,
    status: 401,
    body: INVALID,
    tokens: range(2000, (i) => token(claims(200_000 + i), randomBytes(32))),
  },
  {
    name: 'missing scope',
    weight: 1,
    status: 403,
    body: SCOPE,
    tokens: range(2000, (i) => token(claims(300_000 + i, { scopes: ['email'] }))),
  },
  {
    name: 'alg none',
    weight: 1,
    status: 401,
    body: INVALID,
    tokens: range(500, (i) => `${b64({ alg: 'none' })}.${b64(claims(400_000 + i))}.`),
  },
  {
    name: 'malformed',
    weight: 1,
    status: 401,
    body: INVALID,
    tokens: range(500, (i) => `${b64({ alg: 'HS256' })}.${b64(`{"jti":${i}`)}.AAAA`),
  },
  { name: 'missing (no Authorization)', weight: 1, status: 401, body: MISSING, tokens: [undefined] },
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  // The server runs the compiled package, built privately from the working tree (dist/ is left alone).
  compilePackage();
  const server = fork(path.join(__dirname, 'soak-server.js'), [], {
    execArgv: process.env.SOAK_GC === '1' ? ['--expose-gc'] : [],
    env: { ...process.env, SOAK_SECRET: secret },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const samples = [];
  const port = await new Promise((resolve, reject) => {
    server.on('message', (message) => {
      if (message.type === 'listening') resolve(message.port);
      else if (message.type === 'sample') samples.push(message);
    });
    server.on('exit', (code) => reject(new Error(`soak server exited (${code})`)));
  });

  const tally = new Map(KINDS.map((kind) => [kind.name, { answers: 0, wrong: 0, examples: [] }]));
  let fivexx = 0;
  const requests = [];
  for (const kind of KINDS) {
    let next = 0;
    const entry = {
      method: 'GET',
      path: '/me',
      setupRequest(req) {
        const t = kind.tokens[next++ % kind.tokens.length];
        const headers = { ...req.headers };
        if (t === undefined) delete headers.authorization;
        else headers.authorization = `Bearer ${t}`;
        return { ...req, headers };
      },
      onResponse(status, body) {
        const seen = tally.get(kind.name);
        seen.answers++;
        if (status >= 500) fivexx++;
        const right = status === kind.status && (kind.body === undefined || body === kind.body);
        if (!right) {
          seen.wrong++;
          if (seen.examples.length < 3) seen.examples.push(`${status} ${String(body).slice(0, 100)}`);
        }
      },
    };
    for (let i = 0; i < kind.weight; i++) requests.push(entry);
  }

  console.log(
    `soak: ${seconds} s, ${connections} connections, ${KINDS.length} kinds of traffic, server pid ${server.pid}`,
  );
  const started = Date.now();
  const result = await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: seconds, requests });
  const ended = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 1100));
  server.disconnect();

  const answers = [...tally.values()].reduce((n, t) => n + t.answers, 0);
  const wrong = [...tally.values()].reduce((n, t) => n + t.wrong, 0);
  console.log(
    `requests: ${result.requests.total} answered (${Math.round(result.requests.average)}/s average), ` +
      `latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; errors ${result.errors}, timeouts ${result.timeouts}`,
  );
  for (const [name, t] of tally)
    console.log(
      `  ${name}: ${t.answers} answers, ${t.wrong} wrong${t.examples.length ? ` (${t.examples.join('; ')})` : ''}`,
    );
  console.log(`checked: ${answers}, wrong answers: ${wrong}, 5xx: ${fivexx}`);

  const during = samples.filter((s) => s.at >= started && s.at <= ended);
  const warmUp = Math.max(5, Math.round(seconds * 0.2));
  const settled = during.slice(warmUp);
  const quarter = Math.max(1, Math.floor(settled.length / 4));
  const early = median(settled.slice(0, quarter).map((s) => s.rss));
  const late = median(settled.slice(-quarter).map((s) => s.rss));
  const allowed = Math.max(16 * MiB, early * 0.1);
  const step = Math.max(1, Math.floor(during.length / 12));
  console.log(
    `server RSS (MiB) every ${step} s: ${during
      .filter((_, i) => i % step === 0)
      .map((s) => (s.rss / MiB).toFixed(0))
      .join(' ')}`,
  );
  const last = during[during.length - 1];
  if (last !== undefined)
    console.log(`server at the end: heap ${(last.heapUsed / MiB).toFixed(1)} MiB, cache ${JSON.stringify(last.cache)}`);
  const flat = settled.length >= 2 && late - early <= allowed;
  console.log(
    `RSS after warm-up (${warmUp} s): median ${(early / MiB).toFixed(1)} MiB early, ${(late / MiB).toFixed(1)} MiB late` +
      ` (growth ${((late - early) / MiB).toFixed(1)} MiB, allowed ${(allowed / MiB).toFixed(1)}): ${flat ? 'flat' : 'NOT FLAT'}`,
  );

  const ok =
    wrong === 0 &&
    fivexx === 0 &&
    result.errors === 0 &&
    result.timeouts === 0 &&
    answers === result.requests.total &&
    flat;
  console.log(ok ? 'soak: passed' : 'soak: FAILED');
  if (!ok) process.exitCode = 1;
}

if (process.argv.includes('--fleet')) {
  require('./soak-fleet');
} else {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
