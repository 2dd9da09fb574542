/**
 * Introspection goes through the same shared-verdict wrapper as upstream mode (`cache.shared`; docs/fleet.md,
 * docs/introspection.md): two instances on one real Redis, one real oidc-provider; a token costs one introspection
 * call between them.
 */
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { createRedisStore } from '../../lib/redis';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server';
import { rejection } from '../fixtures/rejection';

let as: AuthorizationServer;
let redis: RedisServer;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  [as, redis] = await Promise.all([startAuthorizationServer({ introspection: {} }), startRedisServer()]);
}, 30_000);

afterAll(async () => {
  await Promise.all([as?.close(), redis?.close()]);
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One instance: its own Redis client and store (same prefix as its peers), its own TokenAuth and local cache. */
function instance(
  prefix: string,
  client: { clientId: string; authMethod?: 'client_secret_post' } = { clientId: 'rs-basic' },
): TokenAuth {
  const redisClient = createClient({ url: redis.url, socket: { connectTimeout: 1000, reconnectStrategy: () => 100 } });
  redisClient.on('error', () => undefined);
  redisClient.connect().catch(() => undefined);
  const store = createRedisStore(redisClient, { prefix, timeout: '500ms' });
  const auth = createTokenAuth({
    issuerBaseURL: as.issuer,
    audience: as.resource,
    introspection: { ...client, clientSecret: as.resourceServerSecret },
    cache: { shared: store },
  } as TokenAuthOptions);
  cleanups.push(
    () => redisClient.destroy(),
    () => store.close(),
    () => auth.close(),
  );
  return auth;
}

describe('introspection with cache.shared', () => {
  it('costs one introspection call per token across instances, for good and refused tokens alike', async () => {
    const prefix = `i${randomUUID().slice(0, 8)}:`;
    const [one, two] = [instance(prefix), instance(prefix)];
    const token = await as.token();
    const before = await as.introspections();
    await expect(one.verify(token)).resolves.toMatchObject({ scope: 'read' });
    await expect(two.verify(token)).resolves.toMatchObject({ scope: 'read' });
    expect((await rejection(one.verify('unknown-opaque-token'))).code).toBe('invalid_token');
    expect((await rejection(two.verify('unknown-opaque-token'))).code).toBe('invalid_token');
    expect((await as.introspections()) - before).toBe(2);
  });

  it('keeps the verdicts of another client of the server apart: it introspects the token itself', async () => {
    const prefix = `i${randomUUID().slice(0, 8)}:`;
    const [basic, post] = [
      instance(prefix),
      instance(prefix, { clientId: 'rs-post', authMethod: 'client_secret_post' }),
    ];
    const token = await as.token();
    const before = await as.introspections();
    await expect(basic.verify(token)).resolves.toMatchObject({ scope: 'read' });
    await expect(post.verify(token)).resolves.toMatchObject({ scope: 'read' });
    expect((await as.introspections()) - before).toBe(2);
  });
});
