'use strict';
// Memory: N distinct valid tokens through one verifier (default cache bounds), each verified twice so that the
// admission rule stores every one (the worst case), resident memory after every tenth.
// Tokens are HS256, minted with node:crypto directly (a few µs each) from one Shape B template with a fresh jti.
// Run by bench/run.js as a child: node --expose-gc bench/memory.js <dist> <tokens>.
const crypto = require('node:crypto');

const [dist, tokensArg] = process.argv.slice(2);
const TOKENS = Number(tokensArg);
const STEP = TOKENS / 10;

async function main() {
  const { createTokenAuth } = require(`${dist}/index.js`);
  const { createTestIssuer } = require(`${dist}/testing.js`);
  const issuer = await createTestIssuer({ lifetime: 3600 });
  const secret = crypto.randomBytes(48);
  const key = crypto.createSecretKey(secret);
  const auth = createTokenAuth({ ...issuer.options, key: { secret } });

  // One Shape B payload; each token differs in its jti (the counter), so each is a cache miss.
  const [before, after] = JSON.stringify(issuer.claims({ jti: '@@' })).split('"@@"');
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const mint = (i) => {
    const input = `${header}.${Buffer.from(`${before}"jti-${i}"${after}`).toString('base64url')}`;
    return `${input}.${crypto.createHmac('sha256', key).update(input).digest('base64url')}`;
  };

  const sample = (tokens) => {
    global.gc();
    const mem = process.memoryUsage();
    const stats = auth.stats();
    const row = { tokens, rss: mem.rss, heapUsed: mem.heapUsed, size: stats.size, evictions: stats.evictions };
    process.stderr.write(
      `  ${tokens} tokens: rss ${(mem.rss / 1048576).toFixed(1)} MiB, heap ${(mem.heapUsed / 1048576).toFixed(1)} MiB, cache ${stats.size}\n`,
    );
    return row;
  };
  const samples = [sample(0)];
  for (let i = 1; i <= TOKENS; i++) {
    // Twice: a success enters the cache on its second sighting, so every token is admitted (the worst case).
    const token = mint(i);
    await auth.verify(token);
    await auth.verify(token);
    if (i % STEP === 0) samples.push(sample(i));
  }
  const { max, maxBytes } = { max: 10_000, maxBytes: 16 * 1024 * 1024 };
  auth.close();
  await issuer.close();
  process.send({ tokens: TOKENS, cacheMax: max, cacheMaxBytes: maxBytes, samples });
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
