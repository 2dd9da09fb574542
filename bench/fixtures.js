'use strict';
// Keys and the token pool shared by every benchmark: generated once, saved under bench/.tmp (git-ignored), and
// reused while the tokens have more than a day to live, so every run and every scenario sees the same tokens.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const TMP = path.join(__dirname, '.tmp');
const FILE = path.join(TMP, 'fixtures.json');
const ALGS = ['HS256', 'RS256', 'ES256'];
const POOL_SIZE = 20_000;
const LIFETIME = 3 * 24 * 3600;
const MIN_REMAINING = 24 * 3600;
const ISSUER = 'https://issuer.bench';
const AUDIENCE = 'api.bench';
/** Bumped when the token format changes, so saved fixtures are regenerated. */
const VERSION = 2;

const b64url = (value) => Buffer.from(value).toString('base64url');

/** Sign a compact JWS with node:crypto (quicker than jsonwebtoken.sign for 20 000 tokens; the same bytes). */
function signJws(alg, header, payload, privateKey) {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  let signature;
  if (alg === 'HS256') signature = crypto.createHmac('sha256', privateKey).update(input).digest();
  else if (alg === 'RS256') signature = crypto.sign('sha256', Buffer.from(input), privateKey);
  else signature = crypto.sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
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
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const secret = crypto.randomBytes(48).toString('base64url');
  const keys = {
    HS256: { secret },
    RS256: {
      publicKey: rsa.publicKey.export({ type: 'spki', format: 'pem' }),
      privateKey: rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    },
    ES256: {
      publicKey: ec.publicKey.export({ type: 'spki', format: 'pem' }),
      privateKey: ec.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    },
  };
  return createTestIssuer({ issuer: ISSUER, audience: AUDIENCE }).then((issuer) => {
    const now = Math.floor(Date.now() / 1000);
    const pools = {};
    for (const alg of ALGS) {
      const signingKey = alg === 'HS256' ? crypto.createSecretKey(Buffer.from(secret)) : crypto.createPrivateKey(keys[alg].privateKey);
      const header = { alg, typ: 'JWT' };
      const pool = new Array(POOL_SIZE);
      for (let i = 0; i < POOL_SIZE; i++) pool[i] = signJws(alg, header, shapeB(issuer.claims, now, LIFETIME, i), signingKey);
      pools[alg] = pool;
    }
    return issuer.close().then(() => ({ version: VERSION, created: now, expires: now + LIFETIME, issuer: ISSUER, audience: AUDIENCE, keys, pools }));
  });
}

/**
 * The fixtures: keys per algorithm and POOL_SIZE valid, distinct Shape B tokens per algorithm. Regenerated when
 * missing or when the tokens have less than a day left.
 */
async function loadFixtures(dist, log = () => undefined) {
  try {
    const saved = JSON.parse(fs.readFileSync(FILE, 'utf8'));
    if (saved.version === VERSION && saved.expires - Date.now() / 1000 > MIN_REMAINING && ALGS.every((a) => saved.pools[a]?.length === POOL_SIZE)) return saved;
  } catch {
    // No saved fixtures yet (or unreadable): make them.
  }
  log(`generating keys and ${POOL_SIZE} tokens per algorithm (once; saved to bench/.tmp/fixtures.json)`);
  const fixtures = await generate(dist);
  fs.mkdirSync(TMP, { recursive: true });
  fs.writeFileSync(FILE, JSON.stringify(fixtures));
  return fixtures;
}

module.exports = { loadFixtures, signJws, ALGS, POOL_SIZE, ISSUER, AUDIENCE, TMP, FILE };
