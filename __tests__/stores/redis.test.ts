import { randomUUID } from 'node:crypto';
import { createRedisStore, type RedisStore } from '../../lib/redis';
import type { TokenAuthError } from '../../lib';
import { appRedisClient, appRedisStore, useRedisServer } from '../fixtures/app-redis-client';
import { within } from '../fixtures/fleet';
import { optionErrorOf } from '../fixtures/option-error';
import { createMemoryReplayStore } from '../../lib/dpop/replay';
import { boundedCommands, luaScript } from '../../lib/stores/bounded-commands';
import { redisConnection } from '../../lib/stores/redis-client';

const redis = useRedisServer();

const store = (kind: 'redis' | 'ioredis', prefix = `t${randomUUID().slice(0, 8)}:`): RedisStore =>
  appRedisStore(kind, redis.server.url, redis.cleanups, { prefix, timeout: '500ms' });

const soon = () => Math.floor(Date.now() / 1000) + 600;
const nowS = () => Date.now() / 1000;

describe('createRedisStore', () => {
  it('throws a TypeError for anything that is not a node-redis or ioredis client', () => {
    expect(() => createRedisStore({} as never)).toThrow(TypeError);
    expect(() => createRedisStore(null as never)).toThrow(/node-redis or ioredis/);
  });
});

describe.each(['redis', 'ioredis'] as const)('the Redis store on a %s client', (kind) => {
  it('claims a DPoP proof id once: true the first time, false after', async () => {
    const s = store(kind);
    const id = randomUUID();
    const expiresAt = Date.now() / 1000 + 60;
    await expect(s.claimOnce(id, expiresAt)).resolves.toBe(true);
    await expect(s.claimOnce(id, expiresAt)).resolves.toBe(false);
    await expect(s.claimOnce(randomUUID(), expiresAt)).resolves.toBe(true);
  });

  it('lets an id be claimed again once its expiry has passed', async () => {
    const s = store(kind);
    const id = randomUUID();
    await expect(s.claimOnce(id, Date.now() / 1000 + 0.2)).resolves.toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await expect(s.claimOnce(id, Date.now() / 1000 + 60)).resolves.toBe(true);
  });

  it('pushes a revocation to another store on the same prefix, and holds it until exp', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}:`;
    const a = store(kind, prefix);
    const b = store(kind === 'redis' ? 'ioredis' : 'redis', prefix);
    const listA = a.follow(() => undefined);
    const listB = b.follow(() => undefined);
    await within(5000, () => listA.stats().loaded && listB.stats().loaded, 'both lists loaded');
    const jti = randomUUID();
    const now = Date.now() / 1000;
    expect(listB.isRevoked(jti, now)).toBe(false);
    await a.revoke(jti, soon());
    expect(listA.isRevoked(jti, now)).toBe(true);
    await within(2000, () => listB.isRevoked(jti, Date.now() / 1000) === true, 'the revocation reaching b');
    expect(listB.isRevoked(jti, soon() + 1)).toBe(false);
  });

  it('loads revocations made before it started', async () => {
    const prefix = `t${randomUUID().slice(0, 8)}:`;
    const jti = randomUUID();
    await store(kind, prefix).revoke(jti, soon());
    const list = store(kind, prefix).follow(() => undefined);
    expect(list.isRevoked(jti, Date.now() / 1000)).toBeUndefined(); // not loaded yet: the caller answers 503
    await within(5000, () => list.stats().loaded, 'the list loaded');
    expect(list.isRevoked(jti, Date.now() / 1000)).toBe(true);
  });

  it('keeps a revocation 300 s past its exp (clockTolerance still accepts the token), ignores one older than that', async () => {
    const s = store(kind);
    const list = s.follow(() => undefined);
    await within(5000, () => list.stats().loaded, 'the list loaded');
    const t = Math.floor(Date.now() / 1000);
    await s.revoke('old', t - 301);
    expect(list.stats().size).toBe(0);
    await s.revoke('recent', t - 1);
    expect(list.stats().size).toBe(1);
    expect(list.isRevoked('recent', t - 30)).toBe(true); // the moment a clockTolerance of 30 s looks back to
    expect(list.isRevoked('recent', t)).toBe(false);
  });

  it('refuses revoke() without a jti or an exp', async () => {
    const s = store(kind);
    await expect(s.revoke('', soon())).rejects.toThrow(TypeError);
    await expect(s.revoke('x', Number.NaN)).rejects.toThrow(TypeError);
  });

  it('keeps shared verdicts for their time to live', async () => {
    const s = store(kind);
    await within(
      5000,
      async () => {
        try {
          await s.setVerdict('k1', '{"ok":true}', 0.3);
          return (await s.getVerdict('k1')) === '{"ok":true}';
        } catch {
          return false;
        }
      },
      'the client to be ready',
    );
    await expect(s.getVerdict('missing')).resolves.toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await expect(s.getVerdict('k1')).resolves.toBeUndefined();
  });
});

describe.each(['redis', 'ioredis'] as const)("the Redis store's DPoP share (%s)", (kind) => {
  it('refuses exactly what the in-process store refuses: three keys flooding in turn, then a fresh key', async () => {
    const bounds = { max: 100, maxPerKey: 50 };
    const redisStore = appRedisStore(kind, redis.server.url, redis.cleanups, {
      prefix: `s${randomUUID().slice(0, 8)}:`,
      timeout: '5s',
      replay: bounds,
    });
    const memory = createMemoryReplayStore(bounds);
    const outcome = async (claim: () => boolean | Promise<boolean>) => {
      try {
        return (await claim()) ? 'taken' : 'seen';
      } catch (err) {
        return (err as Error).name === 'ReplayShareExhausted' ? 'share' : 'full';
      }
    };
    const expiresAt = nowS() + 600;
    const seen = { redis: [] as string[], memory: [] as string[] };
    for (const jkt of ['key-a', 'key-b', 'key-c', 'key-d']) {
      for (let i = 0; i < 60; i++) {
        const id = randomUUID();
        seen.redis.push(await outcome(() => redisStore.claimOnce(id, expiresAt, jkt)));
        seen.memory.push(await outcome(() => memory.claimOnce(id, expiresAt, jkt)));
      }
    }
    expect(seen.redis).toEqual(seen.memory);
    const held = (jkt: string) => seen.redis.slice(['key-a', 'key-b', 'key-c', 'key-d'].indexOf(jkt) * 60).slice(0, 60);
    expect(held('key-a').filter((o) => o === 'taken')).toHaveLength(39); // 39 × 100 ≥ 61²: the share shrank below 50
    // A replay is a replay (401), never a share refusal, even for a key past its share.
    const id = randomUUID();
    await expect(redisStore.claimOnce(id, expiresAt)).resolves.toBe(true);
    await expect(redisStore.claimOnce(id, expiresAt)).resolves.toBe(false);
  });
});

describe.each(['redis', 'ioredis'] as const)('the Redis store during an outage (%s)', (kind) => {
  afterEach(async () => {
    redis.server.resume();
    if (!redis.server.running) await redis.server.start();
  });

  it('bounds every wait while Redis is paused (SIGSTOP): claimOnce and verdicts fail within the timeout, the list held still answers', async () => {
    const s = store(kind);
    const list = s.follow(() => undefined);
    await within(5000, () => list.stats().loaded, 'the list loaded');
    const jti = randomUUID();
    await s.revoke(jti, soon());
    redis.server.pause();
    const started = Date.now();
    const [claim, verdict] = await Promise.allSettled([
      s.claimOnce(randomUUID(), Date.now() / 1000 + 60),
      s.getVerdict('k'),
    ]);
    expect([claim.status, verdict.status]).toEqual(['rejected', 'rejected']);
    expect(Date.now() - started).toBeLessThan(3000); // the store's timeout is 500 ms
    expect(list.isRevoked(jti, Date.now() / 1000)).toBe(true);
    expect(list.isRevoked(randomUUID(), Date.now() / 1000)).toBe(false);
    redis.server.resume();
    await within(
      5000,
      async () => {
        try {
          return (await s.claimOnce(randomUUID(), Date.now() / 1000 + 60)) === true;
        } catch {
          return false;
        }
      },
      'Redis to answer again',
    );
  });

  it('throws from claimOnce within its timeout (fail closed), reports the outage once, and resyncs after it', async () => {
    const s = store(kind);
    const reports: TokenAuthError[] = [];
    const list = s.follow((err) => reports.push(err));
    await within(5000, () => list.stats().loaded, 'the list loaded');
    await s.claimOnce(randomUUID(), Date.now() / 1000 + 60);

    await redis.server.stop();
    const started = Date.now();
    await expect(s.claimOnce(randomUUID(), Date.now() / 1000 + 60)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
    await within(5000, () => reports.length > 0, 'the outage report');
    await new Promise((resolve) => setTimeout(resolve, 600)); // several reconnect attempts
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ code: 'verification_unavailable', reason: 'store-unavailable' });
    expect(list.stats()).toMatchObject({ loaded: true, available: false });
    await expect(s.getVerdict('k')).rejects.toThrow();

    await redis.server.start();
    const jti = randomUUID();
    await within(8000, () => list.stats().available, 'the list available again');
    await s.revoke(jti, soon());
    expect(list.isRevoked(jti, Date.now() / 1000)).toBe(true);
  });
});

describe('createRedisStore option errors name the option', () => {
  it.each([
    ['', 'evu:'],
    ['prefx', { prefx: 'evu:' }],
    ['prefix', { prefix: 42 }],
    ['prefix', { prefix: 'a{}b:' }],
    ['timeout', { timeout: 0 }],
    ['timeout', { timeout: 'soon' }],
    ['maxPending', { maxPending: 0 }],
    ['maxPending', { maxPending: 1.5 }],
    ['maxPendingBytes', { maxPendingBytes: 0 }],
    ['replay', { replay: 5 }],
    ['replay.mx', { replay: { mx: 5 } }],
    ['replay.max', { replay: { max: 0 } }],
    ['replay.max', { replay: { max: 20_000_000 } }],
    ['replay.maxPerKey', { replay: { maxPerKey: 1.5 } }],
  ])('an OptionError at "%s" for %p', (option, options) => {
    const client = appRedisClient('ioredis', redis.server.url, redis.cleanups);
    const err = optionErrorOf(() => createRedisStore(client, options as never).close());
    expect(err.option).toBe(option);
    expect(err.message).toMatch(/^express-verified-user: createRedisStore /);
  });

  it('an OptionError at "client" for anything that is not a node-redis or ioredis client', () => {
    const err = optionErrorOf(() => createRedisStore({} as never));
    expect(err.option).toBe('client');
  });
});

describe('scripts by SHA-1', () => {
  it('sends the text once Redis answers NOSCRIPT, and a script without its flags when Redis cannot read them', async () => {
    const client = appRedisClient('ioredis', redis.server.url, redis.cleanups);
    const commands = boundedCommands(redisConnection(client), {
      timeoutMs: 5000,
      maxPending: 10,
      maxPendingBytes: 1 << 20,
    });
    await redis.admin.script('FLUSH');
    await expect(commands.script(luaScript('return ARGV[1]', true), [], ['read only'])).resolves.toBe('read only');
    // As a Redis before 7.0 sees a flagged script: text it cannot compile. The unflagged one runs instead.
    const unflagged = luaScript('return 2');
    const refused = { text: 'return (', sha: '0'.repeat(40), unflagged };
    await expect(commands.script(refused, [], [])).resolves.toBe(2);
  });
});
