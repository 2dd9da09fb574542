import { randomBytes, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { createTestIssuer, type TestIssuer } from '../../lib/testing';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { listen } from '../fixtures/listen';
import { AUDIENCE, ISSUER, rsaKeys, shapeB, sign } from '../fixtures/issuer';
import { hang, json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';

const CHALLENGE_INVALID = 'Bearer realm="api", error="invalid_token", error_description="Invalid access token"';
const UNAVAILABLE = { status: 'error', message: 'Token verification unavailable' };
const INVALID = { status: 'error', message: 'Invalid access token' };

const rsa = rsaKeys();
const rsa2 = rsaKeys();

function jwk(publicKey: KeyObject, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...publicKey.export({ format: 'jwk' }), ...extra };
}
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

let now = Math.floor(Date.now() / 1000);
const clock = () => now;

describe.each(EXPRESS_VERSIONS)('remote key sources through %s', (_name, express) => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  beforeEach(() => {
    now = Math.floor(Date.now() / 1000);
  });

  /** A listening app: GET /me requires `identify` and echoes req.auth. One server, so bursts share one process state. */
  async function serve(options: TokenAuthOptions): Promise<{ server: string; auth: TokenAuth }> {
    const auth = createTokenAuth({ clock, ...options });
    const listening = await listen(
      appWith(express, auth, { scopes: ['identify'], errorHandler: options.errors === 'next' }),
    );
    cleanup.push(
      () => auth.close(),
      () => listening.close(),
    );
    return { server: listening.origin, auth };
  }

  async function loopback(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<LoopbackServer> {
    const server = await startLoopbackServer(handler);
    cleanup.push(() => server.close());
    return server;
  }

  function expectUnavailable(res: request.Response, retryAfter?: string): void {
    expect(res.status).toBe(503);
    expect(res.body).toEqual(UNAVAILABLE);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['retry-after']).toMatch(retryAfter === undefined ? /^[1-9]\d*$/ : new RegExp(`^${retryAfter}$`));
    expect(res.headers['www-authenticate']).toBeUndefined();
  }

  describe('key: { jwksUri }', () => {
    async function issuer(): Promise<TestIssuer> {
      const made = await createTestIssuer({ alg: 'RS256', jwks: true, clock, issuer: ISSUER, audience: AUDIENCE });
      cleanup.push(() => made.close());
      return made;
    }

    async function jwksServer(keys: () => unknown[]): Promise<LoopbackServer & { uri: string }> {
      const server = await loopback((_req, res) => json(res, 200, { keys: keys() }));
      return Object.assign(server, { uri: `${server.origin}/jwks.json` });
    }

    const jwksOptions = (jwksUri: string, key: Record<string, unknown> = {}): TokenAuthOptions =>
      ({ key: { jwksUri, ...key }, issuer: ISSUER, audience: AUDIENCE }) as TokenAuthOptions;

    const rs256 = (kid: string | undefined, key: KeyObject = rsa.privateKey) =>
      sign(shapeB(now), key, 'RS256', kid === undefined ? {} : { kid });

    it('answers 200 with req.auth, and finds a rotated key by one refetch', async () => {
      const keys = await issuer();
      const { server } = await serve(keys.options);
      const claims = keys.claims();
      const first = await request(server)
        .get('/me')
        .set(bearer(keys.sign(claims)))
        .expect(200);
      expect(first.body).toEqual(claims);
      keys.rotate();
      await request(server).get('/me').set(bearer(keys.sign())).expect(200);
      expect(keys.jwksRequests).toBe(2);
    });

    it('answers a burst of 20 requests with an unknown kid with 401s and at most one fetch', async () => {
      const jwks = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'known' })]);
      const { server } = await serve(jwksOptions(jwks.uri));
      await request(server)
        .get('/me')
        .set(bearer(rs256('known')))
        .expect(200);
      now += 31;
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_v, i) =>
          request(server)
            .get('/me')
            .set(bearer(sign(shapeB(now), rsa2.privateKey, 'RS256', { kid: `unknown-${i % 3}` }))),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(INVALID);
        expect(res.headers['www-authenticate']).toBe(CHALLENGE_INVALID);
      }
      expect(jwks.requests).toBe(2); // the warm-up fetch, and one for the whole burst
    });

    it('keeps answering 200 for known keys through an outage after warm-up', async () => {
      const keys = await issuer();
      const { server } = await serve(keys.options);
      await request(server).get('/me').set(bearer(keys.sign())).expect(200);
      await keys.close();
      await request(server).get('/me').set(bearer(keys.sign())).expect(200);
      keys.rotate();
      expectUnavailable(await request(server).get('/me').set(bearer(keys.sign())));
    });

    it('answers 503 with Retry-After when the JWKS is down at first use, then recovers', async () => {
      const jwks = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'k' })]);
      await jwks.stop();
      const { server } = await serve(jwksOptions(jwks.uri));
      const token = rs256('k');
      expectUnavailable(await request(server).get('/me').set(bearer(token)), '30');
      await jwks.start();
      now += 30;
      await request(server).get('/me').set(bearer(token)).expect(200);
    });

    it('answers 503 when the JWKS server is too slow', async () => {
      const jwks = await jwksServer(() => []);
      jwks.handler = hang;
      const { server } = await serve(jwksOptions(jwks.uri, { timeout: '300ms' }));
      expectUnavailable(
        await request(server)
          .get('/me')
          .set(bearer(rs256('k'))),
      );
    });

    it('answers 503 for a JWKS that is garbage JSON', async () => {
      const jwks = await jwksServer(() => []);
      jwks.handler = (_req, res) => json(res, 200, '{"keys":[{"kty":');
      const { server } = await serve(jwksOptions(jwks.uri));
      expectUnavailable(
        await request(server)
          .get('/me')
          .set(bearer(rs256('k'))),
      );
    });

    it('passes a TokenAuthError with status 503 and Retry-After to errorHandler with errors: next', async () => {
      const jwks = await jwksServer(() => []);
      await jwks.stop();
      const { server } = await serve({ ...jwksOptions(jwks.uri), errors: 'next' });
      expectUnavailable(
        await request(server)
          .get('/me')
          .set(bearer(rs256('k'))),
        '30',
      );
    });

    it('accepts a kid-less token when the set holds exactly one usable key', async () => {
      const jwks = await jwksServer(() => [jwk(rsa.publicKey), jwk(rsa2.publicKey, { use: 'enc' })]);
      const { server } = await serve(jwksOptions(jwks.uri));
      await request(server)
        .get('/me')
        .set(bearer(rs256(undefined)))
        .expect(200);
    });

    it('answers 401 for a token whose kid names a key published for encryption', async () => {
      const jwks = await jwksServer(() => [
        jwk(rsa.publicKey, { kid: 'enc', use: 'enc' }),
        jwk(rsa2.publicKey, { kid: 'sig' }),
      ]);
      const { server } = await serve(jwksOptions(jwks.uri));
      const res = await request(server)
        .get('/me')
        .set(bearer(rs256('enc')))
        .expect(401);
      expect(res.body).toEqual(INVALID);
      expect(res.headers['www-authenticate']).toBe(CHALLENGE_INVALID);
    });
  });

  describe('key: { upstream }', () => {
    const issued = new Map<string, Record<string, unknown>>();
    function identityService(req: IncomingMessage, res: ServerResponse): void {
      const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
      const claims = req.url === '/auth/@users/verify' && token !== undefined ? issued.get(token) : undefined;
      if (claims === undefined) json(res, 401, { status: 'error', message: 'upstream says no' });
      else json(res, 200, claims);
    }
    function issue(overrides: Record<string, unknown> = {}): { token: string; claims: Record<string, unknown> } {
      const token = `${randomBytes(18).toString('base64')}+/~.op=`;
      const claims = shapeB(now, overrides);
      issued.set(token, claims);
      return { token, claims };
    }
    async function upstreamApp(): Promise<{ server: string; upstream: LoopbackServer }> {
      const upstream = await loopback(identityService);
      const { server } = await serve({ key: { upstream: upstream.origin }, issuer: ISSUER, audience: AUDIENCE });
      return { server, upstream };
    }

    it('answers 200 with the upstream claims for an opaque token, and a second request makes no upstream call', async () => {
      const { server, upstream } = await upstreamApp();
      const { token, claims } = issue();
      const res = await request(server).get('/me').set(bearer(token)).expect(200);
      expect(res.body).toEqual(claims);
      await request(server).get('/me').set(bearer(token)).expect(200);
      expect(upstream.requests).toBe(1);
    });

    it('makes one upstream call for 10 concurrent first uses of a token', async () => {
      const { server, upstream } = await upstreamApp();
      const { token } = issue();
      upstream.handler = (req, res) => setTimeout(() => identityService(req, res), 50);
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => request(server).get('/me').set(bearer(token))),
      );
      expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
      expect(upstream.requests).toBe(1);
    });

    it('passes an upstream 401 through with our body and challenge', async () => {
      const { server } = await upstreamApp();
      const res = await request(server).get('/me').set(bearer('not-issued')).expect(401);
      expect(res.body).toEqual(INVALID);
      expect(res.headers['www-authenticate']).toBe(CHALLENGE_INVALID);
    });

    it('passes an upstream 403 through as insufficient_scope', async () => {
      const { server, upstream } = await upstreamApp();
      upstream.handler = (_req, res) =>
        json(
          res,
          403,
          { status: 'error', message: 'nope' },
          { 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="identify"' },
        );
      const res = await request(server).get('/me').set(bearer('some-token')).expect(403);
      expect(res.body).toEqual({ status: 'error', message: 'Insufficient scope' });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="insufficient_scope", scope="identify"');
    });

    it('checks the route scopes against the upstream claims', async () => {
      const { server } = await upstreamApp();
      const { token } = issue({ scopes: ['email'] });
      const res = await request(server).get('/me').set(bearer(token)).expect(403);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="insufficient_scope", scope="identify"');
    });

    it('answers 401 when a well-formed upstream answer names another issuer', async () => {
      const { server } = await upstreamApp();
      const { token } = issue({ iss: 'https://elsewhere.example.com' });
      const res = await request(server).get('/me').set(bearer(token)).expect(401);
      expect(res.body).toEqual(INVALID);
    });

    it('answers 503 while the upstream is down, then 200 once it is back', async () => {
      const { server, upstream } = await upstreamApp();
      const { token } = issue();
      await upstream.stop();
      expectUnavailable(await request(server).get('/me').set(bearer(token)), '5');
      await upstream.start();
      await request(server).get('/me').set(bearer(token)).expect(200);
    });

    it('never lets the upstream error text reach the response', async () => {
      const { server, upstream } = await upstreamApp();
      upstream.handler = (_req, res) => json(res, 500, { status: 'error', message: 'Error: ECONNRESET at db.js:12' });
      expectUnavailable(await request(server).get('/me').set(bearer(issue().token)));
    });
  });
});
