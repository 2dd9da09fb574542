/**
 * Security events in a fleet: three app processes on one real redis-server, behind one load balancer. By push, the
 * stream is created once, verified once (every instance's ready() resolves), and a SET any one instance receives is
 * refused by all three; by poll, exactly one instance polls, and when it dies another takes its lease over.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server';
import {
  startBalancer,
  startEventsInstance,
  killAllEventsInstances,
  type EventsInstance,
} from '../fixtures/events-fleet';
import { until, type LoopbackServer } from '../fixtures/loopback-server';
import { keycloakSubjects, RISC, CAEP, startSsfTransmitter, type SsfTransmitter } from '../fixtures/ssf-transmitter';

jest.setTimeout(120_000);

const SECRET = 'fleet-events-secret-that-is-long-enough-for-hs256';
const AUDIENCE = 'https://api.example.test';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
/** An access token of the realm (the transmitter's issuer issues the users' tokens too, as Keycloak does). */
function accessToken(iss: string, sub: string, extra: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iss, sub, aud: 'api', iat: now, exp: now + 600, ...extra })}`;
  return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
}
const statuses = (instances: EventsInstance[], token: string) => Promise.all(instances.map((i) => i.status(token)));
/** What every instance of a fleet is told: its Redis, the realm's tokens, the transmitter and its client. */
const fleetConfig = (transmitter: SsfTransmitter, delivery: 'push' | 'poll') => ({
  redisUrl: redis.url,
  prefix: `${delivery}${randomUUID().slice(0, 6)}:`,
  secret: SECRET,
  tokenIssuer: transmitter.issuer,
  transmitter: {
    issuer: transmitter.issuer,
    audience: AUDIENCE,
    clientId: transmitter.clientId,
    clientSecret: transmitter.clientSecret,
  },
  delivery,
});

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await killAllEventsInstances();
  await redis.close();
});

describe('a pushing transmitter and three instances behind a load balancer', () => {
  let transmitter: SsfTransmitter;
  let balancer: LoopbackServer;
  const instances: EventsInstance[] = [];

  beforeAll(async () => {
    transmitter = await startSsfTransmitter();
    balancer = await startBalancer(() => instances.map((instance) => `${instance.origin}/`));
    const config = {
      ...fleetConfig(transmitter, 'push'),
      authorization: `Bearer ${randomUUID()}`,
      publicUrl: `${balancer.origin}/security-events`,
    };
    instances.push(...(await Promise.all([1, 2, 3].map(() => startEventsInstance(config)))));
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await balancer.close();
    await transmitter.close();
  });

  it('creates and verifies the stream once: every instance is ready', async () => {
    expect(await Promise.all(instances.map((instance) => instance.ready))).toEqual([undefined, undefined, undefined]);
    const created = transmitter.server.seen.filter(
      (seen) => seen.method === 'POST' && seen.url?.endsWith('/ssf/transmitter/streams'),
    );
    const verifications = transmitter.server.seen.filter((seen) => seen.url?.endsWith('/ssf/transmitter/verify'));
    expect([created.length, verifications.length]).toEqual([1, 1]);
  });

  it("refuses a disabled account's tokens on all three instances once one instance stored the rule", async () => {
    const token = accessToken(transmitter.issuer, 'alice');
    expect(await statuses(instances, token)).toEqual([200, 200, 200]);
    const answer = await transmitter.deliver(
      transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, 'alice')),
    );
    expect(answer?.status).toBe(202);
    await until(
      async () => (await statuses(instances, token)).every((status) => status === 401),
      'all three refusing',
      500,
    );
    // Tokens issued after the event are the user's again (an account enabled, a new login).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await statuses(instances, accessToken(transmitter.issuer, 'alice'))).toEqual([200, 200, 200]);
  });

  it("refuses one session's tokens everywhere, and leaves the user's other session alone", async () => {
    const ended = accessToken(transmitter.issuer, 'bob', { sid: 'session-1' });
    const other = accessToken(transmitter.issuer, 'bob', { sid: 'session-2' });
    const set = transmitter.set(
      `${CAEP}session-revoked`,
      keycloakSubjects.session(transmitter.issuer, 'bob', 'session-1'),
      {
        reason_admin: { en: 'User logout' },
      },
    );
    expect((await transmitter.deliver(set))?.status).toBe(202);
    await until(
      async () => (await statuses(instances, ended)).every((status) => status === 401),
      'all three refusing',
      500,
    );
    expect(await statuses(instances, other)).toEqual([200, 200, 200]);
  });
});

describe('a polled transmitter and three instances: one poller, taken over when it dies', () => {
  let transmitter: SsfTransmitter;
  const instances: EventsInstance[] = [];

  beforeAll(async () => {
    transmitter = await startSsfTransmitter();
    const config = { ...fleetConfig(transmitter, 'poll'), pollInterval: 0.05 };
    instances.push(...(await Promise.all([1, 2, 3].map(() => startEventsInstance(config)))));
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await transmitter.close();
  });

  /** The Bearer tokens poll requests carried since `from`: one per instance that polled. */
  const pollers = (from = 0) =>
    new Set(
      transmitter.server.seen
        .slice(from)
        .filter((seen) => seen.url?.endsWith('/poll'))
        .map((seen) => seen.headers.authorization),
    );

  it('polls from exactly one instance, and every instance is ready', async () => {
    expect(await Promise.all(instances.map((instance) => instance.ready))).toEqual([undefined, undefined, undefined]);
    const from = transmitter.server.seen.length;
    await until(
      () => transmitter.server.seen.slice(from).filter((seen) => seen.url?.endsWith('/poll')).length >= 10,
      'ten polls',
    );
    expect(pollers(from).size).toBe(1);
  });

  it('goes on polling from another instance when the poller dies, and every survivor refuses what it polled', async () => {
    const stats = await Promise.all(
      instances.map((instance) => instance.stats<{ transmitters: Array<{ poll?: { polling: boolean } }> }>()),
    );
    const holder = stats.findIndex((s) => s.transmitters[0].poll?.polling === true);
    expect(holder).toBeGreaterThanOrEqual(0);
    await instances[holder].kill();
    const survivors = instances.filter((_instance, index) => index !== holder);
    const token = accessToken(transmitter.issuer, 'carol');
    expect(await statuses(survivors, token)).toEqual([200, 200]);
    const from = transmitter.server.seen.length;
    await transmitter.deliver(
      transmitter.set(`${RISC}credential-compromise`, keycloakSubjects.user(transmitter.issuer, 'carol')),
    );
    // The lease lasts 15 s without renewal: a survivor takes it within that, then polls the SET.
    await until(
      async () => (await statuses(survivors, token)).every((status) => status === 401),
      'the survivors refusing',
      3000,
    );
    expect(pollers(from).size).toBe(1);
  });
});
