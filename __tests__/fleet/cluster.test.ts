import { randomBytes, randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';
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
import { startRedisCluster, type RedisClusterSetup } from '../fixtures/redis-topologies';
import { createRedisStore, type RedisClientLike, type RedisStore } from '../../lib/redis';

// The Redis store on a real Redis Cluster (three masters on loopback, `redis-cli --cluster create`), through
// node-redis `createCluster` and ioredis `Cluster`: keys used together share a slot, a revocation published on one
// node reaches subscribers on every node, and a fleet of three processes keeps what the store promised on one Redis.
jest.setTimeout(60_000);

let cluster: RedisClusterSetup;
let upstream: LoopbackServer;
const { issued, issue, verify: identityService } = createIdentityService({ delayMs: 100 });
const cleanups: Array<() => unknown> = [];

/** An app's cluster client of either kind, connected, closed after the file. */
async function clusterClient(kind: 'redis' | 'ioredis'): Promise<RedisClientLike> {
  if (kind === 'ioredis') {
    const client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    client.on('error', () => undefined);
    cleanups.push(() => client.disconnect());
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('end', () => reject(new Error('cluster client ended')));
    });
    return client;
  }
  const client = createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) });
  client.on('error', () => undefined);
  cleanups.push(() => client.destroy());
  await client.connect();
  return client;
}

async function store(kind: 'redis' | 'ioredis', prefix = `c${randomUUID().slice(0, 8)}:`): Promise<RedisStore> {
  const made = createRedisStore(await clusterClient(kind), { prefix, timeout: '1s' });
  cleanups.push(() => made.close());
  return made;
}

beforeAll(async () => {
  cluster = await startRedisCluster();
  upstream = await startLoopbackServer(identityService);
});

afterAll(async () => {
  await stopAllInstances();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await upstream?.close();
  await cluster?.close();
});

describe('key names on a Redis Cluster', () => {
  it("puts a token's verdict and its lock in one slot, whatever the prefix", async () => {
    for (const prefix of ['evu:', '{tenant-a}:', 'a{b:', 'x}y{:', 'plain']) {
      for (const kind of ['redis', 'ioredis'] as const) {
        const s = await store(kind, prefix);
        const key = randomBytes(32).toString('hex');
        // Two keys in one script: CROSSSLOT unless they hash to the same slot.
        await expect(s.claimVerdict(key, 'owner', 5)).resolves.toEqual({ state: 'mine' });
        await s.releaseVerdict(key, 'owner', { value: 'v', ttl: 5 });
        await expect(s.claimVerdict(key, 'owner', 5)).resolves.toEqual({ state: 'verdict', value: 'v' });
      }
    }
    // The slots themselves, as the cluster computes them: per token, not one slot for every verdict.
    const slots = new Set(
      Array.from({ length: 8 }, () => cluster.keyslot(`evu:verdict:{${randomBytes(32).toString('hex')}}`)),
    );
    expect(slots.size).toBeGreaterThan(1);
  });

  it('refuses a prefix whose first hash tag is empty, which would part a verdict from its lock', async () => {
    const client = await clusterClient('ioredis');
    expect(() => createRedisStore(client, { prefix: 'a{}b:' })).toThrow(TypeError);
    expect(() => createRedisStore(client, { prefix: 'a{}b:' })).toThrow(/prefix/);
  });
});

describe.each(['redis', 'ioredis'] as const)('the Redis store on a Redis Cluster through %s', (kind) => {
  it('claims a DPoP proof id once and shares verdicts', async () => {
    const s = await store(kind);
    for (let i = 0; i < 5; i++) {
      const id = randomUUID();
      await expect(s.claimOnce(id, Date.now() / 1000 + 60)).resolves.toBe(true);
      await expect(s.claimOnce(id, Date.now() / 1000 + 60)).resolves.toBe(false);
      const key = randomBytes(32).toString('hex');
      await s.setVerdict(key, `verdict ${i}`, 5);
      await expect(s.getVerdict(key)).resolves.toBe(`verdict ${i}`);
    }
  });

  it('brings a revocation published on one node to a subscriber on every node', async () => {
    const prefix = `r${randomUUID().slice(0, 8)}:`;
    // One plain subscriber on each master: classic pub/sub of a cluster reaches every node.
    const heard = cluster.ports.map(() => [] as string[]);
    const subscribers = cluster.ports.map((port, i) => {
      const sub = new Redis(port, '127.0.0.1');
      sub.on('error', () => undefined);
      sub.on('message', (_channel: string, message: string) => heard[i].push(message));
      cleanups.push(() => sub.disconnect());
      return sub;
    });
    await Promise.all(subscribers.map((sub) => sub.subscribe(`${prefix}revoked`)));
    const s = await store(kind, prefix);
    const list = s.follow(() => undefined);
    await within(5000, () => list.stats().loaded, 'the list loaded');
    const exp = Math.floor(Date.now() / 1000) + 600;
    await s.revoke('jti-1', exp);
    await within(1000, () => heard.every((messages) => messages.length === 1), 'the revocation on every node');
    for (const messages of heard) expect(JSON.parse(messages[0])).toEqual(['jti-1', exp]);
    expect(list.isRevoked('jti-1', Date.now() / 1000)).toBe(true);
  });
});

describe('a fleet of three processes on a Redis Cluster', () => {
  let instances: Instance[];
  let config: InstanceConfig;
  beforeAll(async () => {
    config = {
      cluster: cluster.nodes,
      client: 'redis',
      key: { upstream: upstream.origin, timeout: '1s' },
      issuer: ISSUER,
      audience: AUDIENCE,
      revocation: true,
      shared: true,
      prefix: `fleet-${randomUUID().slice(0, 8)}:`,
    };
    instances = await Promise.all(
      [config, { ...config, client: 'ioredis' as const, express: 4 as const }, config].map((c) => startInstance(c)),
    );
    await within(
      10_000,
      async () => {
        const stats = await Promise.all(instances.map((i) => i.call<{ revocation: { loaded: boolean } }>('stats')));
        return stats.every((s) => s.revocation.loaded);
      },
      'every instance loaded its revocation list',
    );
  });

  it('costs one upstream call when one new token reaches all three at once', async () => {
    for (let round = 0; round < 3; round++) {
      upstream.reset();
      const token = issue();
      const answers = await Promise.all(instances.map((i) => i.get(token)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(upstream.requests).toBe(1);
    }
  });

  it('refuses a token revoked on one instance on every instance within 1 s', async () => {
    const token = issue();
    for (const instance of instances) expect((await instance.get(token)).status).toBe(200);
    const claims = issued.get(token)!;
    await instances[1].call('revoke', { jti: claims.jti, exp: claims.exp });
    await within(
      1000,
      async () => (await Promise.all(instances.map((i) => i.get(token)))).every((a) => a.status === 401),
      'the revocation on every instance',
    );
  });

  it('keeps its promises through a CLUSTER FAILOVER of the nodes holding the list and the proof ids, under traffic', async () => {
    const good = issue();
    const revokedBefore = issue();
    const before = issued.get(revokedBefore)!;
    await instances[0].call('revoke', { jti: before.jti, exp: before.exp });
    await within(
      1000,
      async () => (await Promise.all(instances.map((i) => i.get(revokedBefore)))).every((a) => a.status === 401),
      'the revocation on every instance',
    );
    const answers: Array<{ token: 'good' | 'revoked'; status: number }> = [];
    const acknowledged: string[] = [];
    const claimed: Array<{ id: string; by: number }> = [];
    let running = true;
    const traffic = instances.map(async (instance, by) => {
      for (let i = 0; i < 1000 && running; i++) {
        answers.push({ token: 'good', status: (await instance.get(good)).status });
        answers.push({ token: 'revoked', status: (await instance.get(revokedBefore)).status });
        if (i % 3 === 0) {
          const token = issue();
          const { jti, exp } = issued.get(token)!;
          await instance.call('revoke', { jti, exp }).then(
            () => acknowledged.push(token),
            () => undefined,
          );
        }
        const id = randomUUID();
        if (
          await instance.call<boolean>('claim', { claimId: id, expiresAt: Date.now() / 1000 + 600 }).catch(() => false)
        )
          claimed.push({ id, by });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    const prefix = config.prefix!;
    let list: { old: number; ms: number };
    let proofs: { old: number; ms: number };
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      list = await cluster.failover(`${prefix}revoked`);
      proofs = await cluster.failover(`${prefix}dpop:{${prefix}dpop}:count`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
      running = false;
      await Promise.all(traffic);
    }

    expect(answers.filter((a) => a.token === 'good' && a.status === 401)).toEqual([]);
    expect(answers.filter((a) => a.token === 'revoked' && a.status === 200)).toEqual([]);
    // One proof once: every id claimed, before, during or after, is refused through another instance.
    const again = await Promise.all(
      claimed.map((c) =>
        instances[(c.by + 1) % 3].call<boolean>('claim', { claimId: c.id, expiresAt: Date.now() / 1000 + 600 }),
      ),
    );
    expect(again.filter((a) => a)).toEqual([]);
    // Every acknowledged revocation is refused by every instance, and by one started now.
    const late = await startInstance({ ...config, client: 'ioredis' });
    await within(
      10_000,
      async () => (await late.call<{ revocation: { loaded: boolean } }>('stats')).revocation.loaded,
      'the late list loaded',
    );
    const accepted: string[] = [];
    for (let i = 0; i < acknowledged.length; i += 20) {
      await Promise.all(
        acknowledged.slice(i, i + 20).map(async (token) => {
          const statuses = await Promise.all([...instances, late].map(async (n) => (await n.get(token)).status));
          if (statuses.some((status) => status !== 401)) accepted.push(`${issued.get(token)!.jti}: ${statuses.join()}`);
        }),
      );
    }
    await late.stop();
    expect(accepted).toEqual([]);
    // A revocation after the failover reaches all three within 1 s.
    const after = issue();
    for (const instance of instances) expect((await instance.get(after)).status).toBe(200);
    const claims = issued.get(after)!;
    await instances[2].call('revoke', { jti: claims.jti, exp: claims.exp });
    const reached = await within(
      1000,
      async () => (await Promise.all(instances.map((i) => i.get(after)))).every((a) => a.status === 401),
      'the revocation on every instance',
    );
    figures('cluster manual failover', {
      listFailoverMs: list.ms,
      proofsFailoverMs: proofs.ms,
      sameNode: list.old === proofs.old,
      answers: answers.length,
      answers503: answers.filter((a) => a.status === 503).length,
      revocations: acknowledged.length,
      claims: claimed.length,
      revocationAfterMs: reached,
    });
  }, 120_000);

  it('lets exactly one of the three claim one DPoP proof id', async () => {
    for (let round = 0; round < 5; round++) {
      const id = randomUUID();
      const answers = await Promise.all(
        instances.map((i) => i.call<boolean>('claim', { claimId: id, expiresAt: Date.now() / 1000 + 60 })),
      );
      expect(answers.filter((a) => a === true)).toHaveLength(1);
    }
  });
});
