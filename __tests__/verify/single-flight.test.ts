// The fleet's single flight in one process, against a real redis-server: the verdict lock is released only by its
// owner, and one process holds at most maxFlights tokens. Three processes together: fleet/single-flight.test.ts.
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createRedisStore, type RedisClientLike, type RedisStore } from '../../lib/redis';
import { createSingleFlight } from '../../lib/verify/single-flight';
import { useRedisServer } from '../fixtures/app-redis-client';
import { within } from '../fixtures/fleet';

const redis = useRedisServer();

/** A store on a client of `kind` that has connected: the store skips a client that is not ready yet. */
async function store(prefix: string, kind: 'redis' | 'ioredis' = 'ioredis'): Promise<RedisStore> {
  let client: RedisClientLike;
  if (kind === 'ioredis') {
    const io = new Redis(redis.server.url, { maxRetriesPerRequest: 1 });
    io.on('error', () => undefined);
    redis.cleanups.push(() => io.disconnect());
    await io.ping();
    client = io;
  } else {
    const node = createClient({ url: redis.server.url });
    node.on('error', () => undefined);
    redis.cleanups.push(() => node.destroy());
    await node.connect();
    client = node;
  }
  const made = createRedisStore(client, { prefix, timeout: '500ms' });
  redis.cleanups.push(() => made.close());
  return made;
}

describe('the lock and its bounds (one process, real Redis)', () => {
  it.each(['redis', 'ioredis'] as const)('releases a lock only for the owner that holds it (%s)', async (kind) => {
    const s = await store(`lock-${randomUUID().slice(0, 8)}:`, kind);
    const key = randomBytes(32).toString('hex');
    await expect(s.claimVerdict(key, 'first', 0.1)).resolves.toEqual({ state: 'mine' });
    await expect(s.claimVerdict(key, 'second', 5)).resolves.toEqual({ state: 'busy' });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the first holder's lock expired
    await expect(s.claimVerdict(key, 'second', 5)).resolves.toEqual({ state: 'mine' });
    await s.releaseVerdict(key, 'first'); // late: must not free the second holder's lock
    await expect(s.claimVerdict(key, 'third', 5)).resolves.toEqual({ state: 'busy' });
    await s.releaseVerdict(key, 'second', { value: '{"ok":false,"code":"invalid_token"}', ttl: 5 });
    await expect(s.claimVerdict(key, 'third', 5)).resolves.toEqual({
      state: 'verdict',
      value: '{"ok":false,"code":"invalid_token"}',
    });
  });

  it('holds at most maxFlights tokens per process: the rest ask the source directly, waiting for nothing', async () => {
    const prefix = `bound-${randomUUID().slice(0, 8)}:`;
    const other = await store(prefix); // another instance, holding the locks of five new tokens
    const keys = Array.from({ length: 5 }, () => randomBytes(32).toString('hex'));
    for (const key of keys)
      await expect(other.claimVerdict(key, 'other-instance', 5)).resolves.toEqual({ state: 'mine' });

    const flight = createSingleFlight(await store(prefix), { lockTtl: 5, maxFlights: 2 });
    const direct: string[] = [];
    const runs = keys.map((key) =>
      flight.run(key, {
        stored: (text) => text,
        fresh: async () => ({ result: { ok: true, value: 'fresh' } }),
        alone: async () => 'alone',
        overflow: async () => {
          direct.push(key);
          return 'direct';
        },
      }),
    );
    await within(2000, () => flight.stats().waiting === 2, 'two waiters');
    expect(flight.stats()).toMatchObject({ waiting: 2, holding: 0, overflow: 3 });
    expect(direct).toEqual(keys.slice(2)); // over the bound: straight to the source, at once
    // The holder stores its verdicts: the two waiters take them, with no call of their own.
    for (const key of keys.slice(0, 2))
      await other.releaseVerdict(key, 'other-instance', { value: `verdict-${key}`, ttl: 5 });
    await expect(Promise.all(runs)).resolves.toEqual([
      `verdict-${keys[0]}`,
      `verdict-${keys[1]}`,
      'direct',
      'direct',
      'direct',
    ]);
    expect(flight.stats()).toMatchObject({ waiting: 0, holding: 0, shared: 2 });
    flight.close();
  });
});
