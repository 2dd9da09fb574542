/**
 * `issuerBaseURL` (docs/any-issuer.md) against a real oidc-provider 9 (__tests__/fixtures/authorization-server.ts)
 * and, for the RFC 8414 fallback and the failure cases, small loopback servers that record every request.
 */
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import {
  startAuthorizationServer,
  type AuthorizationServer,
  type ProviderAlgorithm,
} from '../fixtures/authorization-server';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { listen } from '../fixtures/listen';
import { sign } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';

const RESOURCE = 'https://api.example.test';
const INVALID = { status: 'error', message: 'Invalid access token' };
const UNAVAILABLE = { status: 'error', message: 'Token verification unavailable' };
const CHALLENGE_INVALID = 'Bearer realm="api", error="invalid_token", error_description="Invalid access token"';
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Real time (oidc-provider signs with it), moved forward by `skew` to step past key-fetch cooldowns. */
let skew = 0;
const clock = () => Date.now() / 1000 + skew;

const ALGORITHMS: ProviderAlgorithm[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];
const providers = new Map<ProviderAlgorithm, AuthorizationServer>();

beforeAll(async () => {
  const started = await Promise.all(ALGORITHMS.map((alg) => startAuthorizationServer({ alg, resource: RESOURCE })));
  started.forEach((provider, i) => providers.set(ALGORITHMS[i], provider));
}, 60_000);
afterAll(() => Promise.all([...providers.values()].map((p) => p.close())));

const provider = (alg: ProviderAlgorithm) => providers.get(alg) as AuthorizationServer;

/** The options every app here uses: discovery, the resource as audience, registered claims only. */
function discovery(issuerBaseURL: string | string[], extra: Partial<TokenAuthOptions> = {}): TokenAuthOptions {
  // oidc-provider's tokens are RFC 9068 (`typ: at+jwt`), never Shape B: 'jwt' mode.
  return { issuerBaseURL, audience: RESOURCE, claims: 'jwt', clock, ...extra };
}

function expectInvalid(res: request.Response): void {
  expect(res.status).toBe(401);
  expect(res.body).toEqual(INVALID);
  expect(res.headers['www-authenticate']).toBe(CHALLENGE_INVALID);
}

function expectUnavailable(res: request.Response): void {
  expect(res.status).toBe(503);
  expect(res.body).toEqual(UNAVAILABLE);
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expect(res.headers['www-authenticate']).toBeUndefined();
}

describe.each(EXPRESS_VERSIONS)('issuerBaseURL through %s', (_name, express) => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
    skew = 0;
  });

  /** A listening app: GET /me requires `read` and answers req.auth. */
  async function serve(options: TokenAuthOptions): Promise<{ server: string; auth: TokenAuth }> {
    const auth = createTokenAuth(options);
    const listening = await listen(appWith(express, auth, { scopes: ['read'] }));
    cleanup.push(
      () => auth.close(),
      () => listening.close(),
    );
    return { server: listening.origin, auth };
  }

  async function loopback(handler: Parameters<typeof startLoopbackServer>[0]): Promise<LoopbackServer> {
    const server = await startLoopbackServer(handler);
    cleanup.push(() => server.close());
    return server;
  }

  async function ownProvider(
    alg: ProviderAlgorithm = 'RS256',
    extra: { issuer?: string; kid?: string } = {},
  ): Promise<AuthorizationServer> {
    const made = await startAuthorizationServer({ alg, resource: RESOURCE, ...extra });
    cleanup.push(() => made.close());
    return made;
  }

  describe('OpenID Connect discovery', () => {
    it.each(ALGORITHMS)(
      'accepts a client_credentials access token signed %s and hands over its claims',
      async (alg) => {
        const as = provider(alg);
        const { server } = await serve(discovery(as.issuer));
        const token = await as.token();
        const res = await request(server).get('/me').set(bearer(token));
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ iss: as.issuer, aud: RESOURCE, client_id: as.clientId, scope: 'read' });
      },
    );

    it('needs nothing but issuerBaseURL and audience: the README example, with the default claims mode', async () => {
      const as = provider('RS256');
      const auth = createTokenAuth({ issuerBaseURL: as.issuer, audience: RESOURCE, clock });
      cleanup.push(() => auth.close());
      const app = express();
      app.get('/me', auth.requireVerifiedUser(['read']), (req, res) => {
        res.json(auth.claims(req));
      });
      const res = await request(app)
        .get('/me')
        .set(bearer(await as.token()));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ iss: as.issuer, client_id: as.clientId });
      expectInvalid(
        await request(app)
          .get('/me')
          .set(bearer(sign({ iss: as.issuer, aud: RESOURCE, exp: Math.floor(clock()) + 60 }))),
      );
    });

    it.each(ALGORITHMS)("verifies its %s tokens as RFC 9068 access tokens under claims: 'at+jwt'", async (alg) => {
      const as = provider(alg);
      const { server } = await serve(discovery(as.issuer, { claims: 'at+jwt' }));
      const res = await request(server)
        .get('/me')
        .set(bearer(await as.token()));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ iss: as.issuer, aud: RESOURCE, client_id: as.clientId, scope: 'read' });
      expect(typeof res.body.sub).toBe('string');
      expect(typeof res.body.jti).toBe('string');
    });

    it('accepts the base URL with a trailing slash that the issuer lacks (RFC 8414 §3.3)', async () => {
      const as = provider('ES256');
      const { server } = await serve(discovery(`${as.issuer}/`));
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(await as.token()))
        ).status,
      ).toBe(200);
    });

    it("answers 403 insufficient_scope for a valid token without the route's scope", async () => {
      const as = provider('RS256');
      const auth = createTokenAuth(discovery(as.issuer));
      cleanup.push(() => auth.close());
      const app = express();
      app.get('/admin', auth.requireVerifiedUser(['admin']), (_req, res) => {
        res.json({});
      });
      const res = await request(app)
        .get('/admin')
        .set(bearer(await as.token()));
      expect(res.status).toBe(403);
      expect(res.headers['www-authenticate']).toMatch(/error="insufficient_scope"/);
    });
  });

  describe('RFC 8414 fallback', () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const KID = 'tenant-key';

    /** An authorization server at `/tenant` that publishes RFC 8414 metadata only. */
    async function oauthOnly(
      issuerOf: (origin: string) => string = (origin) => `${origin}/tenant`,
    ): Promise<LoopbackServer> {
      const server: LoopbackServer = await loopback((req, res) => {
        if (req.url === '/.well-known/oauth-authorization-server/tenant') {
          json(res, 200, {
            issuer: issuerOf(server.origin),
            jwks_uri: `${server.origin}/tenant/keys`,
            token_endpoint: `${server.origin}/tenant/token`,
          });
        } else if (req.url === '/tenant/keys') {
          json(res, 200, {
            keys: [{ ...key.publicKey.export({ format: 'jwk' }), kid: KID, alg: 'ES256', use: 'sig' }],
          });
        } else {
          json(res, 404, { error: 'not_found' });
        }
      });
      return server;
    }

    const tokenOf = (iss: string, kid = KID, signingKey: KeyObject = key.privateKey) => {
      const now = Math.floor(clock());
      return sign({ iss, aud: RESOURCE, sub: 'client', iat: now, exp: now + 300, scope: 'read' }, signingKey, 'ES256', {
        kid,
        typ: 'at+jwt',
      });
    };

    it('reads /.well-known/oauth-authorization-server inserted before the path when the OIDC document is 404', async () => {
      const as = await oauthOnly();
      const base = `${as.origin}/tenant`;
      const { server } = await serve(discovery(base));
      const res = await request(server)
        .get('/me')
        .set(bearer(tokenOf(base)));
      expect(res.status).toBe(200);
      expect(as.seen.map((r) => r.url)).toEqual([
        '/tenant/.well-known/openid-configuration',
        '/.well-known/oauth-authorization-server/tenant',
        '/tenant/keys',
      ]);
    });

    it('fetches metadata and keys once for concurrent first requests', async () => {
      const as = await oauthOnly();
      const base = `${as.origin}/tenant`;
      const { server } = await serve(discovery(base));
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          request(server)
            .get('/me')
            .set(bearer(tokenOf(base))),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(as.requests).toBe(3);
    });

    it('fetches the metadata again with each key-set refetch (an unknown kid past the cooldown)', async () => {
      const as = await oauthOnly();
      const base = `${as.origin}/tenant`;
      const { server } = await serve(discovery(base));
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(tokenOf(base)))
        ).status,
      ).toBe(200);
      as.reset();
      skew += 31;
      expectInvalid(
        await request(server)
          .get('/me')
          .set(bearer(tokenOf(base, 'unknown-kid'))),
      );
      expect(as.seen.map((r) => r.url)).toEqual([
        '/tenant/.well-known/openid-configuration',
        '/.well-known/oauth-authorization-server/tenant',
        '/tenant/keys',
      ]);
    });

    it('refuses metadata whose issuer is not the base URL: 503, never a cached 401', async () => {
      let claimed = (origin: string) => `${origin}/other-tenant`;
      const as = await oauthOnly((origin) => claimed(origin));
      const base = `${as.origin}/tenant`;
      const { server } = await serve(discovery(base));
      expectUnavailable(
        await request(server)
          .get('/me')
          .set(bearer(tokenOf(base))),
      );
      claimed = (origin) => `${origin}/tenant`;
      skew += 31; // past the cooldown
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(tokenOf(base)))
        ).status,
      ).toBe(200);
    });

    it.each([
      ['a different host', (origin: string) => origin.replace('127.0.0.1', 'localhost') + '/tenant'],
      ['two trailing slashes', (origin: string) => `${origin}/tenant//`],
      ['a different case', (origin: string) => `${origin}/Tenant`],
    ])('refuses metadata whose issuer differs by %s', async (_case, issuerOf) => {
      const as = await oauthOnly(issuerOf);
      const { server } = await serve(discovery(`${as.origin}/tenant`));
      // The token names the configured base URL (it passes the pre-match); the metadata decides.
      expectUnavailable(
        await request(server)
          .get('/me')
          .set(bearer(tokenOf(`${as.origin}/tenant`))),
      );
      expect(as.seen.map((r) => r.url)).not.toContain('/tenant/keys');
    });

    it("requires a token's iss to equal the discovered issuer exactly, even where the base URL differs by a slash", async () => {
      const as = await oauthOnly((origin) => `${origin}/tenant/`);
      const { server } = await serve(discovery(`${as.origin}/tenant`));
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(tokenOf(`${as.origin}/tenant/`)))
        ).status,
      ).toBe(200);
      expectInvalid(
        await request(server)
          .get('/me')
          .set(bearer(tokenOf(`${as.origin}/tenant`))),
      );
    });
  });

  describe('key rotation', () => {
    it('stops serving a cached success once a refetch finds its key withdrawn', async () => {
      const as = await ownProvider('RS256');
      const { server } = await serve(discovery(as.issuer));
      const old = await as.token();
      expect((await request(server).get('/me').set(bearer(old))).status).toBe(200);
      expect((await request(server).get('/me').set(bearer(old))).status).toBe(200); // now from the cache

      await as.rotate({ withdrawPrevious: true });
      skew += 31; // past the cooldown, so the new kid may cause a refetch
      const fresh = await as.token();
      expect((await request(server).get('/me').set(bearer(fresh))).status).toBe(200);
      expectInvalid(await request(server).get('/me').set(bearer(old)));
    });

    it('keeps verifying tokens of a key that is still published after a rotation', async () => {
      const as = await ownProvider('ES256');
      const { server } = await serve(discovery(as.issuer));
      const old = await as.token();
      expect((await request(server).get('/me').set(bearer(old))).status).toBe(200);
      await as.rotate({ withdrawPrevious: false });
      skew += 31;
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(await as.token()))
        ).status,
      ).toBe(200);
      expect((await request(server).get('/me').set(bearer(old))).status).toBe(200);
    });
  });

  describe('authorization server outage', () => {
    it('keeps verifying with the keys it holds, and answers 503 for an unknown kid', async () => {
      const as = await ownProvider('RS256');
      const { server } = await serve(discovery(as.issuer));
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(await as.token()))
        ).status,
      ).toBe(200);
      const unseen = await as.token();
      await as.stop();
      expect((await request(server).get('/me').set(bearer(unseen))).status).toBe(200);

      skew += 31;
      const stranger = generateKeyPairSync('ed25519');
      const now = Math.floor(clock());
      const unknownKid = sign(
        { iss: as.issuer, aud: RESOURCE, iat: now, exp: now + 60, scope: 'read' },
        stranger.privateKey,
        'EdDSA',
        { kid: randomUUID() },
      );
      expectUnavailable(await request(server).get('/me').set(bearer(unknownKid)));
    });

    it('answers 503 with Retry-After on first use while it is down, then 200 once it is back', async () => {
      const as = await ownProvider('ES256');
      const token = await as.token();
      await as.stop();
      const { server } = await serve(discovery(as.issuer));
      expectUnavailable(await request(server).get('/me').set(bearer(token)));
      expectUnavailable(await request(server).get('/me').set(bearer(token))); // inside the cooldown: no cached 401
      await as.start();
      skew += 31;
      expect((await request(server).get('/me').set(bearer(token))).status).toBe(200);
    });
  });

  describe('an impostor with the same issuer string and a colliding kid', () => {
    it('has its tokens refused: the keys come from the configured server only', async () => {
      const genuine = provider('RS256');
      const impostor = await ownProvider('RS256', { issuer: genuine.issuer, kid: genuine.kid });
      const { server } = await serve(discovery(genuine.issuer));
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(await genuine.token()))
        ).status,
      ).toBe(200);
      const forged = await impostor.token();
      const payload = JSON.parse(Buffer.from(forged.split('.')[1], 'base64url').toString()) as { iss: string };
      expect(payload.iss).toBe(genuine.issuer);
      expectInvalid(await request(server).get('/me').set(bearer(forged)));
    });
  });

  describe('several issuers', () => {
    it("verifies each server's tokens with its own keys and refuses any other issuer", async () => {
      const rs = provider('RS256');
      const ed = provider('EdDSA');
      const outsider = provider('ES256');
      const { server } = await serve(discovery([rs.issuer, ed.issuer]));
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(await rs.token()))
        ).body,
      ).toMatchObject({ iss: rs.issuer });
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(await ed.token()))
        ).body,
      ).toMatchObject({ iss: ed.issuer });
      expectInvalid(
        await request(server)
          .get('/me')
          .set(bearer(await outsider.token())),
      );
    });

    it("never lets one server's key verify another's token, even with the same kid", async () => {
      const first = await ownProvider('ES256', { kid: 'shared-kid' });
      const second = await ownProvider('ES256', { kid: 'shared-kid' });
      const { server } = await serve(discovery([first.issuer, second.issuer]));
      const fromFirst = await first.token();
      expect((await request(server).get('/me').set(bearer(fromFirst))).status).toBe(200);
      expect(
        (
          await request(server)
            .get('/me')
            .set(bearer(await second.token()))
        ).status,
      ).toBe(200);
      // The first server's token, its iss rewritten to the second: the second's key (same kid) must not verify it.
      const [header, payload, signature] = fromFirst.split('.');
      const claims = { ...JSON.parse(Buffer.from(payload, 'base64url').toString()), iss: second.issuer };
      const moved = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
      expectInvalid(await request(server).get('/me').set(bearer(moved)));
    });
  });
});
