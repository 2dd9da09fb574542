// The commands a stalled Redis can hold, bounded (the store's `maxPending`): past the bound a command fails at once,
// unsent, and a request that needed it answers 503. Against a real redis-server, paused with SIGSTOP.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth } from '../../lib';
import { createRedisStore, type RedisStore, type RedisStoreOptions } from '../../lib/redis';
import { createTestIssuer } from '../../lib/testing';
import { appRedisClient, appRedisStore, useRedisServer } from '../fixtures/app-redis-client';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { within } from '../fixtures/fleet';
import { listen } from '../fixtures/listen';
import { rejection } from '../fixtures/rejection';

jest.setTimeout(30_000);

const redis = useRedisServer();

const store = (kind: 'redis' | 'ioredis', prefix: string, opts: RedisStoreOptions = {}): RedisStore =>
  appRedisStore(kind, redis.server.url, redis.cleanups, { prefix, timeout: '300ms', ...opts });
const soon = () => Math.floor(Date.now() / 1000) + 600;
const nowS = () => Date.now() / 1000;

/** Wait until the store answers a command (a claim of a new id), `what` naming the wait if it times out. */
const accepting = (s: RedisStore, what: string) =>
  within(
    5000,
    async () => {
      try {
        // getVerdict throws while the app's client is not ready (when setVerdict would skip its write).
        await s.getVerdict(randomUUID());
        return await s.claimOnce(randomUUID(), nowS() + 60);
      } catch {
        return false;
      }
    },
    what,
  );

describe.each(['redis', 'ioredis'] as const)('commands waiting on a stalled Redis (%s)', (kind) => {
  it('lets at most maxPending commands wait on the client; the rest fail at once without being sent', async () => {
    const prefix = `m${randomUUID().slice(0, 8)}:`;
    const s = store(kind, prefix, { maxPending: 20 });
    await accepting(s, 'the client to be ready');
    await redis.admin.flushall();
    redis.server.pause();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, () => s.claimOnce(randomUUID(), nowS() + 60)),
    );
    const names = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).name : 'fulfilled'));
    expect(names.filter((n) => n === 'StoreTimeoutError')).toHaveLength(20);
    expect(names.filter((n) => n === 'StoreBusyError')).toHaveLength(80);
    // The 20 timed out, yet still wait in the client's queue: they still count, so later commands fail at once too.
    const later = await Promise.allSettled(Array.from({ length: 50 }, () => s.claimOnce(randomUUID(), nowS() + 60)));
    expect(later.map((o) => (o.status === 'rejected' ? (o.reason as Error).name : 'fulfilled'))).toEqual(
      Array(50).fill('StoreBusyError'),
    );
    // While the 20 still wait in the client, revoke() is refused before sending: nothing was revoked.
    expect(await rejection(s.revoke(randomUUID(), soon()))).toMatchObject({
      code: 'verification_unavailable',
      reason: 'store-busy',
    });
    redis.server.resume();
    await accepting(s, 'the store to accept commands again');
    // Only the 20 that were let through reached Redis (and the probes after resume): the other 80 never queued.
    const held = await redis.admin.zcard(`${prefix}dpop:{${prefix}dpop}:key:-`);
    expect(held).toBeGreaterThanOrEqual(21);
    expect(held).toBeLessThan(30);
  });

  it('refuses a maxPending that is not a whole number of at least 1', () => {
    for (const maxPending of [0, -1, 1.5, Number.NaN, '10' as never]) {
      expect(() => createRedisStore(appRedisClient(kind, redis.server.url, redis.cleanups), { maxPending })).toThrow(
        /maxPending/,
      );
    }
  });
});

describe.each(['redis', 'ioredis'] as const)('bytes waiting on a stalled Redis (%s)', (kind) => {
  it('hands the client at most maxPendingBytes of commands (4 MiB by default): 256 KiB verdicts beyond it fail at once, unsent', async () => {
    const prefix = `b${randomUUID().slice(0, 8)}:`;
    const s = store(kind, prefix);
    await accepting(s, 'the client to be ready');
    const verdict = JSON.stringify({ ok: true, payload: { pad: 'x'.repeat(256 * 1024 - 40) } });
    redis.server.pause();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) => s.setVerdict(`k${i}`, verdict, 60)),
    );
    const names = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).name : 'fulfilled'));
    const handed = names.filter((n) => n === 'StoreTimeoutError').length;
    // Each command holds its verdict and a few bytes more: 15 of them fit in 4 MiB, not 200 (50 MiB).
    const tally: Record<string, number> = {};
    for (const name of names) tally[name] = (tally[name] ?? 0) + 1;
    expect(tally).toEqual({ StoreTimeoutError: 15, StoreBusyError: 185 });
    redis.server.resume();
    await accepting(s, 'the store to accept commands again');
    // What reached Redis is what the client held: the verdicts it was handed, no more.
    const stored = await redis.admin.keys(`${prefix}verdict:*`);
    expect(stored).toHaveLength(handed);
    expect(handed * Buffer.byteLength(verdict)).toBeLessThanOrEqual(4 * 1024 * 1024);
  });

  it('refuses a maxPendingBytes that is not a whole number of at least 1', () => {
    for (const maxPendingBytes of [0, 1.5, '10' as never]) {
      expect(() =>
        createRedisStore(appRedisClient(kind, redis.server.url, redis.cleanups), { maxPendingBytes }),
      ).toThrow(/maxPendingBytes/);
    }
  });

  it("reloads the revocation list after a reconnect while the app's commands wait behind paused writes", async () => {
    const prefix = `l${randomUUID().slice(0, 8)}:`;
    const s = store(kind, prefix);
    const reports: string[] = [];
    const list = s.follow((err) => void reports.push(String(err.reason)));
    await within(5000, () => list.stats().loaded, 'the list loaded');
    await accepting(s, 'the client to be ready');
    const ids = `${prefix}dpop:{${prefix}dpop}:key:-`;
    const held = await redis.admin.zcard(ids);
    // Writes stop (as during a manual failover); a flood of DPoP claims waits on the app's client behind them.
    await redis.admin.call('CLIENT', 'PAUSE', '20000', 'WRITE');
    redis.cleanups.push(() => redis.admin.call('CLIENT', 'UNPAUSE'));
    const flood = Array.from({ length: 200 }, () => s.claimOnce(randomUUID(), nowS() + 60).catch(() => false));
    await redis.admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await within(5000, () => reports.includes('store-unavailable'), 'the pub/sub connection lost');
    await within(10_000, () => list.stats().available, 'the list reloaded');
    // Reloaded while every claim of the flood still waited: none of them has reached Redis yet.
    expect(await redis.admin.zcard(ids)).toBe(held);
    await redis.admin.call('CLIENT', 'UNPAUSE');
    await Promise.all(flood);
  });
});

describe.each(EXPRESS_VERSIONS)('DPoP requests while Redis is paused, through %s', (_name, express) => {
  it('past maxPending commands waiting, answers 503 without sending anything to the client; 200 again after resume', async () => {
    const issuer = await createTestIssuer({ dpop: true, alg: 'ES256' });
    redis.cleanups.push(() => issuer.close());
    const holder = issuer.holder!;
    const s = store('ioredis', `d${randomUUID().slice(0, 8)}:`, { maxPending: 5 });
    const causes: string[] = [];
    const auth = createTokenAuth({
      ...issuer.options,
      dpop: { replay: s },
      onError: (err) => void causes.push((err.cause as Error | undefined)?.name ?? String(err.reason)),
    });
    const app = express();
    app.get('/me', auth.requireVerifiedUser(), (_req, res) => {
      res.json({ ok: true });
    });
    const listening = await listen(app);
    redis.cleanups.push(() => listening.close());
    const token = issuer.sign();
    const call = () =>
      request(listening.origin)
        .get('/me')
        .set({
          Authorization: `DPoP ${token}`,
          DPoP: holder.proof({ method: 'GET', url: `${listening.origin}/me`, token }),
        });
    await within(5000, async () => (await call()).status === 200, 'the store to answer');

    redis.server.pause();
    const first = await Promise.all(Array.from({ length: 5 }, call)); // these wait the store's timeout
    const later = await Promise.all(Array.from({ length: 20 }, call)); // the 5 still wait in the client: refused at once
    for (const res of [...first, ...later]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    }
    expect(causes.filter((c) => c === 'StoreTimeoutError')).toHaveLength(5);
    expect(causes.filter((c) => c === 'StoreBusyError')).toHaveLength(20);
    redis.server.resume();
    await within(5000, async () => (await call()).status === 200, 'DPoP requests to pass again');
  });
});
