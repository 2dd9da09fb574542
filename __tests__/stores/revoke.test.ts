import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisStore, type RedisStore, type RedisStoreOptions } from '../../lib/redis';
import request from 'supertest';
import { createTokenAuth, TokenAuthError, type JwtClaims } from '../../lib';
import { createTestIssuer } from '../../lib/testing';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { listen } from '../fixtures/listen';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server';
import { appRedisClient } from '../fixtures/app-redis-client';
import { startInstance, stopAllInstances, within } from '../fixtures/fleet';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';

// revoke() against a real redis-server: exp validated, the write all or nothing, a paused Redis answered honestly,
// and the commands a stalled Redis can hold bounded.
jest.setTimeout(30_000);

let server: RedisServer;
let admin: Redis;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  admin.on('error', () => undefined);
});

afterEach(async () => {
  server.resume();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await stopAllInstances();
  admin?.disconnect();
  await server?.close();
});

const LATEST = 253_402_300_799; // 9999-12-31T23:59:59Z

function store(kind: 'redis' | 'ioredis', prefix: string, opts: RedisStoreOptions = {}): RedisStore {
  const made = createRedisStore(appRedisClient(kind, server.url, cleanups), { prefix, timeout: '300ms', ...opts });
  cleanups.push(() => made.close());
  return made;
}

/** A store and a follower on another client (the other kind), both with their list loaded. */
async function pair(kind: 'redis' | 'ioredis', opts: RedisStoreOptions = {}) {
  const prefix = `r${randomUUID().slice(0, 8)}:`;
  const a = store(kind, prefix, opts);
  const b = store(kind === 'redis' ? 'ioredis' : 'redis', prefix);
  const listA = a.follow(() => undefined);
  const listB = b.follow(() => undefined);
  await within(5000, () => listA.stats().loaded && listB.stats().loaded, 'both lists loaded');
  return { prefix, a, listA, listB };
}

const soon = () => Math.floor(Date.now() / 1000) + 600;
const nowS = () => Date.now() / 1000;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe.each(['redis', 'ioredis'] as const)('revoke() on a %s client', (kind) => {
  it('holds a far-future exp (1e17, Number.MAX_VALUE, Infinity) until the year 9999, and later revocations still work and reach every follower', async () => {
    const { prefix, a, listB } = await pair(kind);
    const far = [randomUUID(), randomUUID(), randomUUID()];
    await a.revoke(far[0], 1e17);
    await a.revoke(far[1], Number.MAX_VALUE);
    await a.revoke(far[2], Infinity);
    const later = randomUUID();
    await a.revoke(later, soon()); // rejected with "ERR value is not an integer" once 1e17 was in the set
    await within(
      2000,
      () => [...far, later].every((jti) => listB.isRevoked(jti, nowS()) === true),
      'every revocation reaching the follower',
    );
    expect(await admin.zscore(`${prefix}revoked`, far[0])).toBe(String(LATEST));
    const ttl = await admin.ttl(`${prefix}revoked`);
    expect(ttl).toBeGreaterThan(0); // the set expires (with its latest entry), never -1
    expect(listB.isRevoked(far[1], LATEST - 1)).toBe(true);
  });

  it('heals a set left with an entry past the year 9999 by an earlier version: revoke() stores, expires and publishes', async () => {
    const { prefix, a, listB } = await pair(kind);
    await admin.zadd(`${prefix}revoked`, '1e17', 'left-by-an-earlier-version');
    const jti = randomUUID();
    await a.revoke(jti, soon());
    await within(2000, () => listB.isRevoked(jti, nowS()) === true, 'the revocation reaching the follower');
    expect(await admin.ttl(`${prefix}revoked`)).toBeGreaterThan(0);
  });

  it('writes nothing and publishes nothing when Redis refuses the script (a key of another type under the name)', async () => {
    const { prefix, a, listB } = await pair(kind);
    await admin.set(`${prefix}revoked`, 'not a sorted set');
    const jti = randomUUID();
    const err = await rejection(a.revoke(jti, soon()));
    expect(err).toBeInstanceOf(TokenAuthError);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(listB.isRevoked(jti, nowS())).toBe(false);
    expect(await admin.get(`${prefix}revoked`)).toBe('not a sorted set');
  });

  it('takes verified claims (any claims mode), and refuses claims without a jti or an exp that is not a number', async () => {
    const { a, listA } = await pair(kind);
    const jti = randomUUID();
    const claims: JwtClaims = { jti, exp: soon(), sub: 'x' }; // what claims: 'jwt' guarantees: jti is unknown
    await a.revoke(claims);
    expect(listA.isRevoked(jti, nowS())).toBe(true);
    await expect(a.revoke({ exp: soon() })).rejects.toThrow(/has none, so it cannot be revoked by jti/);
    await expect(a.revoke({ jti: 42, exp: soon() })).rejects.toThrow(TypeError);
    await expect(a.revoke('x', Number.NaN)).rejects.toThrow(TypeError);
    await expect(a.revoke('x', '1800000000' as never)).rejects.toThrow(TypeError);
    await a.revoke('fraction', nowS() + 60.2);
    expect(listA.isRevoked('fraction', nowS())).toBe(true);
  });

  it('while Redis is paused, rejects after the timeout with "outcome unknown": it ran on resume, and reached every instance', async () => {
    const { a, listA, listB } = await pair(kind);
    const jti = randomUUID();
    server.pause();
    const err = await rejection(a.revoke(jti, soon()));
    expect(err).toBeInstanceOf(TokenAuthError);
    expect(err).toMatchObject({ code: 'verification_unavailable', status: 503, reason: 'revoke-outcome-unknown' });
    expect((err as TokenAuthError).headers['Retry-After']).toBe('1');
    server.resume();
    // The queued command ran on resume: "nothing was revoked" would have been a lie.
    await within(
      5000,
      () => listA.isRevoked(jti, nowS()) === true && listB.isRevoked(jti, nowS()) === true,
      'the queued revocation to run and reach both lists',
    );
    await a.revoke(jti, soon()); // a retry is harmless
  });
});

describe.each(['redis', 'ioredis'] as const)('commands waiting on a stalled Redis (%s)', (kind) => {
  it('lets at most maxPending commands wait on the client; the rest fail at once without being sent', async () => {
    const prefix = `m${randomUUID().slice(0, 8)}:`;
    const s = store(kind, prefix, { maxPending: 20 });
    await within(
      5000,
      async () => {
        try {
          return await s.claimOnce(randomUUID(), nowS() + 60);
        } catch {
          return false;
        }
      },
      'the client to be ready',
    );
    await admin.flushall();
    server.pause();
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
    server.resume();
    await within(
      5000,
      async () => {
        try {
          return await s.claimOnce(randomUUID(), nowS() + 60);
        } catch {
          return false;
        }
      },
      'the store to accept commands again',
    );
    // Only the 20 that were let through reached Redis (and the probes after resume): the other 80 never queued.
    const keys = await admin.keys(`${prefix}dpop:*`);
    expect(keys.length).toBeGreaterThanOrEqual(21);
    expect(keys.length).toBeLessThan(30);
  });

  it('refuses a maxPending that is not a whole number of at least 1', () => {
    for (const maxPending of [0, -1, 1.5, Number.NaN, '10' as never]) {
      expect(() => createRedisStore(appRedisClient(kind, server.url, cleanups), { maxPending })).toThrow(/maxPending/);
    }
  });
});

describe.each(EXPRESS_VERSIONS)('DPoP requests while Redis is paused, through %s', (_name, express) => {
  it('past maxPending commands waiting, answers 503 without sending anything to the client; 200 again after resume', async () => {
    const issuer = await createTestIssuer({ dpop: true, alg: 'ES256' });
    cleanups.push(() => issuer.close());
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
    cleanups.push(() => listening.close());
    const token = issuer.sign();
    const call = () =>
      request(listening.origin)
        .get('/me')
        .set({
          Authorization: `DPoP ${token}`,
          DPoP: holder.proof({ method: 'GET', url: `${listening.origin}/me`, token }),
        });
    await within(5000, async () => (await call()).status === 200, 'the store to answer');

    server.pause();
    const first = await Promise.all(Array.from({ length: 5 }, call)); // these wait the store's timeout
    const later = await Promise.all(Array.from({ length: 20 }, call)); // the 5 still wait in the client: refused at once
    for (const res of [...first, ...later]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    }
    expect(causes.filter((c) => c === 'StoreTimeoutError')).toHaveLength(5);
    expect(causes.filter((c) => c === 'StoreBusyError')).toHaveLength(20);
    server.resume();
    await within(5000, async () => (await call()).status === 200, 'DPoP requests to pass again');
  });
});

describe('a fleet (separate processes, Express 5 and 4) after revoke(jti, 1e17)', () => {
  afterEach(() => stopAllInstances());

  it('refuses on every instance each token revoked after it, and the far-future one too', async () => {
    const config = {
      redisUrl: server.url,
      key: { secret: SECRET },
      issuer: ISSUER,
      audience: AUDIENCE,
      prefix: `f${randomUUID().slice(0, 8)}:`,
    };
    const [a, b] = await Promise.all([
      startInstance({ ...config, express: 5 }),
      startInstance({ ...config, express: 4 }),
    ]);
    const probe = sign(shapeB());
    for (const instance of [a, b])
      await within(10_000, async () => (await instance.get(probe)).status === 200, 'the instance to load the list');
    const farClaims = shapeB(undefined, { exp: 1e17 }); // accepted: exp is an integer
    const tokens = [sign(farClaims), ...Array.from({ length: 3 }, () => sign(shapeB()))];
    const claims = tokens.map(
      (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString()) as { jti: string; exp: number },
    );
    for (const instance of [a, b]) for (const t of tokens) expect((await instance.get(t)).status).toBe(200);
    await a.call('revoke', { jti: claims[0].jti, exp: claims[0].exp });
    await a.call('revoke', { jti: claims[1].jti, exp: Number.MAX_VALUE });
    await b.call('revoke', { jti: claims[2].jti, exp: claims[2].exp });
    await a.call('revoke', { jti: claims[3].jti, exp: claims[3].exp });
    for (const instance of [a, b]) {
      for (const t of tokens)
        await within(
          5000,
          async () => (await instance.get(t)).status === 401,
          'every revocation to reach every instance',
        );
    }
  });
});
