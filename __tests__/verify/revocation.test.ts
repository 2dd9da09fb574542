import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { createRedisStore, type RedisStore } from '../../lib/redis';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';
import { until } from '../fixtures/loopback-server';
import { startRedisServer, type RedisServer } from '../fixtures/redis-server';

let redis: RedisServer;
let client: ReturnType<typeof createClient>;
let store: RedisStore;
const opened: TokenAuth[] = [];
const base = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE };

beforeAll(async () => {
  redis = await startRedisServer();
  client = createClient({ url: redis.url });
  client.on('error', () => undefined);
  await client.connect();
  store = createRedisStore(client, { prefix: `opt-${randomUUID().slice(0, 8)}:` });
});

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

afterAll(async () => {
  store?.close();
  client?.destroy();
  await redis?.close();
});

function auth(options: Partial<TokenAuthOptions> = {}): TokenAuth {
  const made = createTokenAuth({ ...base, revocation: store, ...options } as TokenAuthOptions);
  opened.push(made);
  return made;
}

describe('revocation and cache.shared options', () => {
  it('throws a TypeError at createTokenAuth when revocation is not a store', () => {
    expect(() => createTokenAuth({ ...base, revocation: {} } as unknown as TokenAuthOptions)).toThrow(
      /option "revocation"/,
    );
    expect(() => createTokenAuth({ ...base, revocation: () => false } as unknown as TokenAuthOptions)).toThrow(
      TypeError,
    );
  });

  it('reports the list in stats()', async () => {
    const made = auth();
    await until(() => made.stats().revocation?.loaded === true, 'the list loaded');
    expect(made.stats().revocation).toMatchObject({ loaded: true, available: true });
  });
});

describe.each(EXPRESS_VERSIONS)('revocation: store through %s', (_name, express) => {
  function app(options: Partial<TokenAuthOptions> = {}) {
    const made = auth(options);
    return {
      made,
      server: appWith(express, made, { scopes: ['identify'], answer: (claims) => ({ jti: claims?.jti }) }),
    };
  }

  it('refuses a revoked jti with 401 invalid_token, and only that jti', async () => {
    const { made, server } = app();
    await until(() => made.stats().revocation?.loaded === true, 'the list loaded');
    const claims = shapeB();
    const t = sign(claims);
    expect((await request(server).get('/me').set('Authorization', `Bearer ${t}`)).status).toBe(200);
    await store.revoke(claims.jti as string, claims.exp as number);
    const res = await request(server).get('/me').set('Authorization', `Bearer ${t}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Invalid access token"',
    );
    expect(
      (
        await request(server)
          .get('/me')
          .set('Authorization', `Bearer ${sign(shapeB())}`)
      ).status,
    ).toBe(200);
  });

  it('still asks isRevoked when both are given', async () => {
    const { made, server } = app({
      isRevoked: (claims) => Array.isArray(claims.scopes) && claims.scopes.includes('blocked'),
    });
    await until(() => made.stats().revocation?.loaded === true, 'the list loaded');
    expect(
      (
        await request(server)
          .get('/me')
          .set('Authorization', `Bearer ${sign(shapeB(undefined, { scopes: ['identify', 'blocked'] }))}`)
      ).status,
    ).toBe(401);
    expect(
      (
        await request(server)
          .get('/me')
          .set('Authorization', `Bearer ${sign(shapeB())}`)
      ).status,
    ).toBe(200);
  });

  it('cannot refuse a token without jti by jti (claims: jwt): it passes this check', async () => {
    const { made, server } = app({ claims: 'jwt' });
    await until(() => made.stats().revocation?.loaded === true, 'the list loaded');
    const t = sign(shapeB(undefined, { jti: undefined, sub: 'user-1' })); // 'jwt' refuses Shape B's null sub
    expect((await request(server).get('/me').set('Authorization', `Bearer ${t}`)).status).toBe(200);
  });
});
