'use strict';
// Keys and the token pool shared by every benchmark: generated once, saved under bench/.tmp (git-ignored), and
// reused while the tokens have more than a day to live, so every run and every scenario sees the same tokens.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const TMP = path.join(__dirname, '.tmp');
const FILE = path.join(TMP, 'fixtures.json');
/**
 * How each benchmarked algorithm signs: HS256 with a shared secret, the others with a key pair of this type.
 * Adding a row adds the algorithm to every benchmark; a peer that cannot verify it is marked `unsupported` in
 * bench/cpu.js and bench/scenarios.js.
 */
const SIGNING = {
  HS256: { digest: 'sha256' },
  RS256: { pair: ['rsa', { modulusLength: 2048 }], digest: 'sha256' },
  ES256: { pair: ['ec', { namedCurve: 'prime256v1' }], digest: 'sha256', dsaEncoding: 'ieee-p1363' },
  EdDSA: { pair: ['ed25519', {}], digest: null },
};
const ALGS = Object.keys(SIGNING);
const POOL_SIZE = 20_000;
const LIFETIME = 3 * 24 * 3600;
const MIN_REMAINING = 24 * 3600;
const ISSUER = 'https://issuer.bench';
const AUDIENCE = 'api.bench';
/** Bumped when the token format changes, so saved fixtures are regenerated. */
const VERSION = 3;

const b64url = (value) => Buffer.from(value).toString('base64url');

/** Sign a compact JWS with node:crypto (quicker than jsonwebtoken.sign for 20 000 tokens; the same bytes). */
function signJws(alg, header, payload, privateKey) {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  const { digest, dsaEncoding } = SIGNING[alg];
  const signature =
    alg === 'HS256'
      ? crypto.createHmac('sha256', privateKey).update(input).digest()
      : crypto.sign(digest, Buffer.from(input), dsaEncoding ? { key: privateKey, dsaEncoding } : privateKey);
  return `${input}.${signature.toString('base64url')}`;
}

/**
 * A Shape B payload, the one createTestIssuer mints (claims() of the package's testing entry), with a string
 * `sub` (Shape B allows string or null; express-oauth2-jwt-bearer refuses a null `sub`).
 */
function shapeB(claims, now, lifetime, i) {
  return claims({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + lifetime, sub: `user-${i}` });
}

function generate(dist) {
  const { createTestIssuer } = require(path.join(dist, 'testing.js'));
  const keys = { HS256: { secret: crypto.randomBytes(48).toString('base64url') } };
  for (const alg of ALGS.filter((a) => SIGNING[a].pair)) {
    const pair = crypto.generateKeyPairSync(...SIGNING[alg].pair);
    keys[alg] = {
      publicKey: pair.publicKey.export({ type: 'spki', format: 'pem' }),
      privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    };
  }
  return createTestIssuer({ issuer: ISSUER, audience: AUDIENCE }).then((issuer) => {
    const now = Math.floor(Date.now() / 1000);
    const pools = {};
    for (const alg of ALGS) {
      const signingKey =
        alg === 'HS256'
          ? crypto.createSecretKey(Buffer.from(keys.HS256.secret))
          : crypto.createPrivateKey(keys[alg].privateKey);
      const header = { alg, typ: 'JWT' };
      const pool = new Array(POOL_SIZE);
      for (let i = 0; i < POOL_SIZE; i++)
        pool[i] = signJws(alg, header, shapeB(issuer.claims, now, LIFETIME, i), signingKey);
      pools[alg] = pool;
    }
    return issuer.close().then(() => ({
      version: VERSION,
      created: now,
      expires: now + LIFETIME,
      issuer: ISSUER,
      audience: AUDIENCE,
      keys,
      pools,
    }));
  });
}

/**
 * The fixtures: keys per algorithm and POOL_SIZE valid, distinct Shape B tokens per algorithm. Regenerated when
 * missing or when the tokens have less than a day left.
 */
async function loadFixtures(dist, log = () => undefined) {
  try {
    const saved = JSON.parse(fs.readFileSync(FILE, 'utf8'));
    if (
      saved.version === VERSION &&
      saved.expires - Date.now() / 1000 > MIN_REMAINING &&
      ALGS.every((a) => saved.pools[a]?.length === POOL_SIZE)
    )
      return saved;
  } catch {
    // No saved fixtures yet (or unreadable): make them.
  }
  log(`generating keys and ${POOL_SIZE} tokens per algorithm (once; saved to bench/.tmp/fixtures.json)`);
  const fixtures = await generate(dist);
  fs.mkdirSync(TMP, { recursive: true });
  fs.writeFileSync(FILE, JSON.stringify(fixtures));
  return fixtures;
}

/**
 * node:crypto's own check of a token's signature, the key parsed once: what the "limit" rows measure (no verifier
 * can cost less on a new token). Called as `check(token, signedEnd)`, `signedEnd` the index of the second dot, each
 * family in the form measured cheapest in CPU time here (interleaved, medians over 30 rounds, 2026-11-26; see
 * docs/benchmarks.md "The limit, measured again"): HMAC as base64url text compared in constant time (a digest to a
 * Buffer against the decoded signature cost 0.35 µs more), RS and ES streamed through `createVerify` (one
 * `crypto.verify` call cost 1.1–1.3 µs more), EdDSA in one `crypto.verify` (it has no digest to stream).
 */
function rawSignatureCheck(alg, keys) {
  if (alg === 'HS256') {
    const key = crypto.createSecretKey(Buffer.from(keys.HS256.secret));
    return (token, signedEnd) => {
      const mac = Buffer.from(crypto.createHmac('sha256', key).update(token.slice(0, signedEnd)).digest('base64url'));
      const given = Buffer.from(token.slice(signedEnd + 1));
      return mac.length === given.length && crypto.timingSafeEqual(mac, given);
    };
  }
  const key = crypto.createPublicKey(keys[alg].publicKey);
  const { digest, dsaEncoding } = SIGNING[alg];
  const verifyKey = dsaEncoding ? { key, dsaEncoding } : key;
  if (digest === null) {
    return (token, signedEnd) =>
      crypto.verify(
        null,
        Buffer.from(token.slice(0, signedEnd)),
        verifyKey,
        Buffer.from(token.slice(signedEnd + 1), 'base64url'),
      );
  }
  return (token, signedEnd) =>
    crypto
      .createVerify(digest)
      .update(token.slice(0, signedEnd))
      .verify(verifyKey, token.slice(signedEnd + 1), 'base64url');
}

module.exports = { loadFixtures, signJws, rawSignatureCheck, ALGS, SIGNING, POOL_SIZE, ISSUER, AUDIENCE, TMP, FILE };
