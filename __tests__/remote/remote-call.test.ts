/**
 * What stands between a new token and a remote server (remote/remote-call.ts, remote/answer-class.ts), through both
 * remote sources: answers about one token never open the breaker for everyone, a 429 holds every new token's call
 * for its Retry-After, a 503's Retry-After keeps the breaker open, and a hanging server holds a handful of callers,
 * not every caller of a timeout's span. Upstream mode against a loopback identity service; introspection against a
 * real oidc-provider 9 behind a loopback proxy that answers for chosen tokens. Counts, never durations.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createTokenAuth, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { guardRemoteCall } from '../../lib/remote/remote-call';
import { outage, throttled } from '../../lib/remote/answer-class';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { createIdentityService } from '../fixtures/identity-service';
import { forwardIntrospection, type Answer } from '../fixtures/introspection-proxy';
import { AUDIENCE, ISSUER } from '../fixtures/issuer';
import { hang, json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';

const opened: TokenAuth[] = [];

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

function made(options: Partial<TokenAuthOptions>): TokenAuth {
  const auth = createTokenAuth(options as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

/** How many of `tokens` were refused 503, verified one after another. */
async function refusedOf(auth: TokenAuth, tokens: string[]): Promise<number> {
  let refused = 0;
  for (const token of tokens) {
    try {
      await auth.verify(token);
    } catch (err) {
      if ((err as TokenAuthError).status === 503) refused++;
    }
  }
  return refused;
}

describe('guardRemoteCall', () => {
  it("holds every call for a throttle's wait, telling each the time left, then lets calls through", async () => {
    let now = 0;
    let calls = 0;
    let answer: () => Promise<string> = () => Promise.reject(throttled('test-status-429', 120));
    const guarded = guardRemoteCall(
      () => {
        calls++;
        return answer();
      },
      { prefix: 'test', breaker: false, maxInflight: 10, timeout: 5 },
      () => now,
    );
    await expect(guarded.call('a')).rejects.toMatchObject({
      reason: 'test-status-429',
      headers: { 'Retry-After': '120' },
    });
    answer = () => Promise.resolve('ok');
    for (const [at, left] of [
      [0, '120'],
      [30_000, '90'],
      [119_001, '1'],
    ] as const) {
      now = at;
      await expect(guarded.call('b')).rejects.toMatchObject({
        code: 'verification_unavailable',
        reason: 'test-throttled',
        headers: { 'Retry-After': left },
      });
    }
    expect(calls).toBe(1);
    now = 120_000;
    await expect(guarded.call('b')).resolves.toBe('ok');
    expect(calls).toBe(2);
  });

  it('counts outages against the breaker and a throttle not at all', async () => {
    const guarded = guardRemoteCall(
      (token) => Promise.reject(token === 'down' ? outage('test-timeout') : throttled('test-status-429', 1)),
      { prefix: 'test', breaker: { failures: 2, cooldown: 5 }, maxInflight: 10, timeout: 5 },
    );
    await expect(guarded.call('down')).rejects.toMatchObject({ reason: 'test-timeout' });
    expect(guarded.breakerStats?.()).toMatchObject({ state: 'closed', failures: 1 });
    await expect(guarded.call('limited')).rejects.toMatchObject({ reason: 'test-status-429' });
    expect(guarded.breakerStats?.()).toMatchObject({ state: 'closed', failures: 0 });
  });
});

describe('upstream mode', () => {
  const { issue, verify: identityService } = createIdentityService();
  let upstream: LoopbackServer;
  /** Tokens the upstream answers about with `bad`, whatever they are. */
  const refused = new Set<string>();
  let bad: (res: ServerResponse) => void = () => undefined;

  function answering(req: IncomingMessage, res: ServerResponse): void {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (refused.has(token)) bad(res);
    else identityService(req, res);
  }

  beforeAll(async () => {
    upstream = await startLoopbackServer(answering);
  });

  afterAll(async () => {
    await upstream.close();
  });

  beforeEach(() => {
    upstream.handler = answering;
    upstream.reset();
    refused.clear();
  });

  const upstreamAuth = (key: Record<string, unknown> = {}) =>
    made({ key: { upstream: upstream.origin, ...key }, issuer: ISSUER, audience: AUDIENCE });

  it.each<[string, (res: ServerResponse) => void]>([
    ['a 400', (res) => json(res, 400, { status: 'error', message: 'Bad request' })],
    ['a 413', (res) => json(res, 413, { status: 'error', message: 'Payload too large' })],
    ['a body of the wrong shape', (res) => json(res, 200, { user: 'someone' })],
  ])('five tokens answered %s are their own fault (401): 0 of 20 other users refused', async (_what, answer) => {
    bad = answer;
    const auth = upstreamAuth();
    for (let i = 0; i < 5; i++) {
      const token = `bad-${i}-${randomBytes(8).toString('hex')}`;
      refused.add(token);
      const err = await rejection(auth.verify(token));
      expect([err.code, err.status]).toEqual(['invalid_token', 401]);
    }
    expect(auth.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
    expect(
      await refusedOf(
        auth,
        Array.from({ length: 20 }, () => issue()),
      ),
    ).toBe(0);
  });

  it('holds a handful of callers for the whole timeout while it hangs, not every caller of the timeout (300 new tokens at 200/s)', async () => {
    upstream.handler = hang;
    const auth = upstreamAuth({ timeout: '1s' });
    const reasons: string[] = [];
    const settled: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) {
      settled.push(
        rejection(auth.verify(`token-${i}-${randomBytes(8).toString('hex')}`)).then((err) => {
          reasons.push(err.reason ?? '');
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(settled);
    const waited = reasons.filter((reason) => reason === 'upstream-timeout').length;
    console.log(
      `hanging upstream, 300 new tokens: ${waited} waited the whole timeout, ${upstream.requests} calls made; ` +
        `the rest refused at once (${reasons.filter((r) => r === 'breaker-open').length} breaker-open)`,
    );
    // Sent at most one per 5 ms, the calls made before five have waited a tenth of the timeout are about 25.
    expect(waited).toBeGreaterThanOrEqual(5);
    expect(waited).toBeLessThanOrEqual(30);
    expect(upstream.requests).toBe(waited);
    expect(reasons.filter((r) => r === 'breaker-open').length).toBe(300 - waited);
  }, 30_000);
});

describe('introspection', () => {
  let as: AuthorizationServer;
  let proxy: LoopbackServer;
  /** Tokens the proxy answers about itself, with `bad`. */
  const chosen = new Set<string>();
  let bad: (answer: Answer) => Answer = (answer) => answer;
  /** Introspection calls that reached the provider. */
  let reached = 0;

  function answering(req: IncomingMessage, res: ServerResponse): void {
    forwardIntrospection(req, res, `${as.issuer}/token/introspection`, (answer, form) => {
      if (chosen.has(form.get('token') ?? '')) return bad(answer);
      reached++;
      return answer;
    });
  }

  beforeAll(async () => {
    [as, proxy] = await Promise.all([startAuthorizationServer({ introspection: {} }), startLoopbackServer(answering)]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([as?.close(), proxy?.close()]);
  });

  beforeEach(() => {
    chosen.clear();
    reached = 0;
  });

  /** Introspecting through the proxy as rs-plain (plain JSON answers, so wrong shapes can be made). */
  const introspecting = (breaker?: Record<string, unknown>) =>
    made({
      issuerBaseURL: as.issuer,
      audience: as.resource,
      introspection: {
        clientId: 'rs-plain',
        clientSecret: as.resourceServerSecret,
        endpoint: `${proxy.origin}/token/introspection`,
        breaker,
      },
    });
  const badTokens = (n: number) =>
    Array.from({ length: n }, () => {
      const token = `made-up-${randomBytes(12).toString('hex')}`;
      chosen.add(token);
      return token;
    });
  const users = (n: number) => Promise.all(Array.from({ length: n }, () => as.token()));

  it.each<[string, string, (answer: Answer) => Answer]>([
    [
      'a body of the wrong shape',
      'introspection-answer',
      () => ({ status: 200, type: 'application/json', body: '{"valid":true}' }),
    ],
    [
      'a 400',
      'introspection-status-400',
      () => ({ status: 400, type: 'application/json', body: '{"error":"invalid_request"}' }),
    ],
    ['a 413', 'introspection-status-413', () => ({ status: 413, type: 'text/plain', body: 'too large' })],
  ])(
    'five tokens answered %s are their own fault (401): 0 of 20 other users refused',
    async (_what, reason, answer) => {
      bad = answer;
      const auth = introspecting();
      for (const token of badTokens(5)) {
        const err = await rejection(auth.verify(token));
        expect([err.code, err.status, err.reason]).toEqual(['invalid_token', 401, reason]);
      }
      expect(auth.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
      expect(await refusedOf(auth, await users(20))).toBe(0);
    },
  );

  it('keeps every user in while five bad tokens come before each twenty of them (0 of 80 refused)', async () => {
    bad = () => ({ status: 200, type: 'application/json', body: '[]' });
    const auth = introspecting();
    let blocked = 0;
    for (let round = 0; round < 4; round++) {
      for (const token of badTokens(5)) await rejection(auth.verify(token));
      blocked += await refusedOf(auth, await users(20));
    }
    expect(blocked).toBe(0);
  });

  it('stays open as long as a 503 Retry-After asks once 503s open its breaker', async () => {
    bad = () => ({ status: 503, type: 'text/plain', body: 'maintenance' });
    const auth = introspecting({ failures: 3 });
    const tokens = badTokens(6);
    proxy.reset();
    proxy.handler = (req, res) => {
      res.setHeader('Retry-After', '120');
      answering(req, res);
    };
    try {
      for (const token of tokens.slice(0, 3)) {
        const err = await rejection(auth.verify(token));
        expect([err.status, err.reason, err.headers['Retry-After']]).toEqual([503, 'introspection-status-503', '120']);
      }
      expect(auth.stats().breaker).toMatchObject({ state: 'open', failures: 3 });
      for (const token of tokens.slice(3)) {
        const err = await rejection(auth.verify(token));
        expect(err.reason).toBe('breaker-open');
        expect(Number(err.headers['Retry-After'])).toBeGreaterThan(100);
      }
      expect(proxy.requests).toBe(3);
    } finally {
      proxy.handler = answering;
    }
  });

  it("holds every new token's call for a 429's Retry-After: 0 of 7 reach the server, cached users still answered", async () => {
    const auth = introspecting();
    const [cached, limited, ...later] = await users(9);
    await expect(auth.verify(cached)).resolves.toMatchObject({ scope: 'read' });
    chosen.add(limited);
    bad = () => ({ status: 429, type: 'application/json', body: '{"error":"slow_down"}' });
    proxy.handler = (req, res) => {
      res.setHeader('Retry-After', '120');
      answering(req, res);
    };
    try {
      const first = await rejection(auth.verify(limited));
      expect([first.status, first.reason, first.headers['Retry-After']]).toEqual([
        503,
        'introspection-status-429',
        '120',
      ]);
      reached = 0;
      const waits: number[] = [];
      for (const token of later) {
        const err = await rejection(auth.verify(token));
        expect([err.code, err.reason]).toEqual(['verification_unavailable', 'introspection-throttled']);
        waits.push(Number(err.headers['Retry-After']));
      }
      expect(reached).toBe(0);
      for (const [i, wait] of waits.entries()) {
        expect(wait).toBeLessThanOrEqual(i === 0 ? 120 : waits[i - 1]);
        expect(wait).toBeGreaterThan(100);
      }
      await expect(auth.verify(cached)).resolves.toMatchObject({ scope: 'read' });
    } finally {
      proxy.handler = answering;
    }
  });
});
