import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { CircuitBreaker, resolveBreaker } from '../../lib/remote/breaker';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';
import { hang, json, startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { createIdentityService } from '../fixtures/identity-service';

let upstream: LoopbackServer;
const { issued, issue, verify: identityService } = createIdentityService();
const opened: TokenAuth[] = [];

beforeEach(async () => {
  issued.clear();
  upstream = await startLoopbackServer(identityService);
});

afterEach(async () => {
  for (const auth of opened.splice(0)) auth.close();
  await upstream.close();
});

describe('key.breaker options', () => {
  const base = { issuer: ISSUER, audience: AUDIENCE };
  it.each([
    [{ failures: 0 }, /key\.breaker\.failures/],
    [{ failures: 1.5 }, /key\.breaker\.failures/],
    [{ cooldown: 0 }, /key\.breaker\.cooldown/],
    [{ cooldown: 'soon' }, /key\.breaker\.cooldown/],
    [{ probes: 2 }, /key\.breaker\.probes/],
    ['on', /key\.breaker/],
  ])('throws a TypeError at createTokenAuth for breaker %p', (breaker, message) => {
    expect(() =>
      createTokenAuth({ ...base, key: { upstream: 'http://127.0.0.1:1', breaker } } as unknown as TokenAuthOptions),
    ).toThrow(message);
  });

  it('belongs to key.upstream only', () => {
    expect(() =>
      createTokenAuth({ ...base, key: { secret: SECRET, breaker: {} } } as unknown as TokenAuthOptions),
    ).toThrow(/key\.breaker/);
  });

  it('defaults to 5 failures and a 5 s cooldown, and can be turned off', () => {
    expect(resolveBreaker(undefined, 'key.breaker')).toEqual({ failures: 5, cooldown: 5 });
    expect(resolveBreaker(false, 'key.breaker')).toBe(false);
    const auth = createTokenAuth({ ...base, key: { upstream: 'http://127.0.0.1:1', breaker: false } });
    expect(auth.stats().breaker).toBeUndefined();
    auth.close();
  });
});

describe('CircuitBreaker', () => {
  const outage = () => Promise.reject(new Error('down'));
  const always = () => true;

  it('counts only outages in a row, and an answer resets the count', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 2, cooldown: 1 }, () => now);
    await expect(breaker.run(outage, always)).rejects.toThrow('down');
    await expect(
      breaker.run(
        () => Promise.reject(new Error('401')),
        () => false,
      ),
    ).rejects.toThrow('401');
    expect(breaker.stats()).toEqual({ state: 'closed', failures: 0, openedAt: undefined });
    await expect(breaker.run(outage, always)).rejects.toThrow('down');
    await expect(breaker.run(outage, always)).rejects.toThrow('down');
    expect(breaker.stats()).toEqual({ state: 'open', failures: 2, openedAt: 0 });
    now = 400;
    await expect(breaker.run(() => Promise.resolve('never called'), always)).rejects.toMatchObject({
      reason: 'breaker-open',
      headers: { 'Retry-After': '1' },
    });
    now = 1000;
    expect(breaker.stats().state).toBe('half-open');
    await expect(breaker.run(outage, always)).rejects.toThrow('down'); // the failed probe opens it again
    expect(breaker.stats()).toMatchObject({ state: 'open', openedAt: 1000 });
    now = 2000;
    await expect(breaker.run(() => Promise.resolve('ok'), always)).resolves.toBe('ok');
    expect(breaker.stats()).toEqual({ state: 'closed', failures: 0, openedAt: 1000 });
  });
});

describe('CircuitBreaker and slow calls', () => {
  const always = () => true;
  /** A call that hangs until `finish` is called. */
  function hanging(): { call: () => Promise<string>; finish: () => void } {
    let finish: () => void = () => undefined;
    const call = () => new Promise<string>((resolve) => (finish = () => resolve('late')));
    return { call: () => call(), finish: () => finish() };
  }

  it('opens once `failures` calls have waited slowAfter with no answer meanwhile, and the first answer closes it', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 3, cooldown: 5 }, () => now, 100);
    const held = [hanging(), hanging(), hanging()];
    const pending = held.map((h) => breaker.run(h.call, always));
    now = 50;
    // Not slow yet: a fourth call goes out.
    const fourth = hanging();
    const fourthPending = breaker.run(fourth.call, always);
    now = 100;
    let called = false;
    await expect(
      breaker.run(() => {
        called = true;
        return Promise.resolve('ok');
      }, always),
    ).rejects.toMatchObject({ reason: 'breaker-open', headers: { 'Retry-After': '5' } });
    expect(called).toBe(false);
    expect(breaker.stats()).toMatchObject({ state: 'open', failures: 0, openedAt: 100 });
    // The remote was only slow: its first answer closes the breaker.
    held[0].finish();
    await expect(pending[0]).resolves.toBe('late');
    expect(breaker.stats().state).toBe('closed');
    await expect(breaker.run(() => Promise.resolve('ok'), always)).resolves.toBe('ok');
    for (const h of [...held.slice(1), fourth]) h.finish();
    await Promise.all([...pending, fourthPending]);
  });

  it('does not count calls as slow while others are answered', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 3, cooldown: 5 }, () => now, 100);
    const held = [hanging(), hanging(), hanging()];
    const pending = held.map((h) => breaker.run(h.call, always));
    now = 90;
    await expect(breaker.run(() => Promise.resolve('answered'), always)).resolves.toBe('answered');
    // Three calls have waited 150 ms, but one was answered 60 ms ago: the remote is up.
    now = 150;
    await expect(breaker.run(() => Promise.resolve('ok'), always)).resolves.toBe('ok');
    // No answer for 101 ms (the last at 150), and the three calls waiting 251 ms: slow.
    now = 251;
    await expect(breaker.run(() => Promise.resolve('never'), always)).rejects.toMatchObject({ reason: 'breaker-open' });
    for (const h of held) h.finish();
    await Promise.all(pending);
  });

  it('has no slow-call rule without slowAfter, nor below `failures` calls under way', async () => {
    let now = 0;
    const without = new CircuitBreaker({ failures: 2, cooldown: 5 }, () => now);
    const fewer = new CircuitBreaker({ failures: 2, cooldown: 5 }, () => now, 100);
    const held = [hanging(), hanging(), hanging()];
    const pending = [
      without.run(held[0].call, always),
      without.run(held[1].call, always),
      fewer.run(held[2].call, always),
    ];
    now = 10_000;
    await expect(without.run(() => Promise.resolve('ok'), always)).resolves.toBe('ok');
    await expect(fewer.run(() => Promise.resolve('ok'), always)).resolves.toBe('ok');
    for (const h of held) h.finish();
    await Promise.all(pending);
  });
});

describe('CircuitBreaker and a wait the remote asks for (Retry-After)', () => {
  const demand = (seconds: number) => Object.assign(new Error('429'), { seconds });
  const demanded = (err: unknown) => (err as { seconds?: number }).seconds;
  const always = () => true;

  it('counts a wait asked for as one failure: it opens nothing below the threshold', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 2, cooldown: 3 }, () => now);
    await expect(breaker.run(() => Promise.reject(demand(300)), always, demanded)).rejects.toThrow('429');
    expect(breaker.stats()).toEqual({ state: 'closed', failures: 1, openedAt: undefined });
    now = 1_000;
    await expect(breaker.run(() => Promise.resolve('ok'), always, demanded)).resolves.toBe('ok');
    expect(breaker.stats()).toEqual({ state: 'closed', failures: 0, openedAt: undefined });
    // The run the success ended does not lend its wait to a later opening: that one lasts the cooldown.
    await expect(breaker.run(() => Promise.reject(new Error('down')), always, demanded)).rejects.toThrow('down');
    await expect(breaker.run(() => Promise.reject(new Error('down')), always, demanded)).rejects.toThrow('down');
    expect(breaker.stats()).toMatchObject({ state: 'open', failures: 2, openedAt: 1_000 });
    now = 4_000;
    expect(breaker.stats().state).toBe('half-open');
  });

  it('once open, stays open for the longest wait the failures that opened it asked for, lets no probe through before, and tells each refused call what is left', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 2, cooldown: 3 }, () => now);
    await expect(breaker.run(() => Promise.reject(demand(120)), always, demanded)).rejects.toThrow('429');
    expect(breaker.stats()).toMatchObject({ state: 'closed', failures: 1 });
    now = 1_000;
    await expect(breaker.run(() => Promise.reject(demand(30)), always, demanded)).rejects.toThrow('429');
    expect(breaker.stats()).toMatchObject({ state: 'open', failures: 2, openedAt: 1_000 });
    let calls = 0;
    const probe = () => {
      calls++;
      return Promise.resolve('ok');
    };
    for (const [at, left] of [
      [2_000, '118'],
      [4_500, '116'],
      [60_000, '60'],
      [119_500, '1'],
    ] as const) {
      now = at;
      await expect(breaker.run(probe, always, demanded)).rejects.toMatchObject({
        reason: 'breaker-open',
        headers: { 'Retry-After': left },
      });
    }
    expect(calls).toBe(0);
    now = 120_000;
    expect(breaker.stats().state).toBe('half-open');
    await expect(breaker.run(probe, always, demanded)).resolves.toBe('ok');
    expect(breaker.stats()).toMatchObject({ state: 'closed', failures: 0 });
  });

  it('is not closed early by a call that was under way when it opened for a wait asked for', async () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failures: 2, cooldown: 3 }, () => now);
    let finish: (value: string) => void = () => undefined;
    const earlier = breaker.run(() => new Promise<string>((resolve) => (finish = resolve)), always, demanded);
    await expect(breaker.run(() => Promise.reject(demand(60)), always, demanded)).rejects.toThrow('429');
    await expect(breaker.run(() => Promise.reject(demand(60)), always, demanded)).rejects.toThrow('429');
    finish('ok');
    await expect(earlier).resolves.toBe('ok');
    now = 10_000;
    await expect(breaker.run(() => Promise.resolve('probe'), always, demanded)).rejects.toMatchObject({
      headers: { 'Retry-After': '50' },
    });
  });
});

describe.each(EXPRESS_VERSIONS)('upstream mode with a circuit breaker, through %s', (_name, express) => {
  function app(onError: (err: TokenAuthError) => void) {
    const auth = createTokenAuth({
      key: { upstream: upstream.origin, timeout: '300ms', breaker: { failures: 3, cooldown: '1s' } },
      issuer: ISSUER,
      audience: AUDIENCE,
      onError,
    });
    opened.push(auth);
    return {
      auth,
      server: appWith(express, auth, { scopes: ['identify'], answer: (claims) => ({ jti: claims?.jti }) }),
    };
  }

  it('opens after consecutive outages, answers 503 at once, lets one probe through at a time, and closes on its success', async () => {
    const reasons: string[] = [];
    const { auth, server } = app((err) => reasons.push(err.reason ?? ''));
    expect((await request(server).get('/me').set('Authorization', `Bearer ${issue()}`)).status).toBe(200);
    expect(auth.stats().breaker).toEqual({ state: 'closed', failures: 0, openedAt: undefined });

    // The upstream hangs: three new tokens each wait the whole timeout, and the breaker opens.
    upstream.handler = hang;
    const slow = await Promise.all(
      [1, 2, 3].map(() => request(server).get('/me').set('Authorization', `Bearer ${issue()}`)),
    );
    expect(slow.map((r) => r.status)).toEqual([503, 503, 503]);
    expect(auth.stats().breaker).toMatchObject({ state: 'open', failures: 3 });
    const calls = upstream.requests;

    // Open: new tokens get 503 with Retry-After without reaching the upstream.
    const started = process.hrtime.bigint();
    for (let i = 0; i < 20; i++) {
      const res = await request(server).get('/me').set('Authorization', `Bearer ${issue()}`);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const perRequestMs = Number(process.hrtime.bigint() - started) / 1e6 / 20;
    console.log(`breaker open: a 503 took ${perRequestMs.toFixed(1)} ms on average (the upstream timeout is 300 ms)`);
    expect(upstream.requests).toBe(calls);
    expect(reasons.filter((r) => r === 'breaker-open')).toHaveLength(20);

    // After the cooldown, of five concurrent new tokens exactly one reaches the upstream (the probe).
    await until(() => auth.stats().breaker?.state === 'half-open', 'the cooldown to pass', 300);
    const probes = await Promise.all(
      [1, 2, 3, 4, 5].map(() => request(server).get('/me').set('Authorization', `Bearer ${issue()}`)),
    );
    expect(probes.map((r) => r.status)).toEqual([503, 503, 503, 503, 503]);
    expect(upstream.requests).toBe(calls + 1);
    expect(auth.stats().breaker?.state).toBe('open');

    // The upstream is back: the next probe succeeds and closes the breaker; traffic flows again.
    upstream.handler = identityService;
    await until(() => auth.stats().breaker?.state === 'half-open', 'the second cooldown to pass', 300);
    expect((await request(server).get('/me').set('Authorization', `Bearer ${issue()}`)).status).toBe(200);
    expect(auth.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
    expect((await request(server).get('/me').set('Authorization', `Bearer ${issue()}`)).status).toBe(200);
  });

  it("holds every new token's call for a 429's Retry-After (RFC 6585: this client as a whole), cached users still answered", async () => {
    const reasons: string[] = [];
    const { auth, server } = app((err) => reasons.push(err.reason ?? ''));
    const cached = issue();
    expect((await request(server).get('/me').set('Authorization', `Bearer ${cached}`)).status).toBe(200);
    upstream.handler = (_req, res) =>
      json(res, 429, { status: 'error', message: 'slow down' }, { 'Retry-After': '120' });
    const limited = await request(server).get('/me').set('Authorization', `Bearer ${issue()}`);
    expect([limited.status, limited.headers['retry-after']]).toEqual([503, '120']);
    // The upstream would answer now: any call that reached it would succeed.
    upstream.handler = identityService;
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const held = await request(server).get('/me').set('Authorization', `Bearer ${issue()}`);
      expect(held.status).toBe(503);
      expect(held.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
      waits.push(Number(held.headers['retry-after']));
    }
    expect(upstream.requests).toBe(2);
    expect(reasons.slice(-7)).toEqual(Array(7).fill('upstream-throttled'));
    // The time left, counting down: never more than asked, never rising.
    for (const [i, wait] of waits.entries()) {
      expect(wait).toBeLessThanOrEqual(i === 0 ? 120 : waits[i - 1]);
      expect(wait).toBeGreaterThan(100);
    }
    expect((await request(server).get('/me').set('Authorization', `Bearer ${cached}`)).status).toBe(200);
    // A throttle is no outage: the breaker never counted it.
    expect(auth.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
  });

  it('once 503s open it, stays open as long as their Retry-After asks, telling every client the time left', async () => {
    const { auth, server } = app(() => undefined);
    upstream.handler = (_req, res) =>
      json(res, 503, { status: 'error', message: 'down for maintenance' }, { 'Retry-After': '120' });
    for (let i = 0; i < 3; i++) {
      const res = await request(server).get('/me').set('Authorization', `Bearer ${issue()}`);
      expect([res.status, res.headers['retry-after']]).toEqual([503, '120']);
    }
    expect(auth.stats().breaker).toMatchObject({ state: 'open', failures: 3 });
    for (let i = 0; i < 3; i++) {
      const res = await request(server).get('/me').set('Authorization', `Bearer ${issue()}`);
      expect(res.status).toBe(503);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(110);
    }
    expect(upstream.requests).toBe(3);
  });

  it("treats the upstream's 401 as an answer, never as a failure", async () => {
    const { auth, server } = app(() => undefined);
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await request(server)
            .get('/me')
            .set('Authorization', `Bearer ${randomBytes(16).toString('base64url')}`)
        ).status,
      ).toBe(401);
    }
    expect(auth.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
  });
});
