import { createSecretKey, type KeyObject } from 'node:crypto';
import { createTokenAuth, TokenAuthError, type TokenAuthOptions } from '../../lib';
import type { JwsHeader } from '../../lib/jose/jws';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';
import { ResultCache } from '../../lib/verify/cache';

/** A TokenAuth whose clock the test moves. */
function withClock(options: Partial<TokenAuthOptions> = {}) {
  const clock = { now: NOW };
  const auth = createTokenAuth({
    key: { secret: SECRET },
    issuer: ISSUER,
    audience: AUDIENCE,
    clock: () => clock.now,
    ...options,
  });
  return { auth, clock };
}

/** The error code a verification ends with, or 'ok'. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch {
    return (await rejection(promise)).code;
  }
  return 'ok';
}

/** Verify a valid token twice: a success enters the cache on its second sighting. */
async function admit(auth: ReturnType<typeof createTokenAuth>, token: string) {
  await auth.verify(token);
  return auth.verify(token);
}

describe('result cache', () => {
  it('stores a success on its second sighting and serves the third from the cache', async () => {
    const { auth } = withClock();
    const token = sign(shapeB(NOW));
    await auth.verify(token);
    expect(auth.stats()).toMatchObject({ hits: 0, misses: 1, size: 0 });
    const second = await auth.verify(token);
    expect(auth.stats()).toMatchObject({ hits: 0, misses: 2, size: 1 });
    const third = await auth.verify(token);
    expect(third).toBe(second);
    expect(auth.stats()).toMatchObject({ hits: 1, misses: 2, size: 1 });
  });

  it('does not store a success seen once: every token new (cold traffic) leaves the cache empty', async () => {
    const { auth } = withClock();
    for (let i = 0; i < 20; i++) await auth.verify(sign(shapeB(NOW)));
    expect(auth.stats()).toMatchObject({ hits: 0, misses: 20, size: 0, evictions: 0 });
  });

  it('stores a token fault on its first sighting', async () => {
    const { auth } = withClock();
    const forged = sign(shapeB(NOW), 'another-secret-that-is-long-enough-for-hs256');
    expect(await codeOf(auth.verify(forged))).toBe('invalid_token');
    expect(auth.stats()).toMatchObject({ size: 1 });
    expect(await codeOf(auth.verify(forged))).toBe('invalid_token');
    expect(auth.stats()).toMatchObject({ hits: 1, misses: 1, size: 1 });
  });

  it('never lets an entry outlive its token: it dies at exp and the token is then judged again', async () => {
    const { auth, clock } = withClock();
    const token = sign(shapeB(NOW, { exp: NOW + 30 }));
    await admit(auth, token);
    clock.now = NOW + 29;
    await auth.verify(token);
    expect(auth.stats()).toMatchObject({ hits: 1, misses: 2 });
    clock.now = NOW + 31; // past exp, inside the 5 s tolerance: a fresh verification, still valid
    await expect(auth.verify(token)).resolves.toBeDefined();
    expect(auth.stats()).toMatchObject({ hits: 1, misses: 3 });
    clock.now = NOW + 36;
    expect(await codeOf(auth.verify(token))).toBe('token_expired');
  });

  it('keeps a verified entry no longer than cache.ttl', async () => {
    const { auth, clock } = withClock({ cache: { ttl: '1m' } });
    const token = sign(shapeB(NOW, { exp: NOW + 3600 }));
    await admit(auth, token);
    clock.now = NOW + 59;
    await auth.verify(token);
    clock.now = NOW + 61;
    await auth.verify(token);
    expect(auth.stats()).toMatchObject({ hits: 1, misses: 3 });
  });

  it('re-checks maxTokenAge on a hit', async () => {
    const { auth, clock } = withClock({ maxTokenAge: 60 });
    const token = sign(shapeB(NOW - 50, { exp: NOW + 600 }));
    await admit(auth, token);
    clock.now = NOW + 20;
    expect(await codeOf(auth.verify(token))).toBe('token_expired');
    expect(auth.stats().hits).toBe(1);
  });

  it('remembers a token fault for errorTtl only', async () => {
    let resolverCalls = 0;
    const key = createSecretKey(Buffer.from(SECRET));
    const { auth, clock } = withClock({
      key: () => {
        resolverCalls++;
        return key;
      },
      algorithms: ['HS256'],
      cache: { errorTtl: '5s' },
    });
    const forged = sign(shapeB(NOW), 'another-secret-that-is-long-enough-for-hs256');
    expect(await codeOf(auth.verify(forged))).toBe('invalid_token');
    clock.now = NOW + 4;
    expect(await codeOf(auth.verify(forged))).toBe('invalid_token');
    expect(resolverCalls).toBe(1);
    clock.now = NOW + 6;
    expect(await codeOf(auth.verify(forged))).toBe('invalid_token');
    expect(resolverCalls).toBe(2);
  });

  it('does not keep a not-yet-valid verdict past the moment the token becomes valid', async () => {
    const { auth, clock } = withClock({ clockTolerance: 5, cache: { errorTtl: '1m' } });
    const token = sign(shapeB(NOW, { nbf: NOW + 20 }));
    expect(await codeOf(auth.verify(token))).toBe('invalid_token');
    clock.now = NOW + 3;
    expect(await codeOf(auth.verify(token))).toBe('invalid_token');
    expect(auth.stats().hits).toBe(1);
    clock.now = NOW + 15; // nbf - tolerance: valid now, although the 1-minute errorTtl has not run out
    expect(await codeOf(auth.verify(token))).toBe('ok');
  });

  it('never caches key-source failures: each request asks again', async () => {
    let calls = 0;
    const { auth } = withClock({
      key: () => {
        calls++;
        throw new TokenAuthError('verification_unavailable');
      },
      algorithms: ['HS256'],
    });
    const token = sign(shapeB(NOW));
    expect(await codeOf(auth.verify(token))).toBe('verification_unavailable');
    expect(await codeOf(auth.verify(token))).toBe('verification_unavailable');
    expect(calls).toBe(2);
    expect(auth.stats().size).toBe(0);
  });

  it('never caches an internal failure of a resolver', async () => {
    let calls = 0;
    const { auth } = withClock({
      key: () => {
        calls++;
        throw new Error('boom');
      },
      algorithms: ['HS256'],
    });
    const token = sign(shapeB(NOW));
    expect(await codeOf(auth.verify(token))).toBe('internal');
    expect(await codeOf(auth.verify(token))).toBe('internal');
    expect(calls).toBe(2);
  });

  it('shares one verification among concurrent misses on the same token, and stores a verdict that waited at once', async () => {
    let calls = 0;
    let release: (key: KeyObject) => void = () => undefined;
    const key = createSecretKey(Buffer.from(SECRET));
    const { auth } = withClock({
      key: (_header: JwsHeader) => {
        calls++;
        return new Promise<KeyObject>((resolve) => {
          release = resolve;
        });
      },
      algorithms: ['HS256'],
    });
    const claims = shapeB(NOW);
    const token = sign(claims);
    const burst = Array.from({ length: 20 }, () => auth.verify(token));
    await new Promise((resolve) => setImmediate(resolve));
    expect(auth.stats().inflight).toBe(1);
    release(key);
    const results = await Promise.all(burst);
    expect(calls).toBe(1);
    for (const result of results) expect(result).toEqual(claims);
    expect(auth.stats().inflight).toBe(0);
    await auth.verify(token);
    expect(calls).toBe(1);
  });

  it('keys entries by the whole token: a forged signature on the same claims is not served from the cache', async () => {
    const { auth } = withClock();
    const token = sign(shapeB(NOW));
    await auth.verify(token);
    const [h, p] = token.split('.');
    const forged = `${h}.${p}.${sign(shapeB(NOW), 'another-secret-that-is-long-enough-for-hs256').split('.')[2]}`;
    expect(await codeOf(auth.verify(forged))).toBe('invalid_token');
  });

  it('is bounded by entries, counting evictions', async () => {
    const { auth } = withClock({ cache: { max: 3 } });
    for (let i = 0; i < 5; i++) await admit(auth, sign(shapeB(NOW)));
    expect(auth.stats()).toMatchObject({ size: 3, evictions: 2 });
  });

  it('is bounded by bytes', async () => {
    const { auth } = withClock({ cache: { maxBytes: 4096 } });
    for (let i = 0; i < 10; i++) await admit(auth, sign(shapeB(NOW)));
    const { size, evictions } = auth.stats();
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThan(10);
    expect(evictions).toBe(10 - size);
  });

  describe('faults have their own space: a success is only ever pushed out by another success', () => {
    const OTHER = 'another-secret-that-is-long-enough-for-hs256';

    it('keeps every cached user through a flood of distinct garbage tokens', async () => {
      const { auth } = withClock({ cache: { max: 10 } });
      const users = Array.from({ length: 5 }, () => sign(shapeB(NOW)));
      for (const token of users) await admit(auth, token);
      for (let i = 0; i < 50; i++) expect(await codeOf(auth.verify(`garbage${i}.not.a-token`))).toBe('invalid_token');
      const before = auth.stats().hits;
      for (const token of users) await auth.verify(token);
      expect(auth.stats().hits - before).toBe(users.length);
      // Faults hold a tenth of cache.max (here 1) beside the successes' 10: the whole cache stays bounded.
      expect(auth.stats().size).toBe(users.length + 1);
    });

    it('keeps every cached user through forged tokens that fill the byte bound', async () => {
      const { auth } = withClock({ cache: { maxBytes: 40_000 } });
      const users = Array.from({ length: 5 }, () => sign(shapeB(NOW)));
      for (const token of users) await admit(auth, token);
      const pad = 'x'.repeat(3000);
      for (let i = 0; i < 30; i++)
        expect(await codeOf(auth.verify(sign(shapeB(NOW, { pad }), OTHER)))).toBe('invalid_token');
      const before = auth.stats().hits;
      for (const token of users) await auth.verify(token);
      expect(auth.stats().hits - before).toBe(users.length);
    });

    it('still remembers faults, least recently used out first, within their share', async () => {
      const { auth } = withClock({ cache: { max: 20 } });
      const first = sign(shapeB(NOW), OTHER);
      const second = sign(shapeB(NOW), OTHER);
      await codeOf(auth.verify(first));
      await codeOf(auth.verify(second));
      expect(auth.stats()).toMatchObject({ size: 2 });
      await codeOf(auth.verify(second));
      expect(auth.stats()).toMatchObject({ hits: 1, size: 2 });
      await codeOf(auth.verify(sign(shapeB(NOW), OTHER))); // a third fault: the share of 2 pushes `first` out
      expect(auth.stats()).toMatchObject({ size: 2, evictions: 1 });
      await codeOf(auth.verify(second));
      expect(auth.stats()).toMatchObject({ hits: 2 });
    });
  });

  it('can be turned off', async () => {
    const { auth } = withClock({ cache: false });
    const token = sign(shapeB(NOW));
    await auth.verify(token);
    await auth.verify(token);
    expect(auth.stats()).toMatchObject({ hits: 0, size: 0 });
  });

  it('is emptied by close()', async () => {
    const { auth } = withClock();
    await admit(auth, sign(shapeB(NOW)));
    auth.close();
    expect(auth.stats().size).toBe(0);
  });
});

describe('the cache keyed by SHA-256', () => {
  it('holds one entry per distinct token and answers each with its own claims', async () => {
    const { auth } = withClock();
    const claims = [shapeB(NOW), shapeB(NOW), shapeB(NOW)];
    const tokens = claims.map((c) => sign(c));
    // Round 1 sights each token, round 2 stores it (second sighting), round 3 is answered from the cache.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < tokens.length; i++) await expect(auth.verify(tokens[i])).resolves.toEqual(claims[i]);
    }
    expect(auth.stats()).toMatchObject({ size: 3, hits: 3, misses: 6 });
  });
});

/** Whether `text` is found in a string reachable from `root` (own fields, arrays, Maps, Sets; a bounded walk). */
function holdsText(root: unknown, text: string): boolean {
  const seen = new Set<unknown>();
  const stack: unknown[] = [root];
  while (stack.length > 0 && seen.size < 100_000) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (value.includes(text)) return true;
      continue;
    }
    if (typeof value !== 'object' || value === null || seen.has(value) || ArrayBuffer.isView(value)) continue;
    seen.add(value);
    if (value instanceof Map) stack.push(...value.keys(), ...value.values());
    else if (value instanceof Set) stack.push(...value);
    else stack.push(...Object.values(value as object));
  }
  return false;
}

describe('the sighting table keeps no token text', () => {
  it('holds no token after a first sighting that ended before its verdict, nor after one that reached it', () => {
    const cache = new ResultCache({ max: 100, maxBytes: 1_000_000, ttl: 60, errorTtl: 10 }, 0);
    const refused = sign(shapeB(NOW));
    // A first sighting whose verification then throws (a syntax fault, a precheck): `sighted` is never called.
    expect(cache.lookupKey(refused)).toBeUndefined();
    expect(holdsText(cache, refused.slice(-20))).toBe(false);
    const good = sign(shapeB(NOW));
    expect(cache.lookupKey(good)).toBeUndefined();
    cache.sighted(good, {
      ok: false,
      error: new TokenAuthError('invalid_token', { reason: 'signature' }),
      times: undefined,
    });
    expect(holdsText(cache, good.slice(-20))).toBe(false);
    expect(cache.lookupKey(good)).toBeDefined(); // its second sighting: the SHA-256 key, never the text
    expect(holdsText(cache, good.slice(-20))).toBe(false);
  });
});
