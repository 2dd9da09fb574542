import { randomBytes, randomUUID } from 'node:crypto';
import { AUDIENCE, ISSUER, shapeB } from '../fixtures/issuer';
import { createDpopHolder, signToken } from '../../lib/testing';
import { createIdentityService } from '../fixtures/identity-service';
import { startInstance, stopAllInstances, type Instance, type InstanceConfig } from '../fixtures/fleet';
import { useFleetServers } from '../fixtures/fleet-servers';

// Three instances as separate Node processes on one real redis-server: DPoP single use at the store, and the
// upstream's verdicts shared so that a token costs one upstream call per fleet.
jest.setTimeout(60_000);

const service = createIdentityService();
const { issued, issue } = service;
const servers = useFleetServers(service);

const upstreamConfig = (express: 4 | 5, shared = true): InstanceConfig => ({
  redisUrl: servers.redis.url,
  client: express === 4 ? 'ioredis' : 'redis',
  key: { upstream: servers.upstream.origin },
  issuer: ISSUER,
  audience: AUDIENCE,
  revocation: false,
  shared,
  prefix: `shared-${randomUUID().slice(0, 8)}:`,
  express,
});

/** The same prefix for every instance of one fleet. */
async function fleet(shared = true): Promise<Instance[]> {
  const first = upstreamConfig(5, shared);
  const instances = await Promise.all(
    [first, { ...first, express: 4 as const, client: 'ioredis' as const }, first].map((c) => startInstance(c)),
  );
  // Until its client has connected, an instance skips the shared store (fail open): wait for every connection.
  await Promise.all(instances.map(connected));
  return instances;
}

/** A command answered means the instance's client is connected. */
function connected(instance: Instance): Promise<unknown> {
  return instance.call('claim', { claimId: randomUUID(), expiresAt: Date.now() / 1000 + 60 });
}

afterEach(async () => {
  await stopAllInstances();
  if (servers.redis !== undefined && !servers.redis.running) await servers.redis.start();
});

describe('DPoP single use across processes', () => {
  it('lets exactly one of three processes claim the same proof id at once', async () => {
    const config = { ...upstreamConfig(5, false), key: { secret: 'x'.repeat(40) } };
    const instances = await Promise.all([config, config, config].map((c) => startInstance(c)));
    // Wait until every instance's client is connected, so that the claims race on the server, not on start-up.
    await Promise.all(instances.map(connected));
    for (let round = 0; round < 5; round++) {
      const id = randomUUID();
      const expiresAt = Date.now() / 1000 + 60;
      const answers = await Promise.all(
        instances.map((instance) => instance.call<boolean>('claim', { claimId: id, expiresAt })),
      );
      expect(answers.filter((a) => a === true)).toHaveLength(1);
      expect(answers.filter((a) => a === false)).toHaveLength(2);
    }
  });

  it('answers exactly one 200 when one DPoP proof reaches three instances at once', async () => {
    const holder = createDpopHolder('ES256');
    const secret = 'x'.repeat(40);
    const config = { ...upstreamConfig(5, false), key: { secret }, dpop: true, trustProxy: true };
    const instances = await Promise.all(
      [config, { ...config, express: 4 as const, client: 'ioredis' as const }, config].map((c) => startInstance(c)),
    );
    await Promise.all(instances.map(connected));
    const token = signToken(shapeB(Math.floor(Date.now() / 1000), { cnf: { jkt: holder.jkt } }), secret, 'HS256');
    // The load balancer's public name, which every instance is told through X-Forwarded-* (trust proxy: loopback).
    const front = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.example.test' };
    for (let round = 0; round < 3; round++) {
      const proof = holder.proof({ method: 'GET', url: 'https://api.example.test/me', token });
      const headers = { ...front, Authorization: `DPoP ${token}`, DPoP: proof };
      const answers = await Promise.all(instances.map((instance) => instance.get(token, headers)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401]);
      for (const refused of answers.filter((a) => a.status === 401)) {
        expect(JSON.parse(refused.body)).toEqual({ status: 'error', message: 'Invalid DPoP proof' });
        expect(refused.headers['www-authenticate']).toContain('error="invalid_dpop_proof"');
      }
    }
  });

  it("refuses a replay at an instance 1.5 s behind (inside clockTolerance) after the first one's window has passed", async () => {
    // Each instance's clock is set, not read: what the test shows does not depend on how fast the machine runs.
    // Only Redis keeps real time, and the proof id must outlive iat + iatWindow by clockTolerance in it.
    const holder = createDpopHolder('ES256');
    const secret = 'x'.repeat(40);
    const config = {
      ...upstreamConfig(5, false),
      key: { secret },
      dpop: true,
      trustProxy: true,
      iatWindow: '1s',
      clockTolerance: 30,
      settableClock: true,
      reportAll: true,
    };
    const [ahead, behind] = await Promise.all([startInstance(config), startInstance(config)]);
    await Promise.all([ahead, behind].map(connected));
    // iat + iatWindow is already past in real time: an id kept only that long would be gone from Redis at once.
    const iat = Math.floor(Date.now() / 1000) - 2;
    const token = signToken(shapeB(iat, { cnf: { jkt: holder.jkt } }), secret, 'HS256');
    const front = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.example.test' };
    const send = (instance: Instance, proof: string) =>
      instance.get(token, { ...front, Authorization: `DPoP ${token}`, DPoP: proof });
    const proofAt = (at: number) =>
      holder.proof({ method: 'GET', url: 'https://api.example.test/me', token, claims: { iat: at } });
    await ahead.call('clock', { at: iat });
    // 1.5 s behind a clock that has passed iat + iatWindow (iat + 1.1): it still takes a proof made at iat.
    await behind.call('clock', { at: iat + 1.1 - 1.5 });
    expect((await send(behind, proofAt(iat))).status).toBe(200);

    const proof = proofAt(iat);
    expect((await send(ahead, proof)).status).toBe(200);
    const replay = await send(behind, proof);
    expect(replay.status).toBe(401);
    expect(JSON.parse(replay.body)).toEqual({ status: 'error', message: 'Invalid DPoP proof' });
    // Refused as a replay, not for its iat: the id was still held.
    expect(behind.reports.map(({ code, reason }) => ({ code, reason }))).toEqual([
      { code: 'invalid_dpop_proof', reason: 'dpop:replay' },
    ]);
  });

  it('throws when Redis is unreachable, so that the proof check can answer 503', async () => {
    const [a] = await Promise.all([startInstance({ ...upstreamConfig(4), storeTimeout: '300ms' })]);
    await connected(a);
    await servers.redis.stop();
    await expect(a.call('claim', { claimId: randomUUID(), expiresAt: Date.now() / 1000 + 60 })).rejects.toThrow();
  });
});

describe('shared upstream verdicts (cache.shared)', () => {
  it('costs one upstream call per token for a fleet of three', async () => {
    const instances = await fleet();
    const good = issue();
    for (const instance of instances) {
      const answer = await instance.get(good);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ jti: issued.get(good)!.jti });
    }
    expect(servers.upstream.requests).toBe(1);

    const unknown = `${randomBytes(24).toString('base64url')}~never-issued`;
    for (const instance of instances) {
      expect(await instance.get(unknown)).toMatchObject({
        status: 401,
        body: '{"status":"error","message":"Invalid access token"}',
      });
    }
    expect(servers.upstream.requests).toBe(2);
  });

  it("checks a shared verdict against each instance's own rules", async () => {
    const instances = await fleet();
    const wrongAudience = issue({ aud: 'other.example.com' });
    for (const instance of instances) expect((await instance.get(wrongAudience)).status).toBe(401);
    expect(servers.upstream.requests).toBe(1);
  });

  it('calls the upstream from every instance without sharing (the control)', async () => {
    const instances = await fleet(false);
    const good = issue();
    for (const instance of instances) expect((await instance.get(good)).status).toBe(200);
    expect(servers.upstream.requests).toBe(3);
  });

  it("falls back to each instance's own cache and the upstream while Redis is down, and still answers right", async () => {
    const instances = await fleet();
    const warm = issue();
    for (const instance of instances) expect((await instance.get(warm)).status).toBe(200);
    await servers.redis.stop();
    servers.upstream.reset();
    const good = issue();
    const unknown = `${randomBytes(24).toString('base64url')}~never-issued`;
    for (const instance of instances) {
      const started = Date.now();
      expect((await instance.get(good)).status).toBe(200);
      expect((await instance.get(unknown)).status).toBe(401);
      expect((await instance.get(warm)).status).toBe(200); // its own cache
      expect(Date.now() - started).toBeLessThan(5000);
    }
    expect(servers.upstream.requests).toBe(6);
  });
});
