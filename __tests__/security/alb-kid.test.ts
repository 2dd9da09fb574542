// The ALB's `kid` is the token's, so anyone's: it names the key URL, so it must never steer a fetch to another path or
// host. Only a UUID is ever fetched; every other kid is a 401 with no request made to the key server or anywhere else.
import request from 'supertest';
import { createTokenAuth, type TokenAuthError } from '../../lib';
import { awsAlb } from '../../lib/edge';
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
