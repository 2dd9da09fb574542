import { randomUUID } from 'node:crypto';
import { AUDIENCE, ISSUER } from '../fixtures/issuer';
import { startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { createIdentityService } from '../fixtures/identity-service';
import {
  figures,
  startInstance,
  stopAllInstances,
  within,
  type Instance,
  type InstanceConfig,
} from '../fixtures/fleet';
import { startRedisSentinel, type RedisSentinelSetup } from '../fixtures/redis-topologies';

// The Redis store behind Sentinel (Debian's redis-sentinel: a master, a replica, three sentinels on loopback),
// with the master killed under traffic. Three processes: two on ioredis's Sentinel support, one on node-redis
// `createSentinel`. What the store promised on one Redis holds before, during and after the failover.
jest.setTimeout(60_000);

let sentinel: RedisSentinelSetup;
let upstream: LoopbackServer;
let config: InstanceConfig;
let instances: Instance[];
const { issued, issue, verify: identityService } = createIdentityService({ delayMs: 100 });

type Stats = { revocation: { loaded: boolean; available: boolean } };
const allStats = (fleet: Instance[]) => Promise.all(fleet.map((i) => i.call<Stats>('stats')));

/** Revoke through an instance, asking again while its client is still finding the new master (bounded). */
async function revoke(instance: Instance, token: string): Promise<void> {
  const claims = issued.get(token)!;
  for (let attempt = 0; ; attempt++) {
    try {
      await instance.call('revoke', { jti: claims.jti, exp: claims.exp });
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

const everywhere = async (fleet: Instance[], token: string, status: number) =>
  (await Promise.all(fleet.map((i) => i.get(token)))).every((a) => a.status === status);

beforeAll(async () => {
  [sentinel, upstream] = await Promise.all([startRedisSentinel(), startLoopbackServer(identityService)]);
  config = {
    sentinel: { sentinels: sentinel.sentinels, name: sentinel.name },
    client: 'ioredis',
    key: { upstream: upstream.origin, timeout: '1s' },
    issuer: ISSUER,
    audience: AUDIENCE,
    revocation: true,
    shared: true,
    prefix: `sentinel-${randomUUID().slice(0, 8)}:`,
  };
  instances = await Promise.all(
    [config, { ...config, express: 4 as const }, { ...config, client: 'redis' as const }].map((c) => startInstance(c)),
  );
  await within(
    10_000,
    async () => (await allStats(instances)).every((s) => s.revocation.loaded),
    'every revocation list loaded',
  );
});

afterAll(async () => {
  await stopAllInstances();
  await upstream?.close();
  await sentinel?.close();
});

/**
 * `SENTINEL FAILOVER` under traffic, while the old master still runs: a good and a revoked token asked on every
 * instance, revocations and DPoP claims made throughout. Each revocation and claim remembers the phase it started and
 * ended in. Afterwards, every proof id claimed is claimed again through another instance.
 */
async function forcedFailover() {
  const good = issue();
  const revokedBefore = issue();
  await revoke(instances[0], revokedBefore);
  await within(1000, () => everywhere(instances, revokedBefore, 401), 'the revocation on every instance');
  await within(5000, () => sentinel.replicated(), 'the replica in sync');
  let phase: 'before' | 'during' | 'after' = 'before';
  const answers: Array<{ token: 'good' | 'revoked'; status: number }> = [];
  const acknowledged: Array<{ token: string; from: string; to: string }> = [];
  const claimed: Array<{ id: string; by: number; from: string; to: string }> = [];
  let running = true;
  const traffic = instances.map(async (instance, by) => {
    for (let i = 0; i < 1000 && running; i++) {
      answers.push({ token: 'good', status: (await instance.get(good)).status });
      answers.push({ token: 'revoked', status: (await instance.get(revokedBefore)).status });
      if (i % 3 === 0) {
        const token = issue();
        const { jti, exp } = issued.get(token)!;
        const from = phase;
        await instance.call('revoke', { jti, exp }).then(
          () => acknowledged.push({ token, from, to: phase }),
          () => undefined, // not acknowledged: the caller would retry (revoke() is idempotent)
        );
      }
      const id = randomUUID();
      const from = phase;
      if (await instance.call<boolean>('claim', { claimId: id, expiresAt: Date.now() / 1000 + 600 }).catch(() => false))
        claimed.push({ id, by, from, to: phase });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  phase = 'during';
  const { promotedMs, followingMs } = await sentinel.forceFailover();
  phase = 'after';
  await new Promise((resolve) => setTimeout(resolve, 1000));
  running = false;
  await Promise.all(traffic);
  const replays = await Promise.all(
    claimed.map(async (c) => ({
      ...c,
      again: await instances[(c.by + 1) % 3].call<boolean>('claim', {
        claimId: c.id,
        expiresAt: Date.now() / 1000 + 600,
      }),
    })),
  );
  await within(
    20_000,
    async () => (await allStats(instances)).every((s) => s.revocation.available),
    'every list available on the new master',
  );
  // Each token costs one upstream call (100 ms) before its revocation is looked up: 20 at a time, on every
  // instance and on one started now, which loads the list from the new master.
  const late = await startInstance({ ...config, client: 'redis' });
  await within(10_000, async () => (await late.call<Stats>('stats')).revocation.loaded, 'the late list loaded');
  const accepted: string[] = [];
  for (let i = 0; i < acknowledged.length; i += 20) {
    await Promise.all(
      acknowledged.slice(i, i + 20).map(async ({ token }) => {
        const statuses = await Promise.all([...instances, late].map(async (n) => (await n.get(token)).status));
        if (statuses.some((status) => status !== 401)) accepted.push(`${issued.get(token)!.jti}: ${statuses.join()}`);
      }),
    );
  }
  await late.stop();
  const writtenBack = instances
    .flatMap((i) => i.reports.splice(0))
    .filter((r) => r.reason === 'revocation-set-missing');
  return {
    answers,
    acknowledged,
    claimed,
    replays,
    accepted,
    measured: {
      promotedMs,
      followingMs,
      answers: answers.length,
      answers503: answers.filter((a) => a.status === 503).length,
      revocations: acknowledged.length,
      writtenBack: writtenBack.map((r) => r.hint),
      claims: claimed.length,
      claimsBeforeOrAfter: claimed.filter((c) => c.from === c.to && c.from !== 'during').length,
      replaysAccepted: replays.filter((r) => r.again).length,
    },
  };
}

describe('a forced failover (SENTINEL FAILOVER) while the old master still runs', () => {
  it('never answers wrong; every acknowledged revocation reaches every instance and one started after (written back); a proof claimed wholly before or after it is claimed once', async () => {
    const run = await forcedFailover();
    expect(run.answers.filter((a) => a.token === 'good' && a.status === 401)).toEqual([]);
    expect(run.answers.filter((a) => a.token === 'revoked' && a.status === 200)).toEqual([]);
    expect(run.accepted).toEqual([]);
    expect(run.replays.filter((r) => r.again && r.from === r.to && r.from !== 'during')).toEqual([]);
    // Proof ids claimed on the old master after the switch are lost with its data: measured, see docs/fleet.md.
    figures('sentinel forced failover', run.measured);
  }, 120_000);

  it('with min-replicas-to-write 1, the old master refuses writes once its replica is promoted: no proof id is lost', async () => {
    sentinel.configure('min-replicas-to-write', '1');
    sentinel.configure('min-replicas-max-lag', '10');
    try {
      const run = await forcedFailover();
      expect(run.answers.filter((a) => a.token === 'good' && a.status === 401)).toEqual([]);
      expect(run.answers.filter((a) => a.token === 'revoked' && a.status === 200)).toEqual([]);
      expect(run.accepted).toEqual([]);
      expect(run.replays.filter((r) => r.again)).toEqual([]);
      figures('sentinel forced failover, min-replicas-to-write 1', run.measured);
    } finally {
      sentinel.configure('min-replicas-to-write', '0');
    }
  }, 120_000);
});

describe('the Redis store behind Sentinel, through a failover under traffic', () => {
  const before = { revoked: '', good: '' };

  it('shares verdicts and revocations before the failover', async () => {
    before.good = issue();
    before.revoked = issue();
    upstream.reset();
    const burst = await Promise.all(instances.map((i) => i.get(before.revoked)));
    expect(burst.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(upstream.requests).toBe(1);
    for (const instance of instances) expect((await instance.get(before.good)).status).toBe(200);
    await revoke(instances[2], before.revoked);
    await within(1000, () => everywhere(instances, before.revoked, 401), 'the revocation on every instance');
    // Replication is asynchronous: the test waits until the replica holds it, as an operator would before a switch.
    await within(5000, () => sentinel.replicated(), 'the replica in sync');
  });

  it('never answers wrong while the master is killed and a replica promoted', async () => {
    const answers: Array<{ token: 'good' | 'revoked'; status: number }> = [];
    let running = true;
    const traffic = instances.map(async (instance) => {
      for (let i = 0; i < 2000 && running; i++) {
        for (const token of ['good', 'revoked'] as const) {
          const answer = await instance.get(before[token]);
          answers.push({ token, status: answer.status });
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const oldMaster = sentinel.masterPort();
    const newMaster = await sentinel.killMaster();
    expect(newMaster).not.toBe(oldMaster);
    // Every instance back on the new master: its subscriber reconnected and its list reloaded.
    await within(
      20_000,
      async () => (await allStats(instances)).every((s) => s.revocation.available),
      'every instance back on the new master',
    );
    running = false;
    await Promise.all(traffic);
    expect(answers.length).toBeGreaterThan(30);
    // Served from each instance's cache and revocation list throughout: nothing wrong, nothing unavailable.
    expect(answers.filter((a) => a.token === 'good' && a.status !== 200)).toEqual([]);
    expect(answers.filter((a) => a.token === 'revoked' && a.status !== 401)).toEqual([]);
  });

  it('keeps its promises after the failover: revocation within 1 s, one proof once, one call per burst', async () => {
    const token = issue();
    upstream.reset();
    const burst = await Promise.all(instances.map((i) => i.get(token)));
    expect(burst.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(upstream.requests).toBe(1);

    await revoke(instances[0], token);
    await within(1000, () => everywhere(instances, token, 401), 'the new revocation on every instance');

    for (let round = 0; round < 5; round++) {
      const id = randomUUID();
      const claims = await Promise.all(
        instances.map((i) => i.call<boolean>('claim', { claimId: id, expiresAt: Date.now() / 1000 + 60 })),
      );
      expect(claims.filter((c) => c === true)).toHaveLength(1);
    }

    // A process started now loads the list from the new master: the revocation made before the failover is there.
    const late = await startInstance({ ...config, client: 'redis' });
    await within(
      10_000,
      async () => (await late.call<Stats>('stats')).revocation.loaded,
      'the late instance loaded its list',
    );
    expect((await late.get(before.revoked)).status).toBe(401);
    expect((await late.get(before.good)).status).toBe(200);
  });
});
