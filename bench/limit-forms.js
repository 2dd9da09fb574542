'use strict';
// Which form of node:crypto's raw signature check is cheapest, per algorithm: the "limit" rows of bench/cpu.js must
// be the cheapest there is, or "above the limit" flatters every verifier. Forms interleaved in one process over the
// fixtures' pool (CPU µs per check, median over rounds; in brackets the median of per-round differences to the
// first form). node bench/limit-forms.js <dist> [rounds] [algs]
const crypto = require('node:crypto');
const path = require('node:path');
const { loadFixtures, rawSignatureCheck, ALGS, SIGNING } = require('./fixtures');
const { median } = require('./timing');

/** lib/jose/signature.ts's two buffers, for the form it uses. */
const FIXED = { expected: Buffer.alloc(128), given: Buffer.alloc(128) };

/** The forms of one algorithm's check, each `(token, signedEnd) => boolean`; the first is the limit's. */
function formsOf(alg, keys) {
  const limit = rawSignatureCheck(alg, keys);
  if (alg === 'HS256') {
    const secret = Buffer.from(keys.HS256.secret);
    const key = crypto.createSecretKey(secret);
    return {
      'text, constant-time (the limit)': limit,
      'digest bytes vs decoded signature': (token, end) => {
        const mac = crypto.createHmac('sha256', key).update(token.slice(0, end)).digest();
        const given = Buffer.from(token.slice(end + 1), 'base64url');
        return mac.length === given.length && crypto.timingSafeEqual(mac, given);
      },
      "text in two fixed buffers, zeroed (the verifier's form)": (token, end) => {
        const mac = crypto.createHmac('sha256', key).update(token.slice(0, end)).digest('base64url');
        const given = token.slice(end + 1);
        if (mac.length !== given.length || mac.length >= FIXED.expected.length) return false;
        FIXED.expected.write(mac, 0, 'latin1');
        const written = FIXED.given.write(given, 0, 'utf8');
        const same = written === given.length && crypto.timingSafeEqual(FIXED.expected, FIXED.given);
        FIXED.expected.fill(0);
        FIXED.given.fill(0);
        return same;
      },
      'text, secret as a Buffer': (token, end) => {
        const mac = Buffer.from(crypto.createHmac('sha256', secret).update(token.slice(0, end)).digest('base64url'));
        const given = Buffer.from(token.slice(end + 1));
        return mac.length === given.length && crypto.timingSafeEqual(mac, given);
      },
    };
  }
  const key = crypto.createPublicKey(keys[alg].publicKey);
  const { digest, dsaEncoding } = SIGNING[alg];
  const verifyKey = dsaEncoding ? { key, dsaEncoding } : key;
  const oneCall = (token, end) =>
    crypto.verify(digest, Buffer.from(token.slice(0, end)), verifyKey, Buffer.from(token.slice(end + 1), 'base64url'));
  if (digest === null) return { 'one crypto.verify (the limit)': limit };
  return { 'createVerify, streamed (the limit)': limit, 'one crypto.verify': oneCall };
}

async function main() {
  const [dist, roundsArg, algsArg] = process.argv.slice(2);
  const rounds = Number(roundsArg ?? 31);
  const fixtures = await loadFixtures(path.resolve(dist));
  for (const alg of algsArg ? algsArg.split(',') : ALGS) {
    const pool = fixtures.pools[alg];
    const dots = pool.map((t) => t.lastIndexOf('.'));
    const forms = Object.entries(formsOf(alg, fixtures.keys));
    const calls = { HS256: 20000, RS256: 2000, ES256: 600, EdDSA: 600 }[alg] ?? 1000;
    const cpu = forms.map(() => []);
    let i = 0;
    for (let round = 0; round <= rounds; round++) {
      for (let k = 0; k < forms.length; k++) {
        const f = (k + round) % forms.length;
        const check = forms[f][1];
        const start = process.cpuUsage();
        for (let c = 0; c < calls; c++, i++) {
          if (!check(pool[i % pool.length], dots[i % pool.length])) throw new Error(`${alg} ${forms[f][0]} refused`);
        }
        const used = process.cpuUsage(start);
        if (round > 0) cpu[f].push((used.user + used.system) / calls); // round 0 warms up
      }
    }
    for (let f = 0; f < forms.length; f++) {
      const diff = median(cpu[f].map((v, r) => v - cpu[0][r]));
      process.stdout.write(`${alg} ${forms[f][0].padEnd(36)} ${median(cpu[f]).toFixed(2)} (${diff.toFixed(2)})\n`);
    }
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
