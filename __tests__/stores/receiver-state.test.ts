import { randomUUID } from 'node:crypto';
import type { RedisStore } from '../../lib/redis';
import { TokenAuthError } from '../../lib';
import { createMemoryReceiverState, type ReceiverState } from '../../lib/events/state';
import { appRedisStore, useRedisServer } from '../fixtures/app-redis-client';

const redis = useRedisServer();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const states: Array<[string, () => { a: ReceiverState; b: ReceiverState }]> = [
  [
    'memory (one process)',
    () => {
      const state = createMemoryReceiverState();
      return { a: state, b: state };
    },
  ],
  ...(['redis', 'ioredis'] as const).map(
    (kind) =>
      [
        `Redis on a ${kind} client, shared by two stores`,
        () => {
          const prefix = `r${randomUUID().slice(0, 8)}:`;
          const store = (k: 'redis' | 'ioredis'): RedisStore =>
            appRedisStore(k, redis.server.url, redis.cleanups, { prefix, timeout: '500ms' });
          return { a: store(kind).receiverState(), b: store(kind === 'redis' ? 'ioredis' : 'redis').receiverState() };
        },
      ] as [string, () => { a: ReceiverState; b: ReceiverState }],
  ),
];

describe.each(states)('the receiver state in %s', (_name, make) => {
  it('remembers a name for its ttl, for every instance', async () => {
    const { a, b } = make();
    await a.put('jti:x', '1', 0.3);
    expect(await b.has('jti:x')).toBe(true);
    expect(await b.get('jti:x')).toBe('1');
    await sleep(500);
    expect(await b.has('jti:x')).toBe(false);
  });

  it('gives a lease to one owner at a time, renews it for its owner, and passes it on when the holder stops renewing', async () => {
    const { a, b } = make();
    expect(await a.lease('lease', 'owner-a', 0.4)).toBe(true);
    expect(await b.lease('lease', 'owner-b', 0.4)).toBe(false);
    expect(await a.lease('lease', 'owner-a', 0.4)).toBe(true);
    await sleep(600); // owner-a died: no renewal
    expect(await b.lease('lease', 'owner-b', 0.4)).toBe(true);
    expect(await a.lease('lease', 'owner-a', 0.4)).toBe(false);
    await b.release('lease', 'owner-a'); // not its owner: nothing happens
    expect(await a.lease('lease', 'owner-a', 0.4)).toBe(false);
    await b.release('lease', 'owner-b');
    expect(await a.lease('lease', 'owner-a', 0.4)).toBe(true);
  });
});

describe('the Redis receiver state while Redis is down', () => {
  it('rejects with a 503 store-unavailable TokenAuthError, so that an event is answered 503 or left unacknowledged', async () => {
    const state = appRedisStore('ioredis', redis.server.url, redis.cleanups, { timeout: '200ms' }).receiverState();
    await state.put('jti:y', '1', 60);
    await redis.server.stop();
    try {
      const failure = await state.has('jti:y').catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(TokenAuthError);
      expect(failure).toMatchObject({ code: 'verification_unavailable', reason: 'store-unavailable' });
    } finally {
      await redis.server.start();
    }
  });
});
