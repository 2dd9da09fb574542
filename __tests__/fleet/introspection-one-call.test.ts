/**
 * One introspection call per new opaque token, per process and per fleet (docs/fleet.md), counted at a real
 * oidc-provider. Two client-credentials tokens of one client asked about within one second get the very same
 * RFC 9701 signed answer (no `jti` in it; RS256 is deterministic): the loopback proxy in front of the provider's
 * endpoint makes every signed answer the first one it forwarded, so that second is every test's, whatever the time.
 * A token whose answer repeats one believed about another token had cost a second call (asked again as plain JSON).
 * The fleet's instances are separate processes on one real redis-server.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createClient } from 'redis';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { createRedisStore } from '../../lib/redis';
import {
  introspectionsDuring,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../fixtures/authorization-server';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { startInstance, stopAllInstances, type Instance, type InstanceConfig } from '../fixtures/fleet';
import { forwardIntrospection, type Answer } from '../fixtures/introspection-proxy';
import { listen } from '../fixtures/listen';
import { startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server';

jest.setTimeout(120_000);

const JWT_TYPE = 'application/token-introspection+jwt';
let as: AuthorizationServer;
let redis: RedisServer;
let proxy: LoopbackServer;
/** The first signed answer the proxy forwarded since the test began: every later one is answered with it. */
let first: string | undefined;
const cleanups: Array<() => unknown> = [];

function sameSecond(answer: Answer): Answer {
  if (!answer.type.startsWith(JWT_TYPE)) return answer;
  first ??= answer.body;
  return { ...answer, body: first };
}

function forward(req: IncomingMessage, res: ServerResponse): void {
  forwardIntrospection(req, res, `${as.issuer}/token/introspection`, sameSecond);
}

beforeAll(async () => {
  [as, redis, proxy] = await Promise.all([
    startAuthorizationServer({ introspection: {} }),
    startRedisServer(),
    startLoopbackServer(forward),
  ]);
}, 60_000);

afterAll(async () => {
  await stopAllInstances();
  await Promise.all([as?.close(), redis?.close(), proxy?.close()]);
});

beforeEach(() => {
  first = undefined;
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const introspection = () => ({
  clientId: 'rs-basic',
  clientSecret: as.resourceServerSecret,
  endpoint: `${proxy.origin}/token/introspection`,
});

/** Introspection requests the provider received while `run` ran. */
const callsDuring = (run: () => Promise<unknown>) => introspectionsDuring(as, run);

/** A Redis store on a client of its own, for `cache.shared` in this process. */
function sharedStore(prefix: string) {
  const client = createClient({ url: redis.url, socket: { connectTimeout: 1000, reconnectStrategy: () => 100 } });
  client.on('error', () => undefined);
  client.connect().catch(() => undefined);
  const store = createRedisStore(client, { prefix, timeout: '1s' });
  cleanups.push(
    () => client.destroy(),
    () => store.close(),
  );
  return store;
}

describe.each(EXPRESS_VERSIONS)('one process through %s', (_name, express) => {
  it.each([
    ['alone', false],
    ['with cache.shared on Redis', true],
  ])('%s: 50 concurrent then 10 sequential requests with a new token cost one call', async (_label, shared) => {
    const auth: TokenAuth = createTokenAuth({
      issuerBaseURL: as.issuer,
      audience: as.resource,
      introspection: introspection(),
      ...(shared ? { cache: { shared: sharedStore(`one-${randomUUID().slice(0, 8)}:`) } } : {}),
    } as TokenAuthOptions);
    cleanups.push(() => auth.close());
    const server = await listen(
      appWith(express, auth, { scopes: ['read'], answer: (claims) => ({ scope: claims?.scope }) }),
    );
    cleanups.push(() => server.close());
    const get = (token: string) =>
      request(server.origin)
        .get('/me')
        .set({ Authorization: `Bearer ${token}` });

    // Another token of the same client first: the answer about the new one repeats its answer.
    const earlier = await as.token();
    expect(await callsDuring(async () => expect((await get(earlier)).status).toBe(200))).toBe(1);
    const token = await as.token();
    const calls = await callsDuring(async () => {
      const burst = await Promise.all(Array.from({ length: 50 }, () => get(token)));
      expect(burst.map((res) => res.status)).toEqual(Array(50).fill(200));
      for (let i = 0; i < 10; i++) expect((await get(token)).body).toEqual({ scope: 'read' });
    });
    expect(calls).toBe(1);
  });
});

describe('a fleet of three processes on one Redis', () => {
  let instances: Instance[];
  beforeAll(async () => {
    const config: InstanceConfig = {
      redisUrl: redis.url,
      client: 'redis',
      issuerBaseURL: as.issuer,
      audience: as.resource,
      introspection: introspection(),
      scopes: ['read'],
      revocation: false,
      shared: true,
      prefix: `one-call-${randomUUID().slice(0, 8)}:`,
    };
    // node-redis on Express 5, ioredis on Express 4, node-redis.
    instances = await Promise.all(
      [config, { ...config, express: 4 as const, client: 'ioredis' as const }, config].map((c) => startInstance(c)),
    );
    // Until its client has connected, an instance skips the shared store: wait for every connection.
    await Promise.all(
      instances.map((i) => i.call('claim', { claimId: randomUUID(), expiresAt: Date.now() / 1000 + 60 })),
    );
  }, 90_000);

  const ok = async (instance: Instance, token: string) => {
    const answer = await instance.get(token);
    expect({ status: answer.status, body: JSON.parse(answer.body) }).toMatchObject({ status: 200, body: {} });
  };

  it('costs one call for a new token sent to A, then B, then C', async () => {
    const [a, b, c] = instances;
    // A asked about another token of the same client first: its answer about the new one repeats that one.
    const earlier = await as.token();
    expect(await callsDuring(() => ok(a, earlier))).toBe(1);
    const token = await as.token();
    expect(
      await callsDuring(async () => {
        for (const instance of [a, b, c]) await ok(instance, token);
      }),
    ).toBe(1);
  });

  it('costs one call for a new token sent 20 times to each of the three at once', async () => {
    // Each instance asked about a token of its own first, so whichever leads the burst repeats an answer it believed.
    for (const instance of instances) {
      const earlier = await as.token();
      expect(await callsDuring(() => ok(instance, earlier))).toBe(1);
    }
    const token = await as.token();
    expect(
      await callsDuring(() => Promise.all(instances.flatMap((i) => Array.from({ length: 20 }, () => ok(i, token))))),
    ).toBe(1);
  });
});
