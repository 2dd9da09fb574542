// The store in a Redis under memory pressure (a `maxmemory` of a few MiB shows what production's does): one proof
// key's flood of DPoP proof ids, eviction policies, and the revocation list when Redis evicts. A real redis-server,
// real Express apps, proofs by the testing holder.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { createTokenAuth, type TokenAuthError } from '../../lib';
import { type RedisStore } from '../../lib/redis';
import { createTestIssuer, type TestIssuer } from '../../lib/testing';
import { appRedisStore, useRedisServer } from '../fixtures/app-redis-client';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { within } from '../fixtures/fleet';
import { listen } from '../fixtures/listen';

jest.setTimeout(120_000);

const redis = useRedisServer();
const express = EXPRESS_VERSIONS[0][1];
const nowS = () => Date.now() / 1000;

let issuer: TestIssuer;
beforeAll(async () => {
  issuer = await createTestIssuer({ dpop: true, alg: 'ES256' });
});
afterAll(() => issuer.close());
afterEach(async () => {
  await redis.admin.config('SET', 'maxmemory', '0');
  await redis.admin.config('SET', 'maxmemory-policy', 'noeviction');
  await redis.admin.flushall();
  await redis.admin.config('RESETSTAT');
});

/** `maxmemory` and `maxmemory-policy` of the test's redis-server. */
async function limit(maxmemory: string, policy: string): Promise<void> {
  await redis.admin.config('SET', 'maxmemory', maxmemory);
  await redis.admin.config('SET', 'maxmemory-policy', policy);
}

const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.admin.info('memory'))?.[1]);
const evictedKeys = async () => Number(/evicted_keys:(\d+)/.exec(await redis.admin.info('stats'))?.[1]);

/**
 * One proof key (`jkt`) claims `count` new proof ids as the binding step would for a client that
 * floods with one DPoP-bound token, 200 at a time. How many were taken, refused for that key's share, or failed
 * otherwise.
 */
async function flood(store: RedisStore, jkt: string, count: number) {
  const tally = { taken: 0, share: 0, other: 0 };
  for (let done = 0; done < count; done += 200) {
    const batch = await Promise.allSettled(
      Array.from({ length: Math.min(200, count - done) }, () =>
        store.claimOnce(randomBytes(32).toString('base64url'), nowS() + 60, jkt),
      ),
    );
    for (const outcome of batch) {
      if (outcome.status === 'fulfilled') tally.taken += outcome.value ? 1 : 0;
      else if ((outcome.reason as Error).name === 'ReplayShareExhausted') tally.share++;
      else tally.other++;
    }
  }
  return tally;
}

/** An Express app whose `/me` takes DPoP with `store` as its replay store (and revocation list, when asked). */
async function dpopApp(store: RedisStore, revocation = false) {
  const reports: TokenAuthError[] = [];
  const auth = createTokenAuth({
    ...issuer.options,
    dpop: { replay: store },
    ...(revocation ? { revocation: store } : {}),
    onError: (err) => void reports.push(err),
  });
  const app: Express = express();
  app.get('/me', auth.requireVerifiedUser(), (_req, res) => {
    res.json({ ok: true });
  });
  const listening = await listen(app);
  redis.cleanups.push(
    () => auth.close(),
    () => listening.close(),
  );
  const token = issuer.sign();
  const proof = () => issuer.holder!.proof({ method: 'GET', url: `${listening.origin}/me`, token });
  const send = (dpop = proof()) =>
    request(listening.origin)
      .get('/me')
      .set({ Authorization: `DPoP ${token}`, DPoP: dpop });
  return { auth, reports, token, proof, send, origin: listening.origin };
}

const prefix = () => `p${randomUUID().slice(0, 8)}:`;
/** A store on a client of `kind`; a loaded machine must not turn a claim into a timeout. */
const storeOf = (kind: 'redis' | 'ioredis') =>
  appRedisStore(kind, redis.server.url, redis.cleanups, { prefix: prefix(), timeout: '5s' });
const otherKey = () => randomBytes(32).toString('base64url');

describe.each(['ioredis', 'redis'] as const)('one proof key flooding a Redis of 3 MiB (%s)', (kind) => {
  it("noeviction: another client's proofs are still served, the flooder alone is refused (503 for it)", async () => {
    await limit('3mb', 'noeviction');
    const store = storeOf(kind);
    const victim = await dpopApp(store);
    await within(5000, async () => (await victim.send()).status === 200, 'the store to answer');

    const before = await usedMemory();
    const tally = await flood(store, otherKey(), 30_000);
    const added = (await usedMemory()) - before;
    // The flooder holds its share (maxPerKey, a tenth of 100 000 by default), and nothing fails otherwise.
    expect(tally).toEqual({ taken: 10_000, share: 20_000, other: 0 });
    expect(added).toBeLessThan(2 * 2 ** 20);

    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await victim.send()).status);
    expect(statuses).toEqual(Array(20).fill(200));
  });

  it.each(['allkeys-lru', 'volatile-lru'])(
    "%s: a victim's used proof is still refused after the flood (nothing evicted)",
    async (policy) => {
      await limit('3mb', policy);
      const store = storeOf(kind);
      const victim = await dpopApp(store);
      await within(5000, async () => (await victim.send()).status === 200, 'the store to answer');
      const used = victim.proof();
      expect((await victim.send(used)).status).toBe(200);

      await flood(store, otherKey(), 30_000);
      expect(await evictedKeys()).toBe(0);
      const replay = await victim.send(used);
      expect(replay.status).toBe(401);
      expect(replay.body).toEqual({ status: 'error', message: 'Invalid DPoP proof' });
      expect((await victim.send()).status).toBe(200);
    },
  );
});

/** Write `junk` keys of 10 KiB (with an expiry when `volatile`) until `gone` holds or 3 000 were written. */
async function fillUntil(gone: () => Promise<boolean>, volatile: boolean): Promise<void> {
  const value = 'x'.repeat(10 * 1024);
  for (let i = 0; i < 3000; i++) {
    if (i % 50 === 0 && (await gone())) return;
    if (volatile) await redis.admin.set(`junk:${i}`, value, 'EX', 600);
    else await redis.admin.set(`junk:${i}`, value);
  }
  if (!(await gone())) throw new Error('Redis did not evict what the test waited for');
}

describe.each(['ioredis', 'redis'] as const)('the revocation list when Redis evicts (%s)', (kind) => {
  /** A TokenAuth with `revocation: store` on its own store, its reports, and a Bearer request for `token`. */
  async function instance(listPrefix: string) {
    const shared = appRedisStore(kind, redis.server.url, redis.cleanups, { prefix: listPrefix, timeout: '5s' });
    const reports: TokenAuthError[] = [];
    const auth = createTokenAuth({ ...issuer.options, revocation: shared, onError: (err) => void reports.push(err) });
    const app: Express = express();
    app.get('/me', auth.requireVerifiedUser(), (_req, res) => {
      res.json({ ok: true });
    });
    const listening = await listen(app);
    redis.cleanups.push(
      () => auth.close(),
      () => listening.close(),
    );
    const get = (token: string) => request(listening.origin).get('/me').set('Authorization', `Bearer ${token}`);
    return { store: shared, auth, reports, get };
  }
  const loaded = (auth: ReturnType<typeof createTokenAuth>) => auth.stats().revocation?.loaded === true;

  it('allkeys-lru: a list evicted is reported, the instance that held it keeps refusing and writes it back; a new instance answers 503, never 200', async () => {
    await limit('3mb', 'allkeys-lru');
    const listPrefix = prefix();
    const first = await instance(listPrefix);
    await within(5000, () => loaded(first.auth), 'the list loaded');
    const token = issuer.sign({ cnf: undefined }); // a Bearer token
    const { jti, exp } = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as {
      jti: string;
      exp: number;
    };
    await first.store.revoke(jti, exp);
    await fillUntil(async () => (await redis.admin.exists(`${listPrefix}revoked`)) === 0, false);

    const late = await instance(listPrefix);
    // Settled: loaded (what the store did before: an empty list, and the token passed) or the loss reported.
    await within(
      5000,
      () => loaded(late.auth) || late.reports.some((r) => r.reason === 'revocation-set-missing'),
      'the new instance to load its list or report',
    );
    const refused = await late.get(token);
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    expect(refused.headers['retry-after']).toBe('1');
    expect(loaded(late.auth)).toBe(false);
    expect(late.reports.find((r) => r.reason === 'revocation-set-missing')?.hint).toMatch(/allkeys-lru/);

    // The first instance still holds it; at its next reload it finds the list gone, reports, and writes it back.
    await redis.admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await within(5000, () => first.reports.some((r) => r.reason === 'revocation-set-missing'), 'its report');
    expect(first.reports.find((r) => r.reason === 'revocation-set-missing')).toMatchObject({
      code: 'verification_unavailable',
    });
    const still = await first.get(token);
    expect(still.status).toBe(401);
    expect(first.reports.map((r) => r.reason)).toContain('revoked');
    await within(5000, async () => (await redis.admin.zscore(`${listPrefix}revoked`, jti)) !== null, 'written back');
  });

  it('volatile-lru: the list has no expiry, so it is never evicted, and a new instance refuses a revoked token', async () => {
    await limit('3mb', 'volatile-lru');
    const listPrefix = prefix();
    const first = await instance(listPrefix);
    await within(5000, () => loaded(first.auth), 'the list loaded');
    const token = issuer.sign({ cnf: undefined }); // a Bearer token
    const { jti, exp } = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as {
      jti: string;
      exp: number;
    };
    await first.store.revoke(jti, exp);
    await fillUntil(async () => (await evictedKeys()) > 2000, true);
    expect(await redis.admin.zscore(`${listPrefix}revoked`, jti)).toBe(String(exp));

    const late = await instance(listPrefix);
    await within(5000, () => loaded(late.auth), 'the new list loaded');
    const refused = await late.get(token);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ status: 'error', message: 'Invalid access token' });
    expect(late.reports.map((r) => r.reason)).toContain('revoked');
  });
});

describe.each(['ioredis', 'redis'] as const)('the eviction policy, reported through onError (%s)', (kind) => {
  /** A TokenAuth on a store of its own client (`url`): with `revocation`, or with DPoP alone. */
  function auth(url: string, use: 'revocation' | 'dpop') {
    const store = appRedisStore(kind, url, redis.cleanups, { prefix: prefix() });
    const reports: TokenAuthError[] = [];
    const made = createTokenAuth({
      ...issuer.options,
      ...(use === 'revocation' ? { revocation: store } : { dpop: { replay: store } }),
      onError: (err) => void reports.push(err),
    });
    redis.cleanups.push(() => made.close());
    return { auth: made, reports };
  }
  const policyReports = (reports: TokenAuthError[]) => reports.filter((r) => r.reason === 'store-eviction-policy');

  it.each(['revocation', 'dpop'] as const)('reports allkeys-lru once to a TokenAuth with %s', async (use) => {
    await limit('0', 'allkeys-lru');
    const { reports } = auth(redis.server.url, use);
    await within(5000, () => policyReports(reports).length > 0, 'the report');
    expect(policyReports(reports)).toHaveLength(1);
    expect(policyReports(reports)[0]).toMatchObject({ code: 'verification_unavailable' });
    expect(policyReports(reports)[0].hint).toMatch(/maxmemory-policy is allkeys-lru.*noeviction/);
  });

  it('says nothing under noeviction', async () => {
    const made = auth(redis.server.url, 'revocation');
    await within(5000, () => made.auth.stats().revocation?.loaded === true, 'the list loaded');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(made.reports).toEqual([]);
  });

  it('says nothing, and loads the list, when Redis refuses INFO and CONFIG to its user', async () => {
    await limit('0', 'allkeys-lru');
    const user = `u${randomUUID().slice(0, 8)}`;
    await redis.admin.call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all', '-info', '-config');
    redis.cleanups.push(() => redis.admin.call('ACL', 'DELUSER', user));
    const url = redis.server.url.replace('redis://', `redis://${user}:secret@`);
    const made = auth(url, 'revocation');
    await within(5000, () => made.auth.stats().revocation?.loaded === true, 'the list loaded');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(made.reports).toEqual([]);
  });
});
