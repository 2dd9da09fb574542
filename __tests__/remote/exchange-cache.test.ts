/** The exchanged-token cache (docs/exchange.md): bounds, lifetimes, and what it never holds in clear. */
import { inspect } from 'node:util';
import { cachedUntil, EXPIRY_MARGIN, ExchangeCache, type HeldToken } from '../../lib/remote/exchange-cache';

const held = (accessToken: string, expiresIn: number | undefined, now = 1000): HeldToken => ({
  token: { accessToken, tokenType: 'Bearer', expiresIn, issuedTokenType: undefined, scope: undefined },
  expiresAt: expiresIn === undefined ? undefined : now + expiresIn,
});

describe('cachedUntil', () => {
  it('keeps a token until its expiry less the margin, or half its life when shorter', () => {
    expect(cachedUntil(held('t', 600), 1000, undefined)).toBe(1600 - EXPIRY_MARGIN);
    expect(cachedUntil(held('t', 20), 1000, undefined)).toBe(1010);
  });

  it('never past the subject token’s exp', () => {
    expect(cachedUntil(held('t', 600), 1000, 1100)).toBe(1100);
  });

  it('keeps nothing without a lifetime, or once it is over', () => {
    expect(cachedUntil(held('t', undefined), 1000, undefined)).toBeUndefined();
    expect(cachedUntil(held('t', 600), 1000, 999)).toBeUndefined();
  });
});

describe('ExchangeCache', () => {
  const subject = 'eyJ.subject-token-value.sig';
  const target = '[["api"],[],[],"urn:ietf:params:oauth:token-type:access_token"]';

  it('holds neither token in clear: its keys are HMACs, its entries sealed', () => {
    const cache = new ExchangeCache({ max: 10, maxBytes: 100_000 });
    const keys = cache.keysOf(subject, target);
    cache.set(keys, held('downstream-issued-token-value', 600), 1500);
    // Everything the LRU holds, keys and entries, each byte array read every way a dump could show it.
    const lru = (cache as unknown as { lru: Map<string, unknown> }).lru;
    const texts = [...lru.keys()];
    for (const entry of lru.values()) {
      texts.push(inspect(entry, { depth: 10, showHidden: true, maxArrayLength: Infinity, maxStringLength: Infinity }));
      for (const value of Object.values(entry as object))
        if (Buffer.isBuffer(value))
          texts.push(...(['utf8', 'latin1', 'base64', 'hex'] as const).map((e) => value.toString(e)));
    }
    expect(texts.length).toBeGreaterThan(2);
    for (const text of texts) {
      expect(text).not.toContain('downstream-issued-token-value');
      expect(text).not.toContain('subject-token-value');
    }
    expect(cache.get(keys, 1200)?.token.accessToken).toBe('downstream-issued-token-value');
  });

  it('opens an entry only with the subject token that made it, and only until its end', () => {
    const cache = new ExchangeCache({ max: 10, maxBytes: 100_000 });
    const keys = cache.keysOf(subject, target);
    cache.set(keys, held('issued', 600), 1500);
    expect(cache.get(cache.keysOf(`${subject}x`, target), 1200)).toBeUndefined();
    expect(cache.get({ lookup: keys.lookup, seal: Buffer.alloc(32) }, 1200)).toBeUndefined();
    expect(cache.get(keys, 1500)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('is bounded in count and in bytes', () => {
    const counted = new ExchangeCache({ max: 3, maxBytes: 1_000_000 });
    const sized = new ExchangeCache({ max: 1000, maxBytes: 4_000 });
    for (let i = 0; i < 50; i++) {
      counted.set(counted.keysOf(`${subject}${i}`, target), held('t'.repeat(100), 600), 1500);
      sized.set(sized.keysOf(`${subject}${i}`, target), held('t'.repeat(1000), 600), 1500);
    }
    expect(counted.size).toBe(3);
    expect(sized.size).toBeLessThanOrEqual(3);
    expect(sized.size).toBeGreaterThan(0);
  });

  it('shares one run among concurrent callers of one key, and forgets it once settled', async () => {
    const cache = new ExchangeCache(false);
    const keys = cache.keysOf(subject, target);
    let runs = 0;
    const run = () => {
      runs++;
      return Promise.resolve(held('t', 60));
    };
    await Promise.all([cache.share(keys, run), cache.share(keys, run), cache.share(keys, run)]);
    await cache.share(keys, run);
    expect(runs).toBe(2);
  });
});
