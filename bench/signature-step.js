'use strict';
// The verifier's signature step alone (verify/signature.js of a build), against the same step of a baseline build,
// interleaved in one process: CPU µs per token, medians over rounds, and the median of the per-round differences.
// node bench/signature-step.js <dist> <baseline dist> [rounds]   (both built from lib/ with tsconfig.build.json)
const crypto = require('node:crypto');
const path = require('node:path');
const { median } = require('./timing');

const [distArg, baseArg, roundsArg] = process.argv.slice(2);
if (!distArg || !baseArg) throw new Error('usage: node bench/signature-step.js <dist> <baseline dist> [rounds]');
const ROUNDS = Number(roundsArg ?? 15);
const load = (dist) => require(path.resolve(dist, 'verify/signature.js')).createSignatureCheck();
const { signToken } = require(path.resolve(distArg, 'testing.js'));

const secret = crypto.randomBytes(48);
const pairOf = ({ privateKey, publicKey }) => [privateKey, publicKey];
const rsa = pairOf(crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }));
/** The signing and the verifying key of each algorithm. */
const pairs = {
  HS256: [secret, crypto.createSecretKey(secret)],
  RS256: rsa,
  PS256: rsa,
  ES256: pairOf(crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' })),
  EdDSA: pairOf(crypto.generateKeyPairSync('ed25519')),
};
/** Calls per window: about 0.1 s each on a 2-core machine. */
const CALLS = { HS256: 40000, RS256: 4000, PS256: 4000, ES256: 1500, EdDSA: 1000 };
const payload = { iss: 'https://issuer.bench', aud: 'api.bench', iat: 1, exp: 2, sub: 'x'.repeat(400) };

function cpuPerCall(check, tokens, alg, key, calls) {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const token = tokens[i & 63];
    if (!check(token, token.lastIndexOf('.'), alg, key)) throw new Error(`${alg}: a good token was refused`);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const checks = { now: load(distArg), base: load(baseArg) };
for (const [alg, [signing, verifying]] of Object.entries(pairs)) {
  const tokens = Array.from({ length: 64 }, (_, i) => signToken({ ...payload, jti: String(i) }, signing, alg));
  const cpu = { now: [], base: [], diff: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['base', 'now'] : ['now', 'base'];
    const got = {};
    for (const which of order) got[which] = cpuPerCall(checks[which], tokens, alg, verifying, CALLS[alg]);
    cpu.now.push(got.now);
    cpu.base.push(got.base);
    cpu.diff.push(got.now - got.base);
  }
  const f = (v) => v.toFixed(2);
  console.log(`${alg}: ${f(median(cpu.base))} → ${f(median(cpu.now))} CPU µs (${f(median(cpu.diff))} per round)`);
}
