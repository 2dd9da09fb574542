/**
 * `auth.ready()` (docs/options.md): it resolves once the first request can be verified without waiting on a remote
 * call, rejects with the cause when that is impossible now, and retries behind the caller one attempt per cooldown.
 * Loopback servers count every request they get; apps are real Express 4 and 5 apps.
 */
import * as diagnostics from 'node:diagnostics_channel';
import { generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, type FetchEvent, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { startAuthorizationServer } from '../fixtures/authorization-server';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { API_CLIENT_ID, startEntraServer, TENANT_A, type EntraServer } from '../fixtures/entra-server';
import { hang, json, startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { SECRET, shapeB, sign, ISSUER, AUDIENCE } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Whether `promise` has settled before the event loop turns once (no I/O, no timer: "at once"). */
async function settlesAtOnce(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

let entra: EntraServer;
beforeAll(async () => {
  entra = await startEntraServer();
});
afterAll(() => entra.close());

describe.each(EXPRESS_VERSIONS)('auth.ready() through %s', (_name, express) => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  function make(options: Partial<TokenAuthOptions>): TokenAuth {
    const auth = createTokenAuth({ audience: API_CLIENT_ID, claims: 'jwt', ...options } as TokenAuthOptions);
    cleanup.push(() => auth.close());
    return auth;
  }

  async function loopback(handler: Parameters<typeof startLoopbackServer>[0]): Promise<LoopbackServer> {
    const server = await startLoopbackServer(handler);
    cleanup.push(() => server.close());
    return server;
  }

  it('resolves once discovery and keys are loaded, so that the first request makes no fetch', async () => {
    const auth = make({ issuerBaseURL: entra.base('organizations'), tenants: [TENANT_A] });
    entra.server.reset();
    await auth.ready();
    expect(entra.server.seen.map((r) => r.url)).toEqual([
      '/organizations/v2.0/.well-known/openid-configuration',
      '/organizations/discovery/v2.0/keys',
    ]);
    const res = await request(appWith(express, auth))
      .get('/me')
      .set(bearer(entra.token(TENANT_A)));
    expect(res.status).toBe(200);
    expect(entra.server.requests).toBe(2);
  });

  it('resolves once a key.jwksUri set is loaded, so that the first request makes no fetch', async () => {
    const auth = make({ key: { jwksUri: entra.v1Keys }, issuer: entra.issuer(TENANT_A) });
    entra.server.reset();
    await auth.ready();
    expect(entra.server.requests).toBe(1);
    const res = await request(appWith(express, auth))
      .get('/me')
      .set(bearer(entra.token(TENANT_A)));
    expect(res.status).toBe(200);
    expect(entra.server.requests).toBe(1);
  });

  it('is cheap once ready: no request, settled at once, however often it is called', async () => {
    const auth = make({ issuerBaseURL: entra.base('organizations'), tenants: [TENANT_A] });
    await auth.ready();
    entra.server.reset();
    const calls = Array.from({ length: 50 }, () => auth.ready());
    expect(await settlesAtOnce(Promise.all(calls))).toBe(true);
    expect(entra.server.requests).toBe(0);
  });

  it('shares one load among concurrent callers: one metadata and one key request for 20 calls', async () => {
    const auth = make({ issuerBaseURL: entra.base('organizations'), tenants: [TENANT_A] });
    entra.server.reset();
    await Promise.all(Array.from({ length: 20 }, () => auth.ready()));
    expect(entra.server.requests).toBe(2);
  });

  it('resolves at once for a static key, asking nothing', async () => {
    const auth = make({ key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, claims: 'strict' });
    expect(await settlesAtOnce(auth.ready())).toBe(true);
    await auth.ready();
    const res = await request(appWith(express, auth))
      .get('/me')
      .set(bearer(sign(shapeB())));
    expect(res.status).toBe(200);
  });

  it('resolves at once for a public key and for upstream mode (each token is asked about anyway)', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    expect(await settlesAtOnce(make({ key: { publicKey }, issuer: ISSUER }).ready())).toBe(true);
    const upstream = await loopback(hang);
    const auth = make({ key: { upstream: upstream.origin }, issuer: ISSUER, claims: 'strict' });
    expect(await settlesAtOnce(auth.ready())).toBe(true);
    expect(upstream.requests).toBe(0);
  });

  it('rejects with code and reason for an issuer that refuses connections', async () => {
    const down = await loopback(hang);
    await down.stop();
    const err = await rejection(make({ issuerBaseURL: `${down.origin}/tenant` }).ready());
    expect(err.code).toBe('verification_unavailable');
    expect(err.status).toBe(503);
    expect(err.reason).toBe('discovery-network');
    expect(err.hint).toMatch(
      /^no keys loaded for http:\/\/127\.0\.0\.1:\d+\/tenant \(discovery-network\); tried again in \d+ s$/,
    );
    expect(err.headers['Retry-After']).toMatch(/^[1-9]\d*$/);
  });

  it('rejects within its timeout for an issuer that never answers (discovery.timeout)', async () => {
    const silent = await loopback(hang);
    const err = await rejection(
      make({ issuerBaseURL: `${silent.origin}/tenant`, discovery: { timeout: '300ms' } }).ready(),
    );
    expect(err.code).toBe('verification_unavailable');
    expect(err.reason).toBe('discovery-timeout');
    expect(silent.requests).toBe(1);
  });

  it('rejects within its timeout for a key set that never answers (key.timeout)', async () => {
    const silent = await loopback(hang);
    const err = await rejection(
      make({ key: { jwksUri: `${silent.origin}/keys`, timeout: '300ms' }, issuer: ISSUER }).ready(),
    );
    expect(err.code).toBe('verification_unavailable');
    expect(err.reason).toBe('jwks-timeout');
    expect(err.hint).toContain('/keys (jwks-timeout)');
  });

  it("names the server's own fault: a metadata issuer that is not the one asked", async () => {
    const liar = await loopback((_req, res) => json(res, 200, { issuer: 'https://other.example', jwks_uri: 'x' }));
    const err = await rejection(make({ issuerBaseURL: `${liar.origin}/tenant` }).ready());
    expect(err.reason).toBe('discovery-issuer-mismatch');
  });

  it('never retries faster than the cooldown, however often it is called after a failure', async () => {
    let now = 1_800_000_000;
    const failing = await loopback((_req, res) => json(res, 500, {}));
    const auth = make({
      key: { jwksUri: `${failing.origin}/keys`, cooldown: '30s' },
      issuer: ISSUER,
      clock: () => now,
    });
    expect((await rejection(auth.ready())).reason).toBe('jwks-fetch');
    const again = await Promise.all(Array.from({ length: 20 }, () => rejection(auth.ready())));
    expect(again.map((err) => err.headers['Retry-After'])).toEqual(Array(20).fill('30'));
    expect(failing.requests).toBe(1);
    now += 30;
    await rejection(auth.ready());
    expect(failing.requests).toBe(2);
  });

  it('keeps retrying behind a rejection, one attempt per cooldown, until the keys load', async () => {
    const keys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    let up = false;
    const server = await loopback((_req, res) => {
      if (!up) json(res, 503, {});
      else json(res, 200, { keys: [{ ...keys.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' }] });
    });
    const auth = make({ key: { jwksUri: `${server.origin}/keys`, cooldown: '1s' }, issuer: ISSUER });
    await rejection(auth.ready());
    up = true;
    // Nobody calls ready() again: the retry behind the rejection loads the keys (bounded wait, no speed asserted).
    await until(() => server.requests >= 2, 'the retry after the cooldown', 500);
    await auth.ready();
    const now = Math.floor(Date.now() / 1000);
    const token = sign({ iss: ISSUER, aud: API_CLIENT_ID, iat: now, exp: now + 60 }, keys.privateKey, 'ES256', {
      kid: 'k1',
    });
    const seen = server.requests;
    expect((await request(appWith(express, auth)).get('/me').set(bearer(token))).status).toBe(200);
    expect(server.requests).toBe(seen);
  });

  it('stops retrying once closed', async () => {
    const failing = await loopback((_req, res) => json(res, 503, {}));
    const auth = make({ key: { jwksUri: `${failing.origin}/keys`, cooldown: '1s' }, issuer: ISSUER });
    await rejection(auth.ready());
    auth.close();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(failing.requests).toBe(1);
  });
});

describe('auth.ready() with introspection', () => {
  it('reads the introspection metadata, so that the first call goes straight to the endpoint', async () => {
    const as = await startAuthorizationServer({ introspection: { signed: false } });
    const fetches: FetchEvent[] = [];
    const listen = (event: unknown) => fetches.push(event as FetchEvent);
    for (const kind of ['discovery', 'key', 'introspection'])
      diagnostics.subscribe(`express-verified-user:fetch:${kind}`, listen);
    const auth = createTokenAuth({
      issuerBaseURL: as.issuer,
      audience: as.resource,
      introspection: { clientId: 'rs-basic', clientSecret: as.resourceServerSecret },
    });
    try {
      await auth.ready();
      const before = fetches.map((f) => f.kind);
      expect(before).toContain('discovery');
      fetches.length = 0;
      await auth.verify(await as.token());
      expect(fetches.map((f) => f.kind)).toEqual(['introspection']);
    } finally {
      for (const kind of ['discovery', 'key', 'introspection'])
        diagnostics.unsubscribe(`express-verified-user:fetch:${kind}`, listen);
      auth.close();
      await as.close();
    }
  }, 30_000);

  it('rejects naming the option when the server lists no introspection endpoint', async () => {
    const as = await startAuthorizationServer({ introspection: { endpoint: false } });
    const auth = createTokenAuth({
      issuerBaseURL: as.issuer,
      audience: as.resource,
      introspection: { clientId: 'rs-basic', clientSecret: as.resourceServerSecret },
    });
    try {
      const err = await rejection(auth.ready());
      expect(err.code).toBe('verification_unavailable');
      expect(err.reason).toBe('introspection-endpoint-missing');
      expect(err.hint).toContain('option "introspection.endpoint"');
    } finally {
      auth.close();
      await as.close();
    }
  }, 30_000);
});
