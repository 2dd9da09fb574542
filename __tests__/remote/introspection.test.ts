/**
 * The introspection source (RFC 7662, RFC 9701; docs/introspection.md) through `verify()`, against a real
 * oidc-provider 9 issuing opaque access tokens (__tests__/fixtures/authorization-server.ts): calls and their cache,
 * client authentication, and `introspection.maxInflight`, the cap on calls under way (signed answers:
 * introspection-signed.test.ts). Calls are
 * counted at the provider; a loopback server in front of its endpoint alters or holds answers where a test needs it.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import * as diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { createTokenAuth, TokenAuthError, type FetchEvent, type TokenAuth, type TokenAuthOptions } from '../../lib';
import {
  introspectionsDuring,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../fixtures/authorization-server';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';
import { forwardIntrospection } from '../fixtures/introspection-proxy';

/** Real time (the provider's tokens expire by it), moved forward by `skew` to let cache entries lapse. */
let skew = 0;
const clock = () => Date.now() / 1000 + skew;
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const rsKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const rsJwk = { ...(rsKey.publicKey.export({ format: 'jwk' }) as object), kid: 'rs-jwt-1', alg: 'ES256', use: 'sig' };

let as: AuthorizationServer;
const opened: TokenAuth[] = [];
const errors: TokenAuthError[] = [];

beforeAll(async () => {
  as = await startAuthorizationServer({ introspection: { clientJwks: { keys: [rsJwk] } } });
}, 30_000);

afterAll(async () => {
  await as?.close();
});

beforeEach(() => {
  skew = 0;
  errors.length = 0;
});

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

/** A TokenAuth introspecting at `server` as `rs-basic`, unless `overrides` say otherwise. */
function introspecting(server: AuthorizationServer, overrides: Partial<TokenAuthOptions> = {}): TokenAuth {
  const auth = createTokenAuth({
    issuerBaseURL: server.issuer,
    audience: server.resource,
    introspection: { clientId: 'rs-basic', clientSecret: server.resourceServerSecret },
    clock,
    onError: (err) => errors.push(err),
    ...overrides,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

const callsDuring = introspectionsDuring;

describe('calls to the authorization server', () => {
  it('introspects a new token once for many requests, concurrent or not', async () => {
    const auth = introspecting(as);
    const token = await as.token();
    const calls = await callsDuring(as, async () => {
      await Promise.all(Array.from({ length: 10 }, () => auth.verify(token)));
      for (let i = 0; i < 10; i++) await auth.verify(token);
    });
    expect(calls).toBe(1);
  });

  it('remembers a refused token for errorTtl, then asks again', async () => {
    const auth = introspecting(as, { cache: { errorTtl: '5s' } });
    const first = await callsDuring(as, async () => {
      for (let i = 0; i < 5; i++) expect((await rejection(auth.verify('garbage-token'))).code).toBe('invalid_token');
    });
    expect(first).toBe(1);
    skew = 6;
    expect(await callsDuring(as, () => rejection(auth.verify('garbage-token')))).toBe(1);
  });

  it('refuses a token revoked at the provider once cache.ttl has passed', async () => {
    // rs-plain is answered plain JSON: the clock moved 31 s on would find a signed answer stale (its iat is real time).
    const auth = introspecting(as, {
      cache: { ttl: '30s' },
      introspection: { clientId: 'rs-plain', clientSecret: as.resourceServerSecret },
    });
    const token = await as.token();
    await auth.verify(token);
    await as.revoke(token);
    // Within the ttl the cached answer still holds: this is the revocation delay the ttl buys calls with.
    await expect(auth.verify(token)).resolves.toMatchObject({ scope: 'read' });
    skew = 31;
    const refused = await rejection(auth.verify(token));
    expect(refused.code).toBe('invalid_token');
    expect(refused.reason).toBe('introspection-inactive');
  });

  it('answers 503 with Retry-After while the provider is down, and caches nothing', async () => {
    const auth = introspecting(as);
    await auth.verify(await as.token()); // discovery done
    const token = await as.token();
    await as.stop();
    try {
      const down = await rejection(auth.verify(token));
      expect(down.code).toBe('verification_unavailable');
      expect(down.status).toBe(503);
      expect(down.headers['Retry-After']).toMatch(/^\d+$/);
      expect(down.reason).toBe('introspection-network');
    } finally {
      await as.start();
    }
    await expect(auth.verify(token)).resolves.toMatchObject({ aud: as.resource });
  });

  it("verifies a JWT of the issuer locally with no call ('opaque', the default)", async () => {
    const auth = introspecting(as, { audience: [as.resource, as.jwtResource] });
    const jwt = await as.token({ resource: as.jwtResource });
    expect(jwt.split('.')).toHaveLength(3);
    expect(await callsDuring(as, () => expect(auth.verify(jwt)).resolves.toMatchObject({ aud: as.jwtResource }))).toBe(
      0,
    );
  });

  it("introspects a JWT of the issuer too with introspect: 'always'", async () => {
    const auth = introspecting(as, { audience: [as.resource, as.jwtResource], introspect: 'always' });
    const jwt = await as.token({ resource: as.jwtResource });
    let refused: TokenAuthError | undefined;
    expect(
      await callsDuring(as, async () => {
        refused = await rejection(auth.verify(jwt));
      }),
    ).toBe(1);
    // oidc-provider introspects no JWT (unsupported_token_type): an answer about the token, so 401.
    expect(refused?.code).toBe('invalid_token');
    expect(refused?.reason).toBe('introspection-unsupported-token-type');
  });

  it('refuses an introspected token whose aud is not ours', async () => {
    const auth = introspecting(as, { audience: 'https://another-api.example.test' });
    const refused = await rejection(auth.verify(await as.token()));
    expect(refused.code).toBe('invalid_token');
    expect(refused.reason).toBe('aud');
  });

  it('publishes each introspection call on express-verified-user:fetch:introspection', async () => {
    const events: FetchEvent[] = [];
    const listen = (message: unknown) => events.push(message as FetchEvent);
    diagnostics.subscribe('express-verified-user:fetch:introspection', listen);
    try {
      await introspecting(as).verify(await as.token());
    } finally {
      diagnostics.unsubscribe('express-verified-user:fetch:introspection', listen);
    }
    expect(events).toEqual([
      expect.objectContaining({
        kind: 'introspection',
        url: `${as.issuer}/token/introspection`,
        status: 200,
        outcome: 'ok',
      }),
    ]);
  });
});

describe('client authentication', () => {
  it('authenticates with client_secret_post', async () => {
    const auth = introspecting(as, {
      introspection: { clientId: 'rs-post', clientSecret: as.resourceServerSecret, authMethod: 'client_secret_post' },
    });
    await expect(auth.verify(await as.token())).resolves.toMatchObject({ scope: 'read' });
  });

  it('authenticates with private_key_jwt, a fresh assertion per call (the provider refuses a replayed jti)', async () => {
    const auth = introspecting(as, {
      introspection: { clientId: 'rs-jwt', privateKey: rsKey.privateKey.export({ format: 'jwk' }) as never },
    });
    for (let i = 0; i < 3; i++) await expect(auth.verify(await as.token())).resolves.toMatchObject({ scope: 'read' });
  });

  it.each([
    ['a wrong secret', { clientId: 'rs-basic', clientSecret: 'not-the-secret' }],
    [
      'a wrong private key',
      {
        clientId: 'rs-jwt',
        privateKey: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey as KeyObject,
      },
    ],
  ])('answers 503 (reason introspection-client-auth) for %s, never 401', async (_case, introspection) => {
    const auth = introspecting(as, { introspection });
    const refused = await rejection(auth.verify(await as.token()));
    expect(refused.code).toBe('verification_unavailable');
    expect(refused.reason).toBe('introspection-client-auth');
    expect(errors.map((e) => e.reason)).toEqual(['introspection-client-auth']);
  });
});

describe('an authorization server without signed answers or without the endpoint', () => {
  let plain: AuthorizationServer;
  let bare: AuthorizationServer;

  beforeAll(async () => {
    [plain, bare] = await Promise.all([
      startAuthorizationServer({ introspection: { signed: false } }),
      startAuthorizationServer({ introspection: { endpoint: false } }),
    ]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([plain?.close(), bare?.close()]);
  });

  it('reads plain JSON answers when discovery offers no signed ones', async () => {
    await expect(introspecting(plain).verify(await plain.token())).resolves.toMatchObject({
      iss: plain.issuer,
      scope: 'read',
    });
  });

  it('holds an introspected cnf to its binding: a certificate-bound token without the certificate is refused', async () => {
    // The provider's answer, given a cnf (RFC 8705 §3.2) on the way, as an AS does for certificate-bound tokens.
    const binding = await startLoopbackServer((req, res) =>
      forwardIntrospection(req, res, `${plain.issuer}/token/introspection`, (answer) => ({
        ...answer,
        body: JSON.stringify({
          ...JSON.parse(answer.body),
          cnf: { 'x5t#S256': 'bm90LXRoaXMtY2xpZW50cy1jZXJ0aWZpY2F0ZQ' },
        }),
      })),
    );
    try {
      const auth = introspecting(plain, {
        introspection: {
          clientId: 'rs-basic',
          clientSecret: plain.resourceServerSecret,
          endpoint: `${binding.origin}/token/introspection`,
        },
      });
      const app = appWith(EXPRESS_VERSIONS[0][1], auth, { path: '/read', scopes: ['read'] });
      const token = await plain.token();
      await expect(auth.verify(token)).resolves.toMatchObject({ cnf: { 'x5t#S256': expect.any(String) } });
      const response = await request(app).get('/read').set(bearer(token));
      expect(response.status).toBe(401);
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
    } finally {
      await binding.close();
    }
  });

  it('answers 503 with reason introspection-endpoint-missing when discovery lists no endpoint and none is given', async () => {
    const auth = introspecting(bare);
    // Every time, with its reason (the breaker does not open on it and hide the cause behind breaker-open).
    for (let i = 0; i < 7; i++) {
      const refused = await rejection(auth.verify(await bare.token()));
      expect(refused.code).toBe('verification_unavailable');
      expect(refused.reason).toBe('introspection-endpoint-missing');
    }
    expect(new Set(errors.map((e) => e.reason))).toEqual(new Set(['introspection-endpoint-missing']));
  });
});

describe('introspection.maxInflight', () => {
  let slow: LoopbackServer;
  /** Requests the slow endpoint holds, each answered by forwarding it to the provider once released. */
  const held: Array<() => void> = [];

  function holdThenForward(req: IncomingMessage, res: ServerResponse): void {
    forwardIntrospection(req, res, `${as.issuer}/token/introspection`, undefined, (send) => held.push(send));
  }

  beforeAll(async () => {
    slow = await startLoopbackServer(holdThenForward);
  });

  afterAll(async () => {
    await slow.close();
  });

  beforeEach(() => {
    slow.reset();
    held.length = 0;
  });

  // rs-plain is answered plain JSON: tokens issued in one second get one signed answer (no jti in it), and this
  // proxy would hold the plain call that follows such a repeat (below, 'a signed answer believed once').
  const through = (maxInflight?: number) =>
    introspecting(as, {
      introspection: {
        clientId: 'rs-plain',
        clientSecret: as.resourceServerSecret,
        endpoint: `${slow.origin}/token/introspection`,
        timeout: '20s',
        maxInflight,
      },
    });

  it('answers a new token beyond maxInflight 503 introspection-busy at once, with no call, then frees the places', async () => {
    const auth = through(2);
    const tokens = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => as.token()));
    const first = tokens.slice(0, 2).map((token) => auth.verify(token));
    await until(() => held.length === 2, 'two held introspection calls');
    // Beyond the cap: refused at once (these settle while the two calls are still held), never queued.
    for (const token of tokens.slice(2, 8)) {
      const busy = await rejection(auth.verify(token));
      expect([busy.code, busy.status, busy.reason, busy.headers['Retry-After']]).toEqual([
        'verification_unavailable',
        503,
        'introspection-busy',
        '1',
      ]);
    }
    expect(slow.requests).toBe(2);
    // Six refusals in a row, yet the breaker (5 outages) did not count them: no call was made.
    expect(auth.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
    for (const release of held.splice(0)) release();
    await expect(Promise.all(first)).resolves.toHaveLength(2);
    // Never cached: the refused token is introspected now that there is room.
    const later = auth.verify(tokens[2]);
    await until(() => held.length === 1, 'the refused token asked about');
    held.splice(0)[0]();
    await expect(later).resolves.toMatchObject({ aud: as.resource });
    expect(slow.requests).toBe(3);
  });

  it('defaults to 100 calls under way', async () => {
    const auth = through();
    const tokens = await Promise.all(Array.from({ length: 101 }, () => as.token()));
    const pending = tokens.slice(0, 100).map((token) => auth.verify(token));
    await until(() => held.length === 100, 'a hundred held introspection calls', 1000);
    expect((await rejection(auth.verify(tokens[100]))).reason).toBe('introspection-busy');
    for (const release of held.splice(0)) release();
    await expect(Promise.all(pending)).resolves.toHaveLength(100);
  }, 60_000);
});
