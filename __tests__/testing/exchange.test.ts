// createTestIssuer({ exchange: true }): auth.exchange() end to end through real Express apps, with no authorization
// server but the test issuer's own RFC 8693 token endpoint; each client authentication method the package speaks.
import request from 'supertest';
import { createTokenAuth, errorHandler, type TokenAuth, type TokenAuthError } from '../../lib';
import { createTestIssuer, type TestIssuer, type TestIssuerOptions } from '../../lib/testing';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../fixtures/express';

const CI = 'ci.test';

/** The front API: `/builds` exchanges the request's token for one to CI and answers what CI's own TokenAuth sees. */
function frontApp(express: ExpressFactory, issuer: TestIssuer, errors: TokenAuthError[]) {
  const front = createTokenAuth({ ...issuer.options, onError: (err) => errors.push(err) });
  const ci = createTokenAuth({ ...issuer.options, audience: CI, tokenExchange: undefined });
  const app = express();
  app.get('/builds', front.requireVerifiedUser(['identify']), async (req, res, next) => {
    try {
      const onward = await front.exchange(req, { audience: CI, scope: ['builds:read'] });
      const claims = await ci.verify(onward.accessToken);
      res.json({ onward: { ...onward, accessToken: undefined }, claims, actors: ci.actorsOf(claims) });
    } catch (err) {
      next(err);
    }
  });
  app.use(errorHandler());
  return { app, auths: [front, ci] as TokenAuth[] };
}

describe.each(EXPRESS_VERSIONS)('createTestIssuer({ exchange }) with auth.exchange() (%s)', (_name, express) => {
  const open: Array<{ close(): unknown }> = [];
  const start = async (options: TestIssuerOptions) => {
    const issuer = await createTestIssuer(options);
    open.push(issuer);
    return issuer;
  };
  afterEach(async () => {
    for (const thing of open.splice(0).reverse()) await thing.close();
  });

  it.each([
    ['HS256, the endpoint named in options', { exchange: true }],
    ['ES256 with discovery, the endpoint discovered', { discovery: true, exchange: true }],
    ['client_secret_post', { alg: 'RS256', exchange: { authMethod: 'client_secret_post' } }],
    ['private_key_jwt', { alg: 'EdDSA', jwks: true, exchange: { authMethod: 'private_key_jwt' } }],
  ] as Array<[string, TestIssuerOptions]>)(
    '%s: the exchanged token is for the target, with the scope asked and the client as actor, and is cached',
    async (_case, options) => {
      const issuer = await start(options);
      const errors: TokenAuthError[] = [];
      const { app, auths } = frontApp(express, issuer, errors);
      open.push(...auths);
      const subject = issuer.sign({ sub: 'alice' });
      const first = await request(app).get('/builds').set('Authorization', `Bearer ${subject}`);
      expect([first.status, errors]).toEqual([200, []]);
      expect(first.body.onward).toEqual({
        tokenType: 'Bearer',
        expiresIn: expect.any(Number),
        issuedTokenType: 'urn:ietf:params:oauth:token-type:access_token',
        scope: ['builds:read'],
      });
      expect(first.body.onward.expiresIn).toBeGreaterThan(590);
      expect(first.body.claims).toMatchObject({
        sub: 'alice',
        aud: CI,
        scopes: ['builds:read'],
        iss: issuer.claims().iss,
      });
      expect(first.body.actors).toEqual([{ sub: 'test-client' }]);
      expect(issuer.tokenRequests).toBe(1);
      const again = await request(app).get('/builds').set('Authorization', `Bearer ${subject}`);
      expect(again.status).toBe(200);
      expect(issuer.tokenRequests).toBe(1);
    },
  );

  it("keeps the subject token's actor under the client's, and never outlives the subject token", async () => {
    const issuer = await start({ exchange: { clientId: 'front-api' } });
    const errors: TokenAuthError[] = [];
    const { app, auths } = frontApp(express, issuer, errors);
    open.push(...auths);
    const now = Math.floor(Date.now() / 1000);
    const subject = issuer.sign({ act: { sub: 'gateway' }, exp: now + 90 });
    const answer = await request(app).get('/builds').set('Authorization', `Bearer ${subject}`);
    expect(answer.status).toBe(200);
    expect(answer.body.actors).toEqual([{ sub: 'front-api' }, { sub: 'gateway' }]);
    expect(answer.body.claims.act).toEqual({ sub: 'front-api', act: { sub: 'gateway' } });
    expect(answer.body.claims.exp).toBeLessThanOrEqual(now + 90);
    expect(answer.body.onward.expiresIn).toBeLessThanOrEqual(90);
  });

  it('refuses a target or a scope outside `targets`: 403 exchange_refused, the RFC 8693 error as the reason', async () => {
    const issuer = await start({ exchange: { targets: { [CI]: ['builds:write'] } } });
    const errors: TokenAuthError[] = [];
    const { app, auths } = frontApp(express, issuer, errors);
    open.push(...auths);
    const answer = await request(app).get('/builds').set('Authorization', `Bearer ${issuer.sign()}`);
    expect([answer.status, answer.body]).toEqual([403, { status: 'error', message: 'Token exchange refused' }]);
    expect(answer.headers['www-authenticate']).toBeUndefined();
    expect(errors.map((e) => [e.code, e.reason])).toEqual([['exchange_refused', 'invalid_scope']]);

    const other = await start({ exchange: { targets: { 'other.test': ['builds:read'] } } });
    const refused: TokenAuthError[] = [];
    const second = frontApp(express, other, refused);
    open.push(...second.auths);
    expect((await request(second.app).get('/builds').set('Authorization', `Bearer ${other.sign()}`)).status).toBe(403);
    expect(refused.map((e) => e.reason)).toEqual(['invalid_target']);
  });

  it("grants the target's scopes from `targets` when none is asked", async () => {
    const issuer = await start({ exchange: { targets: { [CI]: ['builds:read', 'builds:write'] } } });
    const auth = createTokenAuth(issuer.options);
    open.push(auth);
    const onward = await auth.exchange(issuer.sign(), { audience: CI });
    expect(onward.scope).toEqual(['builds:read', 'builds:write']);
  });
});

describe('createTestIssuer({ exchange }) options', () => {
  it('hands out tokenExchange options: the endpoint without discovery, the credentials of the method', async () => {
    const basic = await createTestIssuer({ exchange: true });
    const jwt = await createTestIssuer({ alg: 'ES256', exchange: { authMethod: 'private_key_jwt', clientId: 'api' } });
    try {
      expect(basic.options.tokenExchange).toEqual({
        clientId: 'test-client',
        clientSecret: expect.any(String),
        authMethod: 'client_secret_basic',
        endpoint: basic.tokenEndpoint,
      });
      expect(basic.tokenEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/token$/);
      expect(jwt.options.tokenExchange).toMatchObject({ clientId: 'api', authMethod: 'private_key_jwt' });
      expect(jwt.options.tokenExchange?.privateKey).toBeDefined();
    } finally {
      await Promise.all([basic.close(), jwt.close()]);
    }
  });

  it('advertises the endpoint, the grant and the client method in its discovery metadata', async () => {
    const issuer = await createTestIssuer({ discovery: true, exchange: { authMethod: 'private_key_jwt' } });
    try {
      const base = issuer.options.issuerBaseURL as string;
      const metadata = await (await fetch(`${base}/.well-known/openid-configuration`)).json();
      expect(metadata).toMatchObject({
        issuer: base,
        token_endpoint: `${base}/token`,
        grant_types_supported: ['urn:ietf:params:oauth:grant-type:token-exchange'],
        token_endpoint_auth_methods_supported: ['private_key_jwt'],
        token_endpoint_auth_signing_alg_values_supported: ['ES256'],
      });
      expect(issuer.options.tokenExchange).not.toHaveProperty('endpoint');
    } finally {
      await issuer.close();
    }
  });

  it.each([
    [{ exchange: 'yes' }, 'exchange'],
    [{ exchange: { authMethod: 'tls_client_auth' } }, 'exchange.authMethod'],
    [{ exchange: { clientId: '' } }, 'exchange.clientId'],
    [{ exchange: { targets: { ci: 'read' } } }, 'exchange.targets'],
    [{ exchange: { targets: {} } }, 'exchange.targets'],
  ])('refuses %j naming option %s', async (options, option) => {
    await expect(createTestIssuer(options as TestIssuerOptions)).rejects.toMatchObject({ option });
  });
});
