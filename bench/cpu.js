'use strict';
// In-process CPU per request (the headline table): every middleware called directly in one process with a fresh
// minimal request object per call, no HTTP, so the figures hold within a few percent on a shared machine where
// requests/s swing by ±30 %. Scenarios run in interleaved rounds (each round runs every scenario once, the
// starting one rotating); each window measures process CPU time (user + system, GC included) over its calls; the
// figures are medians over rounds. Cold traffic walks the 20 000-token pool, a new token per call.
// Each peer runs twice: as its README configures it (string secret or PEM string) and at its best (KeyObject),
// where those differ. Run by bench/run.js as a child: node bench/cpu.js <dist> <seconds per window> <rounds> [algs] [scenarios].
const crypto = require('node:crypto');
const { loadFixtures, rawSignatureCheck, signJws, ALGS } = require('./fixtures');
const { median } = require('./timing');

const [dist, secondsArg, roundsArg, algsArg, scenariosArg] = process.argv.slice(2);
const SECONDS = Number(secondsArg);
const ROUNDS = Number(roundsArg);

/** Secret string or PEM, as the peers' READMEs show keys. */
const keyText = (ctx) => (ctx.alg === 'HS256' ? ctx.keys.HS256.secret : ctx.keys[ctx.alg].publicKey);
/** The same key parsed once: what a peer at its best is given. */
const keyObject = (ctx) =>
  ctx.alg === 'HS256'
    ? crypto.createSecretKey(Buffer.from(ctx.keys.HS256.secret))
    : crypto.createPublicKey(ctx.keys[ctx.alg].publicKey);

function ours(extra, base = false, route = undefined) {
  return (ctx) => {
    const { createTokenAuth } = require(`${base ? ctx.baseDist : ctx.dist}/index.js`);
    const key = ctx.alg === 'HS256' ? { secret: ctx.keys.HS256.secret } : { publicKey: ctx.keys[ctx.alg].publicKey };
    const auth = createTokenAuth({ key, issuer: ctx.issuer, audience: ctx.audience, ...extra });
    return [
      route === undefined ? auth.requireVerifiedUser(['identify']) : auth.requireVerifiedUser(['identify'], route),
    ];
  };
}

/** The route requirements of `ours-hot-roles` (docs/authorization.md): a role among two, and a tenant claim. */
const ROLES_ROUTE = { roles: ['orders:admin'], claims: { tid: 'tenant-1' } };

/**
 * The one token of the two roles rows: the pool's first payload with `roles` and `tid` added, signed with the
 * pool's key, so that the rows with and without requirements verify the same bytes.
 */
function rolesToken(ctx, pool) {
  const [header, payload] = pool[0]
    .slice('Bearer '.length)
    .split('.')
    .slice(0, 2)
    .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
  const key =
    ctx.alg === 'HS256'
      ? crypto.createSecretKey(Buffer.from(ctx.keys.HS256.secret))
      : crypto.createPrivateKey(ctx.keys[ctx.alg].privateKey);
  return `Bearer ${signJws(ctx.alg, header, { ...payload, roles: ['user', 'orders:admin'], tid: 'tenant-1' }, key)}`;
}

function expressJwt(key) {
  return (ctx) => {
    const { expressjwt } = require('express-jwt');
    return [expressjwt({ secret: key(ctx), algorithms: [ctx.alg], issuer: ctx.issuer, audience: ctx.audience })];
  };
}

function passportJwt(key) {
  return (ctx) => {
    const { Passport } = require('passport');
    const { Strategy, ExtractJwt } = require('passport-jwt');
    const passport = new Passport();
    passport.use(
      new Strategy(
        {
          jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
          secretOrKey: key(ctx),
          issuer: ctx.issuer,
          audience: ctx.audience,
          algorithms: [ctx.alg],
        },
        (payload, done) => done(null, payload),
      ),
    );
    return [passport.initialize(), passport.authenticate('jwt', { session: false })];
  };
}

function oauth2Bearer(ctx) {
  const { auth } = require('express-oauth2-jwt-bearer');
  const key = ctx.alg === 'HS256' ? { secret: ctx.keys.HS256.secret } : { publicKey: ctx.keys[ctx.alg].publicKey };
  return [auth({ issuer: ctx.issuer, audience: ctx.audience, tokenSigningAlg: ctx.alg, ...key })];
}

function fastJwt(options) {
  return (ctx) => {
    const { createVerifier } = require('fast-jwt');
    const verify = createVerifier({
      key: keyText(ctx),
      algorithms: [ctx.alg],
      allowedIss: ctx.issuer,
      allowedAud: ctx.audience,
      ...options,
    });
    return [
      function fastJwtAuth(req, res, next) {
        const header = req.headers.authorization;
        if (typeof header !== 'string' || !header.startsWith('Bearer ')) return res.status(401).json({});
        try {
          req.auth = verify(header.slice(7));
        } catch {
          return res.status(401).json({});
        }
        return next();
      },
    ];
  };
}

/** Not a verifier: node:crypto's signature check on the signing input and JSON.parse of the payload. */
function limit(ctx) {
  const good = rawSignatureCheck(ctx.alg, ctx.keys);
  return [
    function rawCheck(req, res, next) {
      const token = req.headers.authorization.slice(7);
      const first = token.indexOf('.');
      const second = token.lastIndexOf('.');
      if (!good(token, second)) return res.status(401).json({});
      req.auth = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString());
      return next();
    },
  ];
}

/** Not a verifier: one middleware that sets req.auth. */
function floor() {
  const claims = { sub: 'nobody' };
  return [
    function noop(req, _res, next) {
      req.auth = claims;
      next();
    },
  ];
}

/** A revocation store that holds nothing (the `RevocationStore` seam as every build has it): the cost of the check alone. */
const EMPTY_LIST = {
  follow: () => ({
    isRevoked: () => false,
    stats: () => ({ loaded: true, available: true, size: 0 }),
    unfollow: () => undefined,
  }),
};

/**
 * This package with `revocation` and `maxLifetime` (the fixtures' tokens live 3 days): on `base`, the store that holds
 * nothing; otherwise createMemoryRevocationStore holding `rules` rule entries of the token's issuer, none naming its
 * user (half subject rules, half session rules with sub: every map is looked up, every lookup misses).
 */
function oursRules(rules, base = false) {
  return (ctx) => {
    const entry = require(`${base ? ctx.baseDist : ctx.dist}/index.js`);
    const key = ctx.alg === 'HS256' ? { secret: ctx.keys.HS256.secret } : { publicKey: ctx.keys[ctx.alg].publicKey };
    const store = base ? EMPTY_LIST : entry.createMemoryRevocationStore({ maxRules: Math.max(rules, 1) });
    const auth = entry.createTokenAuth({
      key,
      issuer: ctx.issuer,
      audience: ctx.audience,
      maxLifetime: '30d',
      revocation: store,
    });
    for (let i = 0; !base && i < rules / 2; i += 2) {
      void store.revokeSubject({ iss: ctx.issuer, sub: `revoked-${i}` });
      void store.revokeSubject({ iss: ctx.issuer, sub: `revoked-${i + 1}` });
      void store.revokeSession({ iss: ctx.issuer, sid: `session-${i}`, sub: `ended-${i}` });
    }
    return [auth.requireVerifiedUser(['identify'])];
  };
}

/** jsonwebtoken 9, under express-jwt and passport-jwt, does not verify EdDSA: those rows are left out for it. */
const NO_EDDSA = ['EdDSA'];

/**
 * Scenarios: `peer` names the library a row belongs to; `config` is `readme` or `best`; `hot` sends one token
 * (`'roles'`: the pool's first with roles and a tid); `versus` names the row it is compared with, round by round;
 * `baseline: false` keeps a row of ours from running on BENCH_BASELINE_DIST (one that needs options it lacks).
 */
const SCENARIOS = [
  { name: 'floor', label: 'floor: a no-op middleware that sets req.auth', hot: true, build: floor },
  { name: 'limit', label: 'limit: raw signature check + JSON.parse', build: limit },
  { name: 'ours-hot', label: 'express-verified-user, cache hit', hot: true, build: ours({}) },
  {
    name: 'ours-hot-plain',
    label: 'express-verified-user, cache hit, a token with roles and tid, the route without requirements',
    hot: 'roles',
    build: ours({}),
  },
  {
    name: 'ours-hot-roles',
    label: "express-verified-user, cache hit, that token, the route with { roles: ['orders:admin'], claims: { tid } }",
    hot: 'roles',
    versus: 'ours-hot-plain',
    baseline: false,
    build: ours({}, false, ROLES_ROUTE),
  },
  { name: 'ours-cold', label: 'express-verified-user, cold, cache on', build: ours({}) },
  { name: 'ours-nocache', label: 'express-verified-user, cold, `cache: false`', build: ours({ cache: false }) },
  // Revocation rules on a cache hit (run only when named): the @base twin is the build before with a store that
  // holds nothing, so "vs @base" is what the rule check adds.
  ...[
    ['ours-hot-rules0', 0],
    ['ours-hot-rules10k', 10_000],
    ['ours-hot-rules100k', 100_000],
  ].map(([name, rules]) => ({
    name,
    label: `express-verified-user, cache hit, a memory revocation store holding ${rules} rule entries`,
    hot: true,
    optIn: true,
    build: oursRules(rules),
    baseBuild: oursRules(rules, true),
  })),
  {
    name: 'ours-jwt-nocache',
    label: "express-verified-user, claims: 'jwt', cold, `cache: false`",
    extra: { claims: 'jwt', cache: false },
    build: ours({ claims: 'jwt', cache: false }),
  },
  {
    name: 'express-jwt',
    label: 'express-jwt (README: string key)',
    peer: 'express-jwt',
    config: 'readme',
    build: expressJwt(keyText),
    unsupported: NO_EDDSA,
  },
  {
    name: 'express-jwt-best',
    label: 'express-jwt (KeyObject)',
    peer: 'express-jwt',
    config: 'best',
    build: expressJwt(keyObject),
    unsupported: NO_EDDSA,
  },
  {
    name: 'oauth2-bearer',
    label: 'express-oauth2-jwt-bearer (README; parses the key once itself)',
    peer: 'express-oauth2-jwt-bearer',
    config: 'both',
    build: oauth2Bearer,
  },
  {
    name: 'passport-jwt',
    label: 'passport-jwt (README: string key)',
    peer: 'passport-jwt',
    config: 'readme',
    build: passportJwt(keyText),
    unsupported: NO_EDDSA,
  },
  {
    name: 'passport-jwt-best',
    label: 'passport-jwt (KeyObject)',
    peer: 'passport-jwt',
    config: 'best',
    build: passportJwt(keyObject),
    unsupported: NO_EDDSA,
  },
  {
    name: 'fast-jwt',
    label: 'fast-jwt (README: string key, no cache; parses the key once itself)',
    peer: 'fast-jwt',
    config: 'readme',
    build: fastJwt({}),
  },
  {
    name: 'fast-jwt-cache',
    label: 'fast-jwt (cache on)',
    peer: 'fast-jwt',
    config: 'best',
    build: fastJwt({ cache: true }),
  },
];

const headerOf = (name) => (name.toLowerCase() === 'host' ? '127.0.0.1' : undefined);
const notForm = () => false;

// Before/after in one run: with BENCH_BASELINE_DIST (an earlier build of lib/ inside this repository, such as
// bench/.tmp/dist-base), this package's three rows run again on that build, interleaved with the rest.
const BASELINE = process.env.BENCH_BASELINE_DIST;
if (BASELINE) {
  for (const s of SCENARIOS.filter((x) => x.name.startsWith('ours-') && x.baseline !== false)) {
    SCENARIOS.push({
      ...s,
      name: `${s.name}@base`,
      label: `${s.label} [baseline]`,
      build: s.baseBuild ?? ours(s.extra ?? (s.name === 'ours-nocache' ? { cache: false } : {}), true),
    });
  }
}

/** A fresh request object per call, as Express would hand each middleware (the fields the peers read). */
function request(header) {
  return {
    method: 'GET',
    url: '/me',
    originalUrl: '/me',
    protocol: 'http',
    headers: { host: '127.0.0.1', authorization: header },
    rawHeaders: ['Host', '127.0.0.1', 'Authorization', header],
    query: {},
    body: undefined,
    socket: {},
    is: notForm,
    get: headerOf,
  };
}

/** Run a middleware chain on one request; resolves (or returns at once) when the last one calls next(). */
function runner(chain) {
  let failures = 0;
  const res = {
    status: () => res,
    json: () => {
      failures++;
      return res;
    },
    set: () => res,
    setHeader: () => undefined,
    end: () => {
      failures++;
    },
  };
  const run = (req) => {
    let done = false;
    let wake;
    const step = (i) => (err) => {
      if (err) failures++;
      if (err || i === chain.length) {
        done = true;
        if (wake) wake();
        return;
      }
      chain[i](req, res, step(i + 1));
    };
    step(0)();
    return done
      ? undefined
      : new Promise((resolve) => {
          wake = resolve;
        });
  };
  return { run, failures: () => failures };
}

/** CPU µs per call over one window of about SECONDS. */
async function window(scenario) {
  const { run, headers } = scenario;
  const cpuStart = process.cpuUsage();
  const stop = process.hrtime.bigint() + BigInt(Math.round(SECONDS * 1e9));
  let n = 0;
  do {
    for (let k = 0; k < 32; k++) {
      const pending = run(request(headers[scenario.cursor++ % headers.length]));
      if (pending !== undefined) await pending;
    }
    n += 32;
  } while (process.hrtime.bigint() < stop);
  const cpu = process.cpuUsage(cpuStart);
  return (cpu.user + cpu.system) / n;
}

async function main() {
  const fixtures = await loadFixtures(dist);
  const results = {};
  for (const alg of algsArg ? algsArg.split(',') : ALGS) {
    const ctx = {
      alg,
      dist,
      baseDist: BASELINE,
      keys: fixtures.keys,
      issuer: fixtures.issuer,
      audience: fixtures.audience,
    };
    const pool = fixtures.pools[alg].map((t) => `Bearer ${t}`);
    const scenarios = SCENARIOS.filter(
      (s) => (scenariosArg ? scenariosArg.split(',').includes(s.name) : !s.optIn) && !s.unsupported?.includes(alg),
    ).map((s) => {
      const { run, failures } = runner(s.build(ctx));
      const headers = s.hot === 'roles' ? [rolesToken(ctx, pool)] : s.hot ? [pool[0]] : pool;
      return { ...s, run, failures, headers, cursor: 0, cpu: [] };
    });
    for (const s of scenarios) await window({ ...s, headers: s.headers.slice(0, 200) }); // warm up, JIT
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < scenarios.length; k++) {
        const s = scenarios[(k + round) % scenarios.length];
        s.cpu.push(await window(s));
      }
    }
    results[alg] = {};
    for (const s of scenarios) {
      if (s.failures() > 0) throw new Error(`${alg} ${s.name}: ${s.failures()} requests refused`);
      results[alg][s.name] = {
        label: s.label,
        peer: s.peer,
        config: s.config,
        versus: s.versus,
        cpu: s.cpu,
        median: median(s.cpu),
      };
      process.stderr.write(`  ${alg} ${s.name.padEnd(18)} ${median(s.cpu).toFixed(2)} CPU µs/req\n`);
    }
  }
  process.send({ rounds: ROUNDS, seconds: SECONDS, results });
}

// bench/instructions.js builds the same scenarios, requests and runner to count instructions under callgrind.
module.exports = { SCENARIOS, request, runner };

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
}
