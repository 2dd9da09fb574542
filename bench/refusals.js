'use strict';
// CPU per refused request (every refusal is reported: onError, NODE_DEBUG, and since issue 28 its err.hint), for a
// build against a baseline build, interleaved in one process like bench/cpu.js: a request without a token (401
// missing_token), a forged token sent again and again (401 from the cached fault), and a valid token on a route
// that needs a scope it lacks (403 insufficient_scope). HS256, the cheapest signature, so the refusal's own cost shows.
//
//   npm run build && node bench/refusals.js $PWD/dist $PWD/bench/.tmp/dist-base [seconds per window] [rounds]
//
// A baseline build of an earlier commit: git archive <commit> lib tsconfig.json tsconfig.build.json | tar -x -C
// bench/.tmp/base && (cd bench/.tmp/base && npx tsc -p tsconfig.build.json --outDir ../dist-base).
const { createHmac } = require('node:crypto');
const { median } = require('./timing');

const [dist, baseDist, secondsArg = '0.3', roundsArg = '9'] = process.argv.slice(2);
const SECONDS = Number(secondsArg);
const ROUNDS = Number(roundsArg);
const SECRET = 'refusals-bench-secret-that-is-long-enough!';
const now = Math.floor(Date.now() / 1000);
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({
  iss: 'bench.example',
  aud: 'api',
  sub: 'user-1',
  iat: now,
  exp: now + 3600,
  jti: 'j1',
  scope: 'read',
})}`;
const valid = `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
const forged = `${valid.slice(0, -4)}AAAA`;

const CASES = {
  missing: { header: undefined, scopes: ['read'] },
  forged: { header: `Bearer ${forged}`, scopes: ['read'] },
  scope: { header: `Bearer ${valid}`, scopes: ['admin'] },
};

function request(header) {
  const headers = { host: '127.0.0.1' };
  if (header !== undefined) headers.authorization = header;
  return {
    method: 'GET',
    url: '/me',
    originalUrl: '/me',
    protocol: 'http',
    headers,
    rawHeaders: header === undefined ? ['Host', '127.0.0.1'] : ['Host', '127.0.0.1', 'Authorization', header],
    query: {},
    socket: {},
    get: (name) => (name.toLowerCase() === 'host' ? '127.0.0.1' : undefined),
  };
}

/** The middleware of one build for one case; resolves each call once it answered (every call here is refused). */
function build(root, { scopes }) {
  const { createTokenAuth } = require(`${root}/index.js`);
  const auth = createTokenAuth({
    key: { secret: SECRET },
    issuer: 'bench.example',
    audience: 'api',
    claims: 'jwt',
    onError: () => undefined,
  });
  const middleware = auth.requireVerifiedUser(scopes);
  let answered = 0;
  const res = {
    headersSent: false,
    status: () => res,
    setHeader: () => undefined,
    json: () => {
      answered++;
      return res;
    },
  };
  return {
    run(req) {
      middleware(req, res, () => {
        throw new Error('a refused request reached next()');
      });
    },
    answered: () => answered,
  };
}

function window(scenario) {
  const cpuStart = process.cpuUsage();
  const stop = process.hrtime.bigint() + BigInt(Math.round(SECONDS * 1e9));
  let n = 0;
  do {
    for (let k = 0; k < 64; k++) scenario.run(request(scenario.header));
    n += 64;
  } while (process.hrtime.bigint() < stop);
  const cpu = process.cpuUsage(cpuStart);
  return (cpu.user + cpu.system) / n;
}

const scenarios = [];
for (const [name, spec] of Object.entries(CASES)) {
  for (const [label, root] of [
    ['now', dist],
    ['base', baseDist],
  ])
    scenarios.push({ name: `${name}@${label}`, header: spec.header, cpu: [], ...build(root, spec) });
}
for (const s of scenarios) window({ ...s, run: s.run }); // warm up, JIT
for (let round = 0; round < ROUNDS; round++)
  for (let k = 0; k < scenarios.length; k++) {
    const s = scenarios[(k + round) % scenarios.length];
    s.cpu.push(window(s));
  }
console.log(`CPU µs per refused request, median of ${ROUNDS} interleaved rounds of ${SECONDS} s`);
console.log('| refusal | baseline | now | now − baseline (median of per-round differences) |');
console.log('| --- | --- | --- | --- |');
for (const name of Object.keys(CASES)) {
  const now = scenarios.find((s) => s.name === `${name}@now`);
  const base = scenarios.find((s) => s.name === `${name}@base`);
  if (now.answered() === 0 || base.answered() === 0) throw new Error(`${name}: no refusal was answered`);
  const diff = median(now.cpu.map((value, i) => value - base.cpu[i]));
  console.log(
    `| ${name} | ${median(base.cpu).toFixed(2)} | ${median(now.cpu).toFixed(2)} | ${diff >= 0 ? '+' : ''}${diff.toFixed(2)} |`,
  );
}
