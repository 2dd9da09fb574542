import { randomUUID } from 'node:crypto';
import { createTokenAuth, OptionError, type RevocationList, type TokenAuthError } from '../../lib';
import type { RedisStore } from '../../lib/redis';
import { appRedisStore, useRedisServer } from '../fixtures/app-redis-client';
import { within } from '../fixtures/fleet';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';
import { optionErrorOf } from '../fixtures/option-error';
import { rejection } from '../fixtures/rejection';

// Subject and session rules on a real redis-server (lib/stores/revoke-rules.ts, rule-list.ts), on both clients:
// stored and published all or nothing, bounded, dropped after their lifetime, reloaded at a reconnect, written back.
jest.setTimeout(30_000);

const redis = useRedisServer();
const ISS = 'https://idp.example/realms/acme';
const LIFETIME = 3605;
const other = (kind: 'redis' | 'ioredis') => (kind === 'redis' ? 'ioredis' : 'redis');
const nowS = () => Date.now() / 1000;

// A generous timeout: a node-redis client is still connecting when the store gets it, on a loaded machine.
const store = (kind: 'redis' | 'ioredis', prefix: string, maxRules?: number, timeout = '3s'): RedisStore =>
  appRedisStore(kind, redis.server.url, redis.cleanups, { prefix, timeout, maxRules });

/** A store and its list (a follower with a rule lifetime, as a TokenAuth with maxLifetime has), loaded. */
async function follower(kind: 'redis' | 'ioredis', prefix: string, ruleLifetime: number | 'none' = LIFETIME) {
  const reports: TokenAuthError[] = [];
  const s = store(kind, prefix);
  const list = s.follow((err) => reports.push(err), ruleLifetime === 'none' ? {} : { ruleLifetime });
  await within(5000, () => list.stats().loaded, 'the list loaded');
  return { store: s, list, reports };
}

const claims = (extra: Record<string, unknown> = {}) => ({ iss: ISS, sub: 'alice', iat: nowS() - 60, ...extra });
const refusal = (list: RevocationList, extra: Record<string, unknown> = {}) => list.ruleRefusal!(claims(extra), nowS());
const rulesKey = (prefix: string) => `${prefix}rules:{${prefix}rules}`;
const member = (kind: string, key: string, iss = ISS) => JSON.stringify([kind, iss, key]);

describe.each(['redis', 'ioredis'] as const)('rules on a %s client', (kind) => {
  it('stores a subject rule with no expiry, declares the lifetime, and another instance refuses what it names', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const { list } = await follower(other(kind), prefix);
    const writer = store(kind, prefix); // a process that only writes rules (an admin tool)
    const before = Math.floor(nowS()) - 30;
    expect(refusal(list)).toBeUndefined();
    await writer.revokeSubject({ iss: ISS, sub: 'alice' }, { before });
    await within(2000, () => refusal(list) === 'subject-revoked', 'the rule reaching the other instance');
    expect(refusal(list, { iat: before + 1 })).toBeUndefined();
    expect(refusal(list, { sub: 'bob' })).toBeUndefined();
    expect(refusal(list, { iss: 'https://idp.example/realms/other' })).toBeUndefined();
    expect(await redis.admin.zscore(rulesKey(prefix), member('s', 'alice'))).toBe(String(before));
    expect(await redis.admin.get(`${rulesKey(prefix)}:lifetime`)).toBe(String(LIFETIME));
    expect(await redis.admin.ttl(rulesKey(prefix))).toBe(-1);
    expect(await redis.admin.ttl(`${rulesKey(prefix)}:lifetime`)).toBe(-1);
    expect(list.stats()).toMatchObject({ loaded: true, rules: 1 });
  });

  it('stores a session rule with sub as two entries, refused at once by the writer and soon by another instance', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const a = await follower(kind, prefix);
    const b = await follower(other(kind), prefix);
    await a.store.revokeSession({ iss: ISS, sid: 'session-1', sub: 'alice' });
    expect(refusal(a.list, { sid: 'session-1', iat: nowS() })).toBe('session-revoked');
    await within(2000, () => refusal(b.list) === 'session-revoked', 'the rule reaching b');
    expect(refusal(b.list, { sid: 'session-1', sub: 'bob' })).toBe('session-revoked');
    expect(refusal(b.list, { sid: 'session-2' })).toBeUndefined();
    expect(refusal(b.list, { iat: nowS() + 1 })).toBeUndefined();
    expect(await redis.admin.zcard(rulesKey(prefix))).toBe(2);
  });

  it('rejects a rule past maxRules with revocation-store-full and Retry-After, stores none of it, and keeps what it holds', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const { list } = await follower(other(kind), prefix);
    const writer = store(kind, prefix, 3);
    await writer.revokeSubject({ iss: ISS, sub: 'alice' });
    await writer.revokeSubject({ iss: ISS, sub: 'bob' });
    const full = await rejection(writer.revokeSession({ iss: ISS, sid: 'session-1', sub: 'carol' }));
    expect(full).toMatchObject({ code: 'verification_unavailable', status: 503, reason: 'revocation-store-full' });
    expect(Number(full.headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(Number(full.headers['Retry-After'])).toBeLessThanOrEqual(300);
    expect(await redis.admin.zcard(rulesKey(prefix))).toBe(2);
    await writer.revokeSession({ iss: ISS, sid: 'session-1' });
    expect((await rejection(writer.revokeSubject({ iss: ISS, sub: 'dave' }))).reason).toBe('revocation-store-full');
    await writer.revokeSubject({ iss: ISS, sub: 'bob' }); // held already: takes no new place
    await within(
      2000,
      () => refusal(list, { sid: 'session-1', sub: 'zed' }) === 'session-revoked',
      'the rules reaching the list',
    );
    expect(refusal(list, { sub: 'alice', iat: nowS() - 600 })).toBe('subject-revoked');
    expect(refusal(list, { sub: 'dave', iat: nowS() - 600 })).toBeUndefined();
    expect(refusal(list, { sub: 'carol', iat: nowS() - 600 })).toBeUndefined();
  });

  it('drops a rule from Redis once before + the fleet lifetime + 10 s has passed, and stores none older', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const { list } = await follower(other(kind), prefix, 2); // maxLifetime 1 s + clockTolerance 1 s
    const writer = store(kind, prefix);
    const t = nowS();
    await writer.revokeSubject({ iss: ISS, sub: 'old' }, { before: t - 13 }); // past: nothing to store
    expect(await redis.admin.zscore(rulesKey(prefix), member('s', 'old'))).toBeNull();
    await writer.revokeSubject({ iss: ISS, sub: 'alice' }, { before: t - 11 });
    expect(await redis.admin.zscore(rulesKey(prefix), member('s', 'alice'))).not.toBeNull();
    // Each write drops what is past; within a few seconds alice's rule leaves, bob's stays.
    await within(
      10_000,
      async () => {
        await writer.revokeSubject({ iss: ISS, sub: 'bob' });
        return (await redis.admin.zscore(rulesKey(prefix), member('s', 'alice'))) === null;
      },
      'the rule to leave Redis',
    );
    expect(await redis.admin.zscore(rulesKey(prefix), member('s', 'bob'))).not.toBeNull();
    // The instance drops it too at its sweep (every 5 s).
    await within(10_000, () => list.stats().rules === 1, 'the rule to leave the instance');
  });

  it('loads at a reconnect a rule it was never sent (stored in Redis without being published)', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const { list } = await follower(kind, prefix);
    await redis.admin.zadd(rulesKey(prefix), String(Math.floor(nowS())), member('x', 'session-9'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(refusal(list, { sid: 'session-9' })).toBeUndefined(); // nothing told it yet
    await redis.admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await within(5000, () => refusal(list, { sid: 'session-9' }) === 'session-revoked', 'the reload');
  });

  it('writes back the rules Redis lost (a restart without persistence): a store started afterwards loads them', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const a = await follower(kind, prefix);
    await a.store.revokeSubject({ iss: ISS, sub: 'alice' });
    await redis.server.restart();
    await within(10_000, () => a.reports.some((r) => r.reason === 'revocation-set-missing'), 'the loss report');
    expect(a.reports.find((r) => r.reason === 'revocation-set-missing')?.hint).toMatch(/1 rule entries/);
    expect(refusal(a.list)).toBe('subject-revoked');
    await within(10_000, async () => (await redis.admin.zcard(rulesKey(prefix))) === 1, 'the write-back');
    const late = await follower(other(kind), prefix);
    expect(refusal(late.list)).toBe('subject-revoked');
  });

  it('rejects with verification_unavailable while Redis does not answer (the outcome unknown)', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const s = store(kind, prefix, undefined, '300ms');
    const list = s.follow(() => undefined, { ruleLifetime: LIFETIME });
    await within(5000, () => list.stats().loaded, 'the store connected');
    redis.server.pause();
    const err = await rejection(s.revokeSubject({ iss: ISS, sub: 'alice' }));
    redis.server.resume();
    expect(err).toMatchObject({ code: 'verification_unavailable', reason: 'revoke-outcome-unknown' });
  });
});

describe('rules and maxLifetime on the Redis store', () => {
  const base = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE };

  it('an OptionError at createTokenAuth once rules were written through the store; none for the jti list alone', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const s = store('ioredis', prefix);
    createTokenAuth({ ...base, revocation: s }).close(); // today's use: revoke() by jti, no maxLifetime
    await s.revokeSubject({ iss: ISS, sub: 'alice' });
    expect(optionErrorOf(() => createTokenAuth({ ...base, revocation: s })).option).toBe('maxLifetime');
    createTokenAuth({ ...base, revocation: s, maxLifetime: '1h' }).close();
  });

  it('rejects a rule with an OptionError while a TokenAuth without maxLifetime follows the store', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const s = store('redis', prefix);
    const legacy = createTokenAuth({ ...base, revocation: s });
    await expect(s.revokeSession({ iss: ISS, sid: 's' })).rejects.toThrow(OptionError);
    legacy.close();
    await s.revokeSession({ iss: ISS, sid: 's' });
  });

  it('tells a TokenAuth without maxLifetime, once, that the store holds rules another process wrote; it applies them', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    const legacy = await follower('redis', prefix, 'none');
    await store('ioredis', prefix).revokeSubject({ iss: ISS, sub: 'alice' });
    await within(2000, () => refusal(legacy.list, { iat: nowS() - 86_400 }) === 'subject-revoked', 'the rule');
    await store('ioredis', prefix).revokeSubject({ iss: ISS, sub: 'bob' });
    await within(2000, () => refusal(legacy.list, { sub: 'bob' }) === 'subject-revoked', 'the second rule');
    expect(legacy.reports.map((r) => r.reason)).toEqual(['revocation-rules-unbounded']);
  });
});
