/**
 * `auth.exchange()` (RFC 8693; docs/exchange.md) against a real oidc-provider 9 whose token-exchange grant is registered
 * through its own registerGrantType (examples/mcp-server/token-exchange.mjs), with a downstream API protected by this
 * package. Calls are counted at the provider (`POST /token` in its log) or at a loopback token endpoint in front of
 * it, which forwards, or answers as a broken or throttling server would.
 */
import { generateKeyPairSync, verify as verifySignature } from 'node:crypto';
import type { Express, Request } from 'express';
import request from 'supertest';
import { createTokenAuth, errorHandler, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import {
  FRONT,
  startDownstream,
  startTokenEndpoint,
  userToken,
  type Downstream,
  type TokenEndpoint,
} from '../fixtures/exchange';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';
import { until } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';

const clientKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const clientJwk = { ...(clientKey.privateKey.export({ format: 'jwk' }) as object), kid: 'exchange-1', alg: 'ES256' };
const publicJwk = { ...(clientKey.publicKey.export({ format: 'jwk' }) as object), kid: 'exchange-1', alg: 'ES256' };

let as: McpAuthorizationServer;
let downstream: Downstream;
let endpoint: TokenEndpoint;
const opened: TokenAuth[] = [];
const errors: TokenAuthError[] = [];
const revoked = new Set<string>();

beforeAll(async () => {
  as = await startMcpAuthorizationServer({ exchangeJwks: { keys: [publicJwk] } });
  downstream = await startDownstream(as.issuer);
  endpoint = await startTokenEndpoint(as.issuer);
  const targets = { [downstream.resource]: ['builds:read', 'builds:write'], 'https://ci.example': ['builds:read'] };
  for (const clientId of ['mcp-exchange', 'mcp-exchange-post', 'mcp-exchange-jwt'])
    await as.allowExchange({ clientId, resource: FRONT, targets });
}, 30_000);

afterAll(async () => {
  await endpoint?.close();
  await downstream?.close();
  await as?.close();
});

beforeEach(async () => {
  errors.length = 0;
  revoked.clear();
  endpoint.mode = { kind: 'forward' };
  endpoint.forms.length = 0;
  endpoint.headers.length = 0;
  await as.log();
});

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

/** The front API's TokenAuth: users' tokens for FRONT, exchanged as `mcp-exchange` unless `overrides` say otherwise. */
function front(overrides: Partial<TokenAuthOptions> = {}, exchange: Record<string, unknown> = {}): TokenAuth {
  const auth = createTokenAuth({
    issuerBaseURL: as.issuer,
    resource: FRONT,
    claims: 'at+jwt',
    isRevoked: (claims) => revoked.has(claims.jti as string),
    onError: (err) => errors.push(err),
    tokenExchange: { clientId: 'mcp-exchange', clientSecret: as.exchangeSecret, ...exchange },
    ...overrides,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

/** Exchange calls that reached the provider's token endpoint during `run`. */
async function exchangesDuring(run: () => Promise<unknown>): Promise<number> {
  await as.log();
  await run();
  return (await as.log()).filter((line) => line === 'POST /token').length;
}

/** A token endpoint answer of 200 with this body. */
const answering = (body: Record<string, unknown>) => ({
  kind: 'answer' as const,
  status: 200,
  body: JSON.stringify(body),
});

/** A front app: `GET /builds` behind requireVerifiedUser calls the downstream API with an exchanged token. */
function frontApp(make: () => Express, auth: TokenAuth, scope = ['builds:read']): Express {
  const app = make();
  app.get('/builds', auth.requireVerifiedUser(['mcp:tools']), async (req: Request, res, next) => {
    try {
      const onward = await auth.exchange(req, { resource: downstream.resource, scope });
      const answer = await fetch(`${downstream.resource}/builds`, {
        headers: { Authorization: `${onward.tokenType} ${onward.accessToken}` },
      });
      res.status(answer.status).json({ downstream: await answer.json(), expiresIn: onward.expiresIn });
    } catch (err) {
      next(err);
    }
  });
  app.use(errorHandler());
  return app;
}

describe.each(EXPRESS_VERSIONS)('an onward call from a route (%s)', (_name, make) => {
  it('reaches the downstream API with a token of its own audience and an act claim, never the user token', async () => {
    const auth = front();
    const token = await userToken(as);
    const answer = await request(frontApp(make, auth)).get('/builds').set('Authorization', `Bearer ${token}`);
    expect(answer.status).toBe(200);
    expect(answer.body.downstream).toEqual({
      aud: downstream.resource,
      sub: 'alice',
      client_id: 'mcp-exchange',
      actors: [{ sub: 'mcp-exchange' }],
    });
    expect(downstream.seen).not.toContain(token);
  });

  it('exchanges once for many requests, and once for concurrent first requests', async () => {
    const auth = front();
    const app = frontApp(make, auth);
    const token = await userToken(as);
    const calls = await exchangesDuring(async () => {
      const concurrent = await Promise.all(
        Array.from({ length: 8 }, () => request(app).get('/builds').set('Authorization', `Bearer ${token}`)),
      );
      for (let i = 0; i < 4; i++) await request(app).get('/builds').set('Authorization', `Bearer ${token}`);
      expect(concurrent.map((a) => a.status)).toEqual(Array(8).fill(200));
    });
    expect(calls).toBe(1);
  });

  it('answers 403 exchange_refused, without a challenge, when the authorization server refuses', async () => {
    const auth = front();
    const answer = await request(frontApp(make, auth, ['admin']))
      .get('/builds')
      .set('Authorization', `Bearer ${await userToken(as)}`);
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ status: 'error', message: 'Token exchange refused' });
    expect(answer.headers['www-authenticate']).toBeUndefined();
    expect(errors.map((e) => [e.code, e.reason])).toEqual([['exchange_refused', 'invalid_scope']]);
  });
});

describe('what is cached', () => {
  it('asks again for another scope, another audience or another resource, and for another user', async () => {
    const auth = front();
    const token = await userToken(as);
    const calls = await exchangesDuring(async () => {
      await auth.exchange(token, { resource: downstream.resource, scope: ['builds:read'] });
      await auth.exchange(token, { resource: downstream.resource, scope: 'builds:read' }); // same target, spelt as text
      await auth.exchange(token, { resource: downstream.resource, scope: ['builds:read', 'builds:write'] });
      await auth.exchange(token, { resource: downstream.resource, scope: 'builds:write builds:read' }); // same set
      await auth.exchange(token, { audience: 'https://ci.example', scope: ['builds:read'] });
      await auth.exchange(await userToken(as, { sub: 'bob' }), { resource: downstream.resource, scope: 'builds:read' });
    });
    expect(calls).toBe(4);
  });

  it('serves a cached token until its expiry less a margin, counting its expiresIn down', async () => {
    let skew = 0;
    const auth = front({ clock: () => Date.now() / 1000 + skew }, { endpoint: endpoint.url });
    endpoint.mode = answering({ access_token: 'downstream.token.one', token_type: 'Bearer', expires_in: 100 });
    const token = await userToken(as);
    const target = { resource: downstream.resource };
    expect((await auth.exchange(token, target)).expiresIn).toBe(100);
    skew = 65;
    const later = await auth.exchange(token, target);
    expect(later.accessToken).toBe('downstream.token.one');
    expect(later.expiresIn).toBeGreaterThanOrEqual(34);
    expect(later.expiresIn).toBeLessThanOrEqual(35);
    expect(endpoint.forms).toHaveLength(1);
    skew = 71; // within 30 s of its expiry: a caller would get a token about to lapse
    await auth.exchange(token, target);
    expect(endpoint.forms).toHaveLength(2);
  });

  it('never serves a token past the subject token’s exp, however long the issued one lives', async () => {
    let skew = 0;
    const auth = front({ clock: () => Date.now() / 1000 + skew }, { endpoint: endpoint.url });
    endpoint.mode = answering({ access_token: 'downstream.token.long', token_type: 'Bearer', expires_in: 3600 });
    const token = await userToken(as, {}, 120);
    const target = { resource: downstream.resource };
    await auth.exchange(token, target);
    skew = 110;
    await auth.exchange(token, target);
    expect(endpoint.forms).toHaveLength(1);
    skew = 122; // past the subject's exp, within the 5 s clock tolerance: the subject still verifies, its entry is gone
    await auth.exchange(token, target);
    expect(endpoint.forms).toHaveLength(2);
  });

  it('keeps nothing with cache: false, yet concurrent callers of one target still share one call', async () => {
    const auth = front({}, { cache: false });
    const token = await userToken(as);
    const target = { resource: downstream.resource };
    expect(await exchangesDuring(() => Promise.all([1, 2, 3].map(() => auth.exchange(token, target))))).toBe(1);
    expect(await exchangesDuring(() => auth.exchange(token, target))).toBe(1);
  });
});

describe('which tokens are exchanged', () => {
  it('exchanges a token string that verify() accepts now', async () => {
    const auth = front();
    const onward = await auth.exchange(await userToken(as), { resource: downstream.resource, scope: ['builds:read'] });
    expect(onward).toMatchObject({
      tokenType: 'Bearer',
      issuedTokenType: 'urn:ietf:params:oauth:token-type:access_token',
      scope: ['builds:read'],
    });
    const claims = await downstream.auth.verify(onward.accessToken);
    expect(claims).toMatchObject({ aud: downstream.resource, sub: 'alice', act: { sub: 'mcp-exchange' } });
  });

  it('refuses an expired subject token with 401 before any call', async () => {
    const auth = front();
    const expired = await userToken(as, { iat: Math.floor(Date.now() / 1000) - 700 }, -100);
    let refused: TokenAuthError | undefined;
    const calls = await exchangesDuring(async () => {
      refused = await rejection(auth.exchange(expired, { resource: downstream.resource }));
    });
    expect([refused?.status, refused?.code, calls]).toEqual([401, 'token_expired', 0]);
  });

  it('refuses a revoked subject token with 401, from the cache or anew', async () => {
    const auth = front();
    const token = await userToken(as, { jti: 'to-revoke' });
    await auth.exchange(token, { resource: downstream.resource });
    revoked.add('to-revoke');
    let refused: TokenAuthError | undefined;
    const calls = await exchangesDuring(async () => {
      refused = await rejection(auth.exchange(token, { resource: downstream.resource })); // was cached
      await rejection(auth.exchange(token, { audience: 'https://ci.example' })); // never asked before
    });
    expect([refused?.status, refused?.code, refused?.reason, calls]).toEqual([401, 'invalid_token', 'revoked', 0]);
  });

  it('refuses a request whose token was revoked after the middleware let it through', async () => {
    const auth = front();
    const token = await userToken(as, { jti: 'revoked-mid-request' });
    const app = EXPRESS_VERSIONS[0][1]();
    app.get('/', auth.requireVerifiedUser(), (req, res, next) => {
      revoked.add('revoked-mid-request');
      auth.exchange(req, { resource: downstream.resource }).then(() => res.end(), next);
    });
    app.use(errorHandler());
    let status = 0;
    const calls = await exchangesDuring(async () => {
      status = (await request(app).get('/').set('Authorization', `Bearer ${token}`)).status;
    });
    expect([status, calls]).toEqual([401, 0]);
  });

  it('refuses a string it cannot verify (another audience, a bad signature) with no call', async () => {
    const auth = front();
    const foreign = await userToken(as, { aud: downstream.resource });
    const good = await userToken(as);
    const forged = `${good.slice(0, good.lastIndexOf('.'))}.${'A'.repeat(342)}`;
    const codes: string[] = [];
    const calls = await exchangesDuring(async () => {
      for (const token of [foreign, forged, 'not-a-token'])
        codes.push((await rejection(auth.exchange(token, { resource: downstream.resource }))).code);
    });
    expect([codes, calls]).toEqual([['invalid_token', 'invalid_token', 'invalid_token'], 0]);
  });

  it('refuses a request this instance did not verify (no middleware, another TokenAuth), never reading its header', async () => {
    const auth = front();
    const other = front();
    const token = await userToken(as);
    const app = EXPRESS_VERSIONS[0][1]();
    app.get(
      '/bare',
      (req, res, next) => void auth.exchange(req, { resource: downstream.resource }).then(() => res.end(), next),
    );
    app.get('/other', other.requireVerifiedUser(), (req, res, next) => {
      auth.exchange(req, { resource: downstream.resource }).then(() => res.end(), next);
    });
    app.use(errorHandler());
    const statuses: number[] = [];
    const calls = await exchangesDuring(async () => {
      for (const path of ['/bare', '/other'])
        statuses.push((await request(app).get(path).set('Authorization', `Bearer ${token}`)).status);
    });
    expect([statuses, calls]).toEqual([[401, 401], 0]);
    expect(errors.filter((e) => e.reason === 'exchange-request-not-verified')).toHaveLength(2);
  });
});

describe('client authentication at the token endpoint', () => {
  it('is accepted by oidc-provider with client_secret_post and with private_key_jwt', async () => {
    const post = front({}, { clientId: 'mcp-exchange-post', authMethod: 'client_secret_post' });
    const jwt = front({}, { clientId: 'mcp-exchange-jwt', clientSecret: undefined, privateKey: clientJwk });
    const token = await userToken(as);
    for (const [auth, clientId] of [
      [post, 'mcp-exchange-post'],
      [jwt, 'mcp-exchange-jwt'],
    ] as const) {
      const onward = await auth.exchange(token, { resource: downstream.resource });
      expect(await downstream.auth.verify(onward.accessToken)).toMatchObject({ client_id: clientId });
    }
  });

  it('sends private_key_jwt on the wire: a fresh assertion per call whose aud is the endpoint, no secret', async () => {
    endpoint.mode = answering({ access_token: 'issued.token.value', token_type: 'Bearer', expires_in: 60 });
    const auth = front(
      {},
      { clientId: 'mcp-exchange-jwt', clientSecret: undefined, privateKey: clientJwk, endpoint: endpoint.url },
    );
    const token = await userToken(as);
    await auth.exchange(token, { resource: downstream.resource });
    await auth.exchange(token, { audience: 'https://ci.example' });
    const assertions = endpoint.forms.map((form) => {
      expect(form.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      expect(form.get('client_secret')).toBeNull();
      expect(form.get('subject_token')).toBe(token);
      expect(form.get('subject_token_type')).toBe('urn:ietf:params:oauth:token-type:access_token');
      expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:token-exchange');
      const [header, payload, signature] = (form.get('client_assertion') ?? '').split('.');
      const good = verifySignature(
        'sha256',
        Buffer.from(`${header}.${payload}`),
        { key: clientKey.publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(signature, 'base64url'),
      );
      expect(good).toBe(true);
      return JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    });
    expect(endpoint.headers.map((h) => h.authorization)).toEqual([undefined, undefined]);
    expect(assertions[0]).toMatchObject({ iss: 'mcp-exchange-jwt', sub: 'mcp-exchange-jwt', aud: endpoint.url });
    expect(assertions[0].jti).not.toBe(assertions[1].jti);
  });
});

describe('failures of the token endpoint', () => {
  const viaEndpoint = (extra: Record<string, unknown> = {}) => front({}, { endpoint: endpoint.url, ...extra });

  it('answers 503 with Retry-After while the server fails, caches nothing, and exchanges once it is back', async () => {
    const auth = viaEndpoint();
    const token = await userToken(as);
    endpoint.mode = { kind: 'answer', status: 503, body: '{}', headers: { 'Retry-After': '7' } };
    const down = await rejection(auth.exchange(token, { resource: downstream.resource }));
    expect([down.status, down.code, down.reason, down.headers['Retry-After']]).toEqual([
      503,
      'verification_unavailable',
      'exchange-status-503',
      '7',
    ]);
    endpoint.mode = { kind: 'forward' };
    await auth.exchange(token, { resource: downstream.resource });
    await auth.exchange(token, { resource: downstream.resource });
    expect(endpoint.forms).toHaveLength(2);
  });

  it('answers 503 when the server cannot be reached, and opens the breaker after repeated outages', async () => {
    const auth = viaEndpoint({ breaker: { failures: 2, cooldown: '30s' } });
    const token = await userToken(as);
    await endpoint.server.stop();
    try {
      const reasons: Array<string | undefined> = [];
      for (let i = 0; i < 3; i++)
        reasons.push((await rejection(auth.exchange(token, { resource: downstream.resource }))).reason);
      expect(reasons).toEqual(['exchange-network', 'exchange-network', 'breaker-open']);
    } finally {
      await endpoint.server.start();
    }
  });

  it.each([
    ['without access_token', JSON.stringify({ token_type: 'Bearer', expires_in: 60 })],
    ['without token_type', JSON.stringify({ access_token: 'abc', expires_in: 60 })],
    ['with token_type N_A', JSON.stringify({ access_token: 'abc', token_type: 'N_A' })],
    ['with a line break in the token', JSON.stringify({ access_token: 'abc\r\nX-Evil: 1', token_type: 'Bearer' })],
    ['that is not JSON', '<html>oops</html>'],
    ['over 64 KiB', JSON.stringify({ access_token: 'a'.repeat(70_000), token_type: 'Bearer' })],
  ])('answers 503 exchange-answer-invalid for an answer %s, and caches nothing', async (_what, body) => {
    const auth = viaEndpoint();
    const token = await userToken(as);
    endpoint.mode = { kind: 'answer', status: 200, body };
    const refused = await rejection(auth.exchange(token, { resource: downstream.resource }));
    expect([refused.status, refused.reason]).toEqual([503, 'exchange-answer-invalid']);
    endpoint.mode = { kind: 'forward' };
    await auth.exchange(token, { resource: downstream.resource });
    expect(endpoint.forms).toHaveLength(2);
  });

  it.each(['invalid_grant', 'invalid_target', 'invalid_scope', 'invalid_request', 'unauthorized_client'])(
    'answers exchange_refused with reason %s for that 400, never the server’s description',
    async (error) => {
      const auth = viaEndpoint();
      endpoint.mode = {
        kind: 'answer',
        status: 400,
        body: JSON.stringify({ error, error_description: 'secret internal detail' }),
      };
      const refused = await rejection(auth.exchange(await userToken(as), { resource: downstream.resource }));
      expect([refused.status, refused.code, refused.reason, refused.message]).toEqual([
        403,
        'exchange_refused',
        error,
        'Token exchange refused',
      ]);
      expect(JSON.stringify(refused) + String(refused.hint)).not.toContain('secret internal detail');
    },
  );

  it('counts its answers as every remote source does: 400s never open the breaker, a 503 Retry-After keeps it open', async () => {
    const auth = viaEndpoint({ breaker: { failures: 2, cooldown: '1s' } });
    const token = await userToken(as);
    endpoint.mode = { kind: 'answer', status: 400, body: JSON.stringify({ error: 'invalid_target' }) };
    for (let i = 0; i < 4; i++)
      expect((await rejection(auth.exchange(token, { audience: `https://api${i}.example` }))).reason).toBe(
        'invalid_target',
      );
    endpoint.mode = { kind: 'answer', status: 503, body: '{}', headers: { 'Retry-After': '40' } };
    for (let i = 0; i < 2; i++)
      expect((await rejection(auth.exchange(token, { resource: downstream.resource }))).reason).toBe(
        'exchange-status-503',
      );
    const open = await rejection(auth.exchange(token, { resource: downstream.resource }));
    // Open for the 40 s the server asked for, not the 1 s cooldown (remote/answer-class.ts, the demand).
    expect([open.reason, Number(open.headers['Retry-After']) > 30, endpoint.forms.length]).toEqual([
      'breaker-open',
      true,
      6,
    ]);
  });

  it('holds every new exchange for the Retry-After of a 429, with no call, while cached tokens still answer', async () => {
    const auth = viaEndpoint();
    const token = await userToken(as);
    const cached = await auth.exchange(token, { resource: downstream.resource });
    endpoint.mode = { kind: 'answer', status: 429, body: '{}', headers: { 'Retry-After': '30' } };
    const throttled = await rejection(auth.exchange(token, { audience: 'https://ci.example' }));
    const held = await rejection(auth.exchange(await userToken(as, { sub: 'bob' }), { resource: downstream.resource }));
    expect([throttled.reason, held.reason, endpoint.forms.length]).toEqual([
      'exchange-throttled',
      'exchange-throttled',
      2,
    ]);
    expect(Number(held.headers['Retry-After'])).toBeGreaterThan(25);
    expect((await auth.exchange(token, { resource: downstream.resource })).accessToken).toBe(cached.accessToken);
  });

  it('answers 503 exchange-busy beyond maxInflight calls under way, with no call', async () => {
    let release: () => void = () => undefined;
    endpoint.mode = { kind: 'hold', release: new Promise<void>((resolve) => (release = resolve)) };
    const auth = viaEndpoint({ maxInflight: 1 });
    const first = auth.exchange(await userToken(as), { resource: downstream.resource });
    await until(() => endpoint.forms.length === 1, 'the first exchange to arrive');
    const busy = await rejection(auth.exchange(await userToken(as, { sub: 'bob' }), { resource: downstream.resource }));
    release();
    await first;
    expect([busy.status, busy.reason, endpoint.forms.length]).toEqual([503, 'exchange-busy', 1]);
  });
});
