'use strict';
/**
 * What the exchanged-token cache holds at its byte bound (docs/exchange.md, `tokenExchange.cache.maxBytes`): 100 000
 * distinct exchanges of one token size go into a cache with the default 2 MiB and no count bound in the way; the
 * memory its entries hold (heap and buffers, after full GCs, against the same cache emptied) is printed per size.
 *
 *   node --expose-gc bench/exchange-cache.js
 */
require('../scripts/ts-register');
const { ExchangeCache } = require('../lib/remote/exchange-cache');

const MAX_BYTES = 2 * 1024 * 1024;
const EXCHANGES = 100_000;
const MiB = (bytes) => (bytes / 2 ** 20).toFixed(2);
function used() {
  for (let i = 0; i < 4; i++) global.gc();
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.arrayBuffers;
}

if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
console.log(`${EXCHANGES} distinct exchanges into a cache of maxBytes ${MiB(MAX_BYTES)} MiB:`);
for (const size of [100, 1000, 8000, 60_000]) {
  const cache = new ExchangeCache({ max: EXCHANGES, maxBytes: MAX_BYTES });
  for (let i = 0; i < EXCHANGES; i++) {
    const token = {
      accessToken: 'a'.repeat(size),
      tokenType: 'Bearer',
      expiresIn: 600,
      issuedTokenType: 'urn:ietf:params:oauth:token-type:access_token',
      scope: ['builds:read'],
    };
    cache.set(cache.keysOf(`subject-${i}`, '[["api"],[],[],"urn:x"]'), { token, expiresAt: 2e9 }, 2e9);
  }
  const full = used();
  const held = cache.size;
  cache.clear();
  console.log(`  issued tokens of ${size} B: ${held} entries held, ${MiB(full - used())} MiB`);
}
