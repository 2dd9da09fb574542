'use strict';
/**
 * Child process of __tests__/security/memory.test.ts (run with --expose-gc): pushes N distinct tokens through
 * verify() of one TokenAuth with a fixed clock, so that no cache entry ever expires (the worst case), and
 * reports as JSON on stdout: the largest cache size seen, and the heap after a full GC at the start, at each
 * tenth of the run and at the end. Tokens are minted with node:crypto HMAC directly, one at a time, so that
 * nothing but the cache can hold them.
 *
 *   node --expose-gc scripts/memory-bound.js --kind valid|invalid --count 200000 [--max 10000] [--max-bytes 16777216]
 */
require('./ts-register');
const { createHmac } = require('node:crypto');
const { createTokenAuth } = require('../lib');

const NOW = 1_800_000_000;
const SECRET = 'memory-bound-secret-that-is-long-enough!';
const ISSUER = 'auth.example.com';
const AUDIENCE = 'api.example.com';

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}

const kind = option('kind', 'valid');
const count = Number(option('count', 200_000));
const max = Number(option('max', 10_000));
const maxBytes = Number(option('max-bytes', 16 * 1024 * 1024));
if (typeof global.gc !== 'function') throw new Error('run with --expose-gc');

const b64 = (text) => Buffer.from(text).toString('base64url');
const HEADER = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function payload(i, overrides) {
  return JSON.stringify({
    iss: ISSUER,
    aud: AUDIENCE,
    iat: NOW,
    exp: NOW + 3600,
    jti: `memory-${kind}-${i}`,
    scopes: ['identify', 'email', 'profile'],
    providers: {
      google: {
        id: String(1e12 + i),
        email: `user${i}@example.com`,
        name: `User ${i}`,
        picture: `https://example.com/${i}.png`,
      },
    },
    metadata: { createdAt: '2027-01-15T08:00:00.000Z', authorizer: 'memory-bound' },
    sub: null,
    ...overrides,
  });
}

function signed(body, secret = SECRET) {
  const input = `${HEADER}.${b64(body)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** Distinct invalid tokens of every cacheable fault class, in turn. */
function invalid(i) {
  switch (i % 4) {
    case 0:
      return signed(payload(i), 'not-the-secret-but-as-long-as-it!!!!!!!!'); // forged signature
    case 1:
      return signed(payload(i, { exp: NOW - 60 })); // expired
    case 2:
      return signed(payload(i, { aud: 'other.example.com' })); // wrong audience
    default:
      return `${HEADER}.${b64(`{"jti":${i},`)}.${'A'.repeat(43)}`; // payload not JSON
  }
}

function heap() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

async function main() {
  const auth = createTokenAuth({
    key: { secret: SECRET },
    issuer: ISSUER,
    audience: AUDIENCE,
    clock: () => NOW,
    cache: { max, maxBytes },
  });
  const samples = [{ at: 0, heap: heap(), size: 0 }];
  let largest = 0;
  let accepted = 0;
  let refused = 0;
  const step = Math.max(1, Math.floor(count / 10));
  for (let i = 0; i < count; i++) {
    const token = kind === 'valid' ? signed(payload(i)) : invalid(i);
    try {
      // A success is stored on its second sighting (lib/verify/admission.ts): verifying each valid token twice admits
      // every one, the worst case for memory. A fault is stored at once.
      if (kind === 'valid') await auth.verify(token);
      await auth.verify(token);
      accepted++;
    } catch (err) {
      if (err.code !== 'invalid_token' && err.code !== 'token_expired') throw err;
      refused++;
    }
    const size = auth.stats().size;
    if (size > largest) largest = size;
    if ((i + 1) % step === 0) samples.push({ at: i + 1, heap: heap(), size });
  }
  const stats = auth.stats();
  process.stdout.write(
    `${JSON.stringify({ kind, count, max, maxBytes, accepted, refused, largest, stats, samples })}\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
});
