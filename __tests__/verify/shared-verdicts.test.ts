/**
 * Shared verdicts (`cache.shared`; docs/fleet.md): the option, checked at createTokenAuth; and verdicts kept per
 * source: two TokenAuths on one real Redis store, in front of two real
 * loopback upstreams that disagree about a token, never read each other's verdicts; two in front of one upstream
 * still share theirs. The keys stay a hex hash in braces (the Cluster hash tag).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { createRedisStore, type RedisStore } from '../../lib/redis';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { createIdentityService } from '../fixtures/identity-service';
import { rejection } from '../fixtures/rejection';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server';

jest.setTimeout(30_000);

let redis: RedisServer;
/** `refusing` answers 401 for every token; `accepting` answers 200 for the tokens it issued. */
let refusing: LoopbackServer;
let accepting: LoopbackServer;
const { issued, issue, verify: identityService } = createIdentityService();
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  [redis, refusing, accepting] = await Promise.all([
    startRedisServer(),
    startLoopbackServer((_req, res) => json(res, 401, { status: 'error', message: 'Invalid access token' })),
    startLoopbackServer(identityService),
  ]);
});

afterAll(async () => {
  await Promise.all([refusing?.close(), accepting?.close(), redis?.close()]);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One Redis store (one client, one prefix), connected. */
async function sharedStore(prefix: string): Promise<{ store: RedisStore; keys: () => Promise<string[]> }> {
  const client = createClient({ url: redis.url });
  client.on('error', () => undefined);
  await client.connect();
  const store = createRedisStore(client, { prefix, timeout: '500ms' });
  cleanups.push(
    () => client.destroy(),
    () => store.close(),
  );
  return { store, keys: () => client.keys(`${prefix}*`) };
}

/** A TokenAuth in upstream mode in front of `upstream`, sharing verdicts in `store`. */
function tokenAuth(upstream: string, store: RedisStore): TokenAuth {
  const auth = createTokenAuth({
    key: { upstream, timeout: '2s' },
    issuer: ISSUER,
    audience: AUDIENCE,
    cache: { shared: store },
  });
  cleanups.push(() => auth.close());
  return auth;
}

/** Two TokenAuths on one fresh store: `a` before the refusing upstream, `b` before the accepting one. */
async function pair(): Promise<{
  a: TokenAuth;
  b: TokenAuth;
  store: RedisStore;
  prefix: string;
  keys: () => Promise<string[]>;
}> {
  const prefix = `id${randomUUID().slice(0, 8)}:`;
  const { store, keys } = await sharedStore(prefix);
  refusing.reset();
  accepting.reset();
  return { a: tokenAuth(refusing.origin, store), b: tokenAuth(accepting.origin, store), store, prefix, keys };
}

describe('shared verdicts of two upstreams on one store', () => {
  it("does not let one upstream's refusal make the other refuse a token it accepts", async () => {
    const { a, b } = await pair();
    const token = issue();
    expect((await rejection(a.verify(token))).code).toBe('invalid_token');
    await expect(b.verify(token)).resolves.toMatchObject({ jti: issued.get(token)!.jti });
    expect([refusing.requests, accepting.requests]).toEqual([1, 1]);
  });

  it("does not let one upstream's success stand for the other, which refuses the token", async () => {
    const { a, b } = await pair();
    const token = issue();
    await expect(b.verify(token)).resolves.toMatchObject({ jti: issued.get(token)!.jti });
    expect((await rejection(a.verify(token))).code).toBe('invalid_token');
    expect([refusing.requests, accepting.requests]).toEqual([1, 1]);
  });

  it('still shares verdicts between two of one upstream, each under a hex hash in braces', async () => {
    const { a, b, store, prefix, keys } = await pair();
    const [good, bad] = [issue(), `${randomBytes(24).toString('base64url')}~never-issued`];
    await expect(b.verify(good)).resolves.toMatchObject({ jti: issued.get(good)!.jti });
    expect((await rejection(a.verify(bad))).code).toBe('invalid_token');
    // Others of the same upstreams (one base spelt with a trailing slash) read those verdicts: no call.
    const [a2, b2] = [tokenAuth(refusing.origin, store), tokenAuth(`${accepting.origin}/`, store)];
    await expect(b2.verify(good)).resolves.toMatchObject({ jti: issued.get(good)!.jti });
    const shared = await rejection(a2.verify(bad));
    expect([shared.code, shared.reason]).toEqual(['invalid_token', 'upstream-401-shared']);
    expect([refusing.requests, accepting.requests]).toEqual([1, 1]);
    // The Cluster hash tag a verdict shares with its lock: the key is still a hex hash in braces.
    const stored = await keys();
    expect(stored).toHaveLength(2);
    for (const key of stored) expect(key).toMatch(new RegExp(`^${prefix}verdict:\\{[0-9a-f]{64}\\}$`));
  });
});

describe('revocation and cache.shared options', () => {
  it('throws a TypeError when cache.shared is not a store, or the key source is not upstream', async () => {
    const { store } = await sharedStore(`opt-${randomUUID().slice(0, 8)}:`);
    const base = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE };
    expect(() => createTokenAuth({ ...base, cache: { shared: {} } } as unknown as TokenAuthOptions)).toThrow(
      /option "cache\.shared"/,
    );
    expect(() => createTokenAuth({ ...base, cache: { shared: store } })).toThrow(
      /cache\.shared" applies to key\.upstream and introspection only/,
    );
    const upstream = createTokenAuth({
      key: { upstream: 'http://127.0.0.1:1' },
      issuer: ISSUER,
      audience: AUDIENCE,
      cache: { shared: store },
    });
    upstream.close();
  });
});
