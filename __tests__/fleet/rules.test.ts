import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';
import { startInstance, stopAllInstances, within, type Instance, type InstanceConfig } from '../fixtures/fleet';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server';

// Subject and session rules across a fleet of three separate Node processes (Express 5, 4 and 5) sharing one real
// redis-server: a rule written by one instance is refused by all three, and by one started later or reconnected.
jest.setTimeout(60_000);

let redis: RedisServer;
let admin: Redis;
const INVALID = JSON.stringify({ status: 'error', message: 'Invalid access token' });

const config = (prefix: string, express: 4 | 5): InstanceConfig => ({
  redisUrl: redis.url,
  key: { secret: SECRET },
  issuer: ISSUER,
  audience: AUDIENCE,
  prefix,
  express,
  maxLifetime: '1h',
});

/** Three instances on a prefix of their own, each with its list loaded. */
async function fleet(): Promise<{ prefix: string; instances: Instance[] }> {
  const prefix = `rules${randomUUID().slice(0, 8)}:`;
  const instances = await Promise.all([
    startInstance(config(prefix, 5)),
    startInstance(config(prefix, 4)),
    startInstance(config(prefix, 5)),
  ]);
  await Promise.all(instances.map(loaded));
  return { prefix, instances };
}

async function loaded(instance: Instance): Promise<void> {
  const probe = token();
  await within(10_000, async () => (await instance.get(probe)).status !== 503, 'the instance to load the list');
}

/** A token of `claims` (Shape B, 10 min), issued `ago` seconds ago. */
function token(claims: Record<string, unknown> = {}, ago = 60): string {
  return sign(shapeB(Math.floor(Date.now() / 1000) - ago, claims));
}

/** Wait (bounded) until every instance refuses `t` with 401 invalid_token. */
async function refusedEverywhere(instances: Instance[], t: string, what: string): Promise<void> {
  await Promise.all(
    instances.map((instance) => within(5000, async () => (await instance.get(t)).status === 401, what)),
  );
  for (const instance of instances) expect((await instance.get(t)).body).toBe(INVALID);
}

async function statuses(instances: Instance[], t: string): Promise<number[]> {
  return Promise.all(instances.map(async (instance) => (await instance.get(t)).status));
}

beforeAll(async () => {
  redis = await startRedisServer();
  admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  admin.on('error', () => undefined);
});

afterEach(() => stopAllInstances());

afterAll(async () => {
  await stopAllInstances();
  admin?.disconnect();
  await redis?.close();
});

describe('subject and session rules across a fleet of three processes', () => {
  it('refuses on all three a subject revoked on one, and no other subject, issuer or later token', async () => {
    const { instances } = await fleet();
    const [a] = instances;
    const alice = token({ sub: 'alice' });
    const bob = token({ sub: 'bob' });
    for (const t of [alice, bob]) expect(await statuses(instances, t)).toEqual([200, 200, 200]);

    await a.call('revokeSubject', { target: { iss: ISSUER, sub: 'alice' } });
    await refusedEverywhere(instances, alice, 'the subject rule to reach every instance');
    expect(await statuses(instances, bob)).toEqual([200, 200, 200]);
    // Her next token, issued after the rule, passes everywhere.
    expect(await statuses(instances, token({ sub: 'alice' }, -2))).toEqual([200, 200, 200]);
    // The same sub at another issuer is another user (refused here only for its issuer, never by the rule).
    await a.call('revokeSubject', { target: { iss: 'https://elsewhere.example', sub: 'bob' } });
    expect(await statuses(instances, bob)).toEqual([200, 200, 200]);
    expect(await a.call('stats')).toMatchObject({ revocation: { loaded: true, rules: 2 } });
  });

  it("refuses on all three a session revoked on one: its sid, and with sub the user's tokens without sid", async () => {
    const { instances } = await fleet();
    const [, b] = instances;
    const inSession = token({ sub: 'alice', sid: 'session-1' });
    const otherSession = token({ sub: 'alice', sid: 'session-2' });
    const withoutSid = token({ sub: 'alice' });
    for (const t of [inSession, otherSession, withoutSid])
      expect(await statuses(instances, t)).toEqual([200, 200, 200]);

    await b.call('revokeSession', { target: { iss: ISSUER, sid: 'session-1' } });
    await refusedEverywhere(instances, inSession, 'the session rule to reach every instance');
    expect(await statuses(instances, otherSession)).toEqual([200, 200, 200]);
    expect(await statuses(instances, withoutSid)).toEqual([200, 200, 200]); // no sub given: sid-less tokens pass

    await b.call('revokeSession', { target: { iss: ISSUER, sid: 'session-1', sub: 'alice' } });
    await refusedEverywhere(instances, withoutSid, 'the session rule with sub to reach every instance');
    expect(await statuses(instances, otherSession)).toEqual([200, 200, 200]);
    expect(await statuses(instances, token({ sub: 'bob' }))).toEqual([200, 200, 200]);
  });

  it('loads the rules in an instance started afterwards, and again in every instance at a reconnect', async () => {
    const { prefix, instances } = await fleet();
    const [a] = instances;
    const early = token({ sub: 'carol' });
    await a.call('revokeSubject', { target: { iss: ISSUER, sub: 'carol' } });
    const late = await startInstance(config(prefix, 4));
    await loaded(late);
    expect((await late.get(early)).status).toBe(401);

    // A rule in Redis that no message announced (as one published while an instance was disconnected).
    const unannounced = token({ sub: 'dave', sid: 'session-9' });
    const rules = `${prefix}rules:{${prefix}rules}`;
    await admin.zadd(rules, String(Math.floor(Date.now() / 1000)), JSON.stringify(['x', ISSUER, 'session-9']));
    const all = [...instances, late];
    expect(await statuses(all, unannounced)).toEqual([200, 200, 200, 200]);
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await refusedEverywhere(all, unannounced, 'every instance to reload at its reconnect');
  });

  it('answers a full store with revocation-store-full and keeps refusing what it holds', async () => {
    const prefix = `rules${randomUUID().slice(0, 8)}:`;
    const [a, b] = await Promise.all([startInstance(config(prefix, 5)), startInstance(config(prefix, 4))]);
    await Promise.all([a, b].map(loaded));
    // Fill the rules to the default bound straight in Redis (100 000 entries), then ask for one more.
    const rules = `${prefix}rules:{${prefix}rules}`;
    const at = String(Math.floor(Date.now() / 1000));
    for (let batch = 0; batch < 100; batch++) {
      const args: string[] = [];
      for (let i = 0; i < 1000; i++) args.push(at, JSON.stringify(['s', ISSUER, `user-${batch}-${i}`]));
      await admin.zadd(rules, ...args);
    }
    await expect(a.call('revokeSubject', { target: { iss: ISSUER, sub: 'erin' } })).rejects.toThrow(
      'revocation-store-full',
    );
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'); // the instances reload what Redis holds
    await refusedEverywhere([a, b], token({ sub: 'user-99-999' }), 'the rules held to be refused');
    expect(await statuses([a, b], token({ sub: 'erin' }))).toEqual([200, 200]);
  });
});
