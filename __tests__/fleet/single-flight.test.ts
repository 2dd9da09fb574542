import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AUDIENCE, ISSUER } from '../fixtures/issuer';
import { json } from '../fixtures/loopback-server';
import { createIdentityService } from '../fixtures/identity-service';
import { startInstance, within, type Instance, type InstanceConfig } from '../fixtures/fleet';
import { useFleetServers } from '../fixtures/fleet-servers';

// Fleet single flight: three instances as separate processes on one real redis-server, in front of a real
// loopback upstream that counts its calls. A burst of one new token across the fleet costs one call; a holder
// that dies costs one lock lifetime; an outage is never handed to the others.
jest.setTimeout(60_000);

/** How the upstream answers its next calls, in order (then: normally, after `delayMs`). */
let script: Array<'hang' | 'fail'> = [];
// Slow enough that every instance of a burst asks while the first call is still out.
let delayMs = 150;
const service = createIdentityService({ delayMs: () => delayMs });
const { issued, issue } = service;
const servers = useFleetServers(service, identityService);

function identityService(req: IncomingMessage, res: ServerResponse): void {
  const step = script.shift();
  if (step === 'hang') return; // never answers: the caller's timeout (or its death) ends it
  if (step === 'fail') {
    json(res, 503, { status: 'error', message: 'down' });
    return;
  }
  service.verify(req, res);
}

/** Three instances (node-redis on Express 5, ioredis on Express 4, node-redis), one prefix, the upstream timeout 1 s. */
async function fleet(): Promise<Instance[]> {
  const config: InstanceConfig = {
    redisUrl: servers.redis.url,
    client: 'redis',
    key: { upstream: servers.upstream.origin, timeout: '1s', breaker: false },
    issuer: ISSUER,
    audience: AUDIENCE,
    revocation: false,
    shared: true,
    prefix: `flight-${randomUUID().slice(0, 8)}:`,
  };
  const instances = await Promise.all(
    [config, { ...config, express: 4 as const, client: 'ioredis' as const }, config].map((c) => startInstance(c)),
  );
  // Until its client has connected, an instance skips the shared store: wait for every connection.
  await Promise.all(
    instances.map((i) => i.call('claim', { claimId: randomUUID(), expiresAt: Date.now() / 1000 + 60 })),
  );
  return instances;
}

beforeEach(() => {
  script = [];
  delayMs = 150;
});

describe('fleet single flight (cache.shared on the Redis store)', () => {
  // One fleet for the three tests (each token is new); the test that kills an instance runs last.
  let instances: Instance[];
  beforeAll(async () => {
    instances = await fleet();
  });

  it('costs exactly one upstream call when one new token reaches three processes at once', async () => {
    for (let round = 0; round < 3; round++) {
      servers.upstream.reset();
      const token = issue();
      const answers = await Promise.all(instances.map((instance) => instance.get(token)));
      for (const answer of answers)
        expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
          status: 200,
          body: { jti: issued.get(token)!.jti },
        });
      expect(servers.upstream.requests).toBe(1);
    }
    // An unknown token too: one call, and every instance answers the upstream's 401.
    servers.upstream.reset();
    const unknown = `${randomBytes(24).toString('base64url')}~never-issued`;
    const refused = await Promise.all(instances.map((instance) => instance.get(unknown)));
    expect(refused.map((a) => a.status)).toEqual([401, 401, 401]);
    expect(servers.upstream.requests).toBe(1);
    const stats = await Promise.all(
      instances.map((instance) =>
        instance.call<{ flight: { shared: number; holding: number; waiting: number } }>('stats'),
      ),
    );
    expect(stats.reduce((sum, s) => sum + s.flight.shared, 0)).toBeGreaterThanOrEqual(2);
    for (const s of stats) expect(s.flight).toMatchObject({ holding: 0, waiting: 0 });
  });

  it('never shares an outage: the holder answers 503, the others ask again and answer 200', async () => {
    const [a, b, c] = instances;
    const token = issue();
    script = ['fail'];
    delayMs = 300;
    // The holder's call fails at once; the others arrive while it holds the lock.
    const first = a.get(token);
    await within(5000, () => servers.upstream.requests === 1, 'the holder asking the upstream');
    const [held, ...others] = await Promise.all([first, b.get(token), c.get(token)]);
    expect(held.status).toBe(503);
    expect(others.map((o) => o.status)).toEqual([200, 200]);
    // The failure was not stored: one more call (by the next lock holder) made the verdict the third one read.
    expect(servers.upstream.requests).toBe(2);
    // And the instance that saw the outage finds the verdict now, with no call of its own.
    expect((await a.get(token)).status).toBe(200);
    expect(servers.upstream.requests).toBe(2);
  });

  it('answers right after at most one lock lifetime when the lock holder is killed mid-call', async () => {
    const [a, b, c] = instances;
    const token = issue();
    script = ['hang'];
    const holder = a.get(token).catch(() => undefined);
    await within(5000, () => servers.upstream.requests === 1, 'the holder asking the upstream');
    const started = Date.now();
    const waiting = Promise.all([b.get(token), c.get(token)]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await a.kill();
    await holder;
    const answers = await waiting;
    for (const answer of answers)
      expect({ status: answer.status, body: JSON.parse(answer.body) }).toEqual({
        status: 200,
        body: { jti: issued.get(token)!.jti },
      });
    // The dead holder's call, then exactly one more once its lock (timeout 1 s + 1 s) expired.
    expect(servers.upstream.requests).toBe(2);
    // Bounded by the lock's life (2 s), polling and one call; the request timeout (10 s) is far off.
    expect(Date.now() - started).toBeLessThan(8000);
  });
});
