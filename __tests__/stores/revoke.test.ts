import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, TokenAuthError, type JwtClaims } from '../../lib';
import { createTestIssuer } from '../../lib/testing';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { listen } from '../fixtures/listen';
import { type RedisStore, type RedisStoreOptions } from '../../lib/redis';
import { appRedisStore, useRedisServer } from '../fixtures/app-redis-client';
import { within } from '../fixtures/fleet';
import { rejection } from '../fixtures/rejection';

// revoke() against a real redis-server: exp validated, the write all or nothing, a paused Redis answered honestly.
jest.setTimeout(30_000);

const redis = useRedisServer();

const LATEST = 253_402_300_799; // 9999-12-31T23:59:59Z

const store = (kind: 'redis' | 'ioredis', prefix: string, opts: RedisStoreOptions = {}): RedisStore =>
  appRedisStore(kind, redis.server.url, redis.cleanups, { prefix, timeout: '300ms', ...opts });

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
    expect(await redis.admin.zscore(`${prefix}revoked`, far[0])).toBe(String(LATEST));
    // No expiry: a volatile-* eviction policy never drops the set (its entries leave at their exp instead).
    expect(await redis.admin.ttl(`${prefix}revoked`)).toBe(-1);
    expect(listB.isRevoked(far[1], LATEST - 1)).toBe(true);
  });

  it('takes over a set an earlier version left (an entry past the year 9999, an expiry): stores, publishes, drops the expiry', async () => {
    const { prefix, a, listB } = await pair(kind);
    await redis.admin.zadd(`${prefix}revoked`, '1e17', 'left-by-an-earlier-version');
    await redis.admin.expire(`${prefix}revoked`, 600);
    const jti = randomUUID();
    await a.revoke(jti, soon());
    await within(2000, () => listB.isRevoked(jti, nowS()) === true, 'the revocation reaching the follower');
    expect(await redis.admin.ttl(`${prefix}revoked`)).toBe(-1);
  });

  it('writes nothing and publishes nothing when Redis refuses the script (a key of another type under the name)', async () => {
    const { prefix, a, listB } = await pair(kind);
    await redis.admin.set(`${prefix}revoked`, 'not a sorted set');
    const jti = randomUUID();
    const err = await rejection(a.revoke(jti, soon()));
    expect(err).toBeInstanceOf(TokenAuthError);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(listB.isRevoked(jti, nowS())).toBe(false);
    expect(await redis.admin.get(`${prefix}revoked`)).toBe('not a sorted set');
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
    redis.server.pause();
    const err = await rejection(a.revoke(jti, soon()));
    expect(err).toBeInstanceOf(TokenAuthError);
    expect(err).toMatchObject({ code: 'verification_unavailable', status: 503, reason: 'revoke-outcome-unknown' });
    expect((err as TokenAuthError).headers['Retry-After']).toBe('1');
    redis.server.resume();
    // The queued command ran on resume: "nothing was revoked" would have been a lie.
    await within(
      5000,
      () => listA.isRevoked(jti, nowS()) === true && listB.isRevoked(jti, nowS()) === true,
      'the queued revocation to run and reach both lists',
    );
    await a.revoke(jti, soon()); // a retry is harmless
  });
});

describe.each(EXPRESS_VERSIONS)('a revoked token at its exp, through %s', (_name, express) => {
  it('stays refused while clockTolerance still accepts its exp, on the instance that revoked it and on one started after', async () => {
    const issuer = await createTestIssuer({});
    redis.cleanups.push(() => issuer.close());
    const prefix = `g${randomUUID().slice(0, 8)}:`;
    const serve = async () => {
      const auth = createTokenAuth({ ...issuer.options, clockTolerance: 30, revocation: store('ioredis', prefix) });
      const app = express();
      app.get('/me', auth.requireVerifiedUser(), (_req, res) => {
        res.json({ ok: true });
      });
      const listening = await listen(app);
      redis.cleanups.push(
        () => auth.close(),
        () => listening.close(),
      );
      await within(5000, () => auth.stats().revocation?.loaded === true, 'the list loaded');
      return (token: string) => request(listening.origin).get('/me').set('Authorization', `Bearer ${token}`);
    };
    const first = await serve();
    // Expired two seconds ago: inside the 30 s of clockTolerance, so only its revocation refuses it.
    const exp = Math.floor(nowS()) - 2;
    const token = issuer.sign({ exp });
    expect((await first(token)).status).toBe(200);
    const jti = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti as string;
    await store('redis', prefix).revoke(jti, exp);
    await within(2000, async () => (await first(token)).status === 401, 'the revocation on the first instance');
    const later = await serve();
    const refused = await later(token);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ status: 'error', message: 'Invalid access token' });
  });
});
