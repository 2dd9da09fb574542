// The ALB's `kid` is the token's, so anyone's: it names the key URL, so it must never steer a fetch to another path or
// host. Only a UUID is ever fetched; every other kid is a 401 with no request made to the key server or anywhere else.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, type TokenAuthError } from '../../lib';
import { awsAlb } from '../../lib/edge';
import { MAX_KID_FETCHES } from '../../lib/keys/kid-budget';
import { ALB_ARN, ALB_CLIENT, ALB_ISSUER, startAwsAlb, type AlbStandIn } from '../fixtures/edge-proxies';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';

describe.each(EXPRESS_VERSIONS)('awsAlb kid (%s)', (_name, express) => {
  let alb: AlbStandIn;
  let elsewhere: LoopbackServer;
  beforeAll(async () => {
    alb = await startAwsAlb();
    elsewhere = await startLoopbackServer((_req, res) => res.end('-----BEGIN PUBLIC KEY-----'));
  });
  afterAll(async () => {
    await alb.close();
    await elsewhere.close();
  });

  const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
  /** Each hostile kid, made from the origin of a second loopback server that must see no request either. */
  const HOSTILE: Array<[string, (other: string) => string]> = [
    ['a parent path', () => '../x'],
    ['a sub-path', () => 'a/b'],
    ['an encoded parent', () => '%2e%2e'],
    ['an encoded slash after a UUID', () => `${uuid}%2F..%2Fx`],
    ['a UUID then a parent path', () => `${uuid}/../x`],
    ['200 characters', () => 'a'.repeat(200)],
    ['a URL', (other) => `${other}/key`],
    ['a scheme-relative host', (other) => `${other.replace('http:', '')}/key`],
    ['a UUID with a newline after it', () => `${uuid}\n`],
    ['a UUID with a query', () => `${uuid}?x=1`],
    ['an empty kid', () => ''],
  ];

  it.each(HOSTILE)('refuses %s with 401, making no request', async (_name, kidOf) => {
    const kid = kidOf(elsewhere.origin);
    const refusals: TokenAuthError[] = [];
    const auth = createTokenAuth({
      ...awsAlb({ signer: ALB_ARN, clientId: ALB_CLIENT, issuer: ALB_ISSUER, keysBaseURL: alb.keysBaseURL }),
      onError: (err) => refusals.push(err),
    });
    const res = await request(appWith(express, auth))
      .get('/me')
      .set('x-amzn-oidc-data', alb.mint({}, { header: { kid } }))
      .expect(401);
    expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
    expect(refusals.map((err) => [err.code, err.reason])).toEqual([['invalid_token', 'kid']]);
    expect(refusals[0].hint).toMatch(/UUID/);
    expect(alb.fetches()).toBe(0);
    expect(elsewhere.requests).toBe(0);
    auth.close();
  });

  it('fetches a UUID kid, and only under the key base', async () => {
    const auth = createTokenAuth(
      awsAlb({ signer: ALB_ARN, clientId: ALB_CLIENT, issuer: ALB_ISSUER, keysBaseURL: `${alb.keysBaseURL}/keys/` }),
    );
    await request(appWith(express, auth)).get('/me').set('x-amzn-oidc-data', alb.mint()).expect(401);
    expect(alb.server.seen.map((seen) => seen.url)).toEqual([`/keys/${alb.kid}`]);
    alb.server.reset();
    auth.close();
  });
});

// A client that reaches the app directly can send x-amzn-oidc-data with made-up UUID kids (the right signer, client
// and issuer in the header): each new kid may cost the key server a request, within a budget per cooldown. A flood
// of them must neither starve a real rotation nor grow memory (keys/kid-budget.ts; the clock is the test's).
describe('awsAlb under a flood of forged kids', () => {
  let alb: AlbStandIn;
  beforeAll(async () => {
    alb = await startAwsAlb();
  });
  afterAll(() => alb.close());

  it('accepts a genuine assertion under a newly rotated kid within one cooldown (30 s), 20 forged kids a second', async () => {
    alb.server.reset();
    const start = Math.floor(Date.now() / 1000);
    let now = start;
    const auth = createTokenAuth({
      ...awsAlb({ signer: ALB_ARN, clientId: ALB_CLIENT, issuer: ALB_ISSUER, keysBaseURL: alb.keysBaseURL }),
      clock: () => now,
    });
    const outcomes: string[] = [];
    let acceptedAt: number | undefined;
    // 40 s of simulated time in steps of 50 ms: a forged kid each step (so each window's slots go within 200 ms of
    // its start), the rotated kid's assertion every 500 ms from 250 ms on.
    for (let tick = 0; tick < 40 * 20 && acceptedAt === undefined; tick++) {
      now = start + tick / 20;
      await auth.verify(alb.mint({}, { header: { kid: randomUUID() } })).catch(() => undefined);
      if (tick % 10 === 5) {
        const genuine = alb.mint({ username: `u${tick}` }, { header: { kid: alb.otherKid }, key: alb.otherKey });
        try {
          await auth.verify(genuine);
          acceptedAt = now;
        } catch (err) {
          outcomes.push((err as TokenAuthError).reason ?? '');
        }
      }
    }
    auth.close();
    expect(acceptedAt).toBeDefined();
    expect((acceptedAt as number) - (start + 0.25)).toBeLessThanOrEqual(30 + 1);
    expect(new Set(outcomes)).toEqual(new Set(['pem-cooldown']));
    // Per cooldown, at most MAX_KID_FETCHES requests reached the key server; the rotated kid once.
    expect(alb.fetches(`/${alb.otherKid}`)).toBe(1);
    expect(alb.fetches()).toBeLessThanOrEqual(MAX_KID_FETCHES * 2);
  });
});
