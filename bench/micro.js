'use strict';
// Micro-benchmarks of verification in one process, no HTTP: this package's verify() and middleware (cache hit,
// cold), jsonwebtoken.verify and fast-jwt for reference, and the raw signature check: the physical limit.
// Run by bench/run.js as a child: node bench/micro.js <dist> <seconds per sample>.
const crypto = require('node:crypto');
const jwt = require('jsonwebtoken');
const { createVerifier } = require('fast-jwt');
const { loadFixtures, rawSignatureCheck, ALGS } = require('./fixtures');

const [dist, secondsArg] = process.argv.slice(2);
const { nsPerCall } = require('./timing');

const SECONDS = Number(secondsArg);
const SAMPLES = 5;

const timing = { seconds: SECONDS, samples: SAMPLES };
/** Median ns per call of fn(i); a returned promise is awaited. */
const time = (fn) => nsPerCall(fn, timing);

/** The signature check alone on pre-split, pre-decoded inputs. */
function keyObject(alg, keys) {
  return alg === 'HS256'
    ? crypto.createSecretKey(Buffer.from(keys.HS256.secret))
    : crypto.createPublicKey(keys[alg].publicKey);
}

async function main() {
  const fixtures = await loadFixtures(dist);
  const { createTokenAuth } = require(`${dist}/index.js`);
  const rows = [];
  const add = (alg, name, ns, hideNs = false) => {
    rows.push({ alg, name, nsPerOp: hideNs ? undefined : ns, opsPerSec: 1e9 / ns });
    process.stderr.write(`  ${alg} ${name}: ${Math.round(ns)} ns/op\n`);
  };
  const base = { issuer: fixtures.issuer, audience: fixtures.audience };
  const sink = [];

  for (const alg of ALGS) {
    const pool = fixtures.pools[alg];
    const n = pool.length;
    const key = alg === 'HS256' ? { secret: fixtures.keys.HS256.secret } : { publicKey: fixtures.keys[alg].publicKey };
    const reqs = pool.map((t) => ({
      method: 'GET',
      headers: { authorization: `Bearer ${t}` },
      rawHeaders: ['Host', '127.0.0.1', 'Authorization', `Bearer ${t}`],
    }));
    const next = () => undefined;
    const res = {};

    const hot = createTokenAuth({ key, ...base });
    const hotMw = hot.requireVerifiedUser(['identify']);
    await hot.verify(pool[0]);
    add(alg, 'verify(), cache hit', await time(() => hot.verify(pool[0])));
    add(alg, 'middleware, cache hit', await time(() => hotMw(reqs[0], res, next)));

    const cold = createTokenAuth({ key, ...base });
    const coldMw = cold.requireVerifiedUser(['identify']);
    add(alg, 'middleware, cold (cache on, every token new)', await time((i) => coldMw(reqs[i % n], res, next)));
    const off = createTokenAuth({ key, ...base, cache: false });
    const offMw = off.requireVerifiedUser(['identify']);
    add(alg, 'middleware, `cache: false`', await time((i) => offMw(reqs[i % n], res, next)));
    add(alg, 'verify(), `cache: false`', await time((i) => off.verify(pool[i % n])));
    for (const r of reqs.slice(0, 4)) if (r.auth === undefined) throw new Error('middleware did not verify');

    const ko = keyObject(alg, fixtures.keys);
    const jwtOptions = { algorithms: [alg], issuer: fixtures.issuer, audience: fixtures.audience };
    // jsonwebtoken 9 does not verify EdDSA.
    if (alg !== 'EdDSA')
      add(
        alg,
        'jsonwebtoken.verify (KeyObject)',
        await time((i) => sink.push(jwt.verify(pool[i % n], ko, jwtOptions)) && sink.pop()),
      );
    const material = alg === 'HS256' ? fixtures.keys.HS256.secret : fixtures.keys[alg].publicKey;
    const fast = createVerifier({
      key: material,
      algorithms: [alg],
      allowedIss: fixtures.issuer,
      allowedAud: fixtures.audience,
    });
    add(alg, 'fast-jwt verify (no cache)', await time((i) => sink.push(fast(pool[i % n])) && sink.pop()));

    const raw = rawSignatureCheck(alg, fixtures.keys);
    const dots = pool.map((t) => t.lastIndexOf('.'));
    if (!pool.slice(0, 4).every((t, i) => raw(t, dots[i]))) throw new Error('raw verifier rejected a valid token');
    add(
      alg,
      `raw ${alg === 'HS256' ? 'HMAC-SHA256 + compare' : 'signature check'} (the limit)`,
      await time((i) => raw(pool[i % n], dots[i % n])),
    );
    hot.close();
    cold.close();
    off.close();
  }
  process.send({ rows });
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
