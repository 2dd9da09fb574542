/**
 * Issuer templates and `tenants` (docs/enterprise.md) through real Express 4 and 5 apps, against an Entra ID-shaped
 * loopback server (__tests__/fixtures/entra-server.ts) whose multi-tenant metadata publishes the `{tenantid}`
 * template. A token is accepted only as the template with its own lower-case `tid` put in, allowed by `tenants`.
 */
import request from 'supertest';
import { createTokenAuth, type JwkSet, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import {
  API_CLIENT_ID,
  CONSUMER_TENANT,
  startEntraServer,
  TENANT_A,
  TENANT_B,
  V1_TEMPLATE,
  type EntraServer,
} from '../fixtures/entra-server';
import { optionErrorOf } from '../fixtures/option-error';
import { REFUSAL } from '../security/harness';
import { rejection } from '../fixtures/rejection';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const UNAVAILABLE = { status: 'error', message: 'Token verification unavailable' };

let entra: EntraServer;
beforeAll(async () => {
  entra = await startEntraServer({
    // A server at a path Entra never uses whose metadata names the template: only discovery reveals it.
    discovered: { '/multi/v2.0/.well-known/openid-configuration': '$ORIGIN/{tenantid}/v2.0' },
  });
});
afterAll(() => entra.close());

describe.each(EXPRESS_VERSIONS)('issuer templates through %s', (_name, express) => {
  const cleanup: Array<() => unknown> = [];
  const refusals: TokenAuthError[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
    refusals.length = 0;
  });

  /** An app with GET /me behind requireVerifiedUser(['Orders.Read']) (scopes from `scp`), refusals recorded. */
  function serve(options: Partial<TokenAuthOptions>): { app: ReturnType<typeof appWith>; auth: TokenAuth } {
    const auth = createTokenAuth({
      audience: API_CLIENT_ID,
      claims: 'jwt',
      onError: (err) => refusals.push(err),
      ...options,
    } as TokenAuthOptions);
    cleanup.push(() => auth.close());
    return { app: appWith(express, auth, { scopes: ['Orders.Read'] }), auth };
  }

  /** GET /me with `token`; the answer must be exactly the README's invalid_token refusal; answers err.reason and hint. */
  /** The status of GET /me with this bearer token. */
  async function statusOf(app: ReturnType<typeof appWith>, token: string): Promise<number> {
    return (await request(app).get('/me').set(bearer(token))).status;
  }

  async function refused(app: ReturnType<typeof appWith>, token: string): Promise<{ reason?: string; hint?: string }> {
    const res = await request(app).get('/me').set(bearer(token));
    expect({ status: res.status, body: res.body as unknown, challenge: res.headers['www-authenticate'] }).toEqual({
      status: REFUSAL.invalid.status,
      body: REFUSAL.invalid.body,
      challenge: REFUSAL.invalid.challenge,
    });
    const last = refusals[refusals.length - 1];
    expect(last.code).toBe('invalid_token');
    return { reason: last.reason, hint: last.hint };
  }

  describe('a multi-tenant endpoint (organizations), tenants: [A]', () => {
    const options = () => ({ issuerBaseURL: entra.base('organizations'), tenants: [TENANT_A] });

    it('accepts a token of tenant A and hands over its claims', async () => {
      const { app } = serve(options());
      const res = await request(app)
        .get('/me')
        .set(bearer(entra.token(TENANT_A)));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ iss: entra.issuer(TENANT_A), tid: TENANT_A, aud: API_CLIENT_ID });
    });

    it.each([
      ['a token of another tenant', () => entra.token(TENANT_B), 'iss-tenant', `tenant ${TENANT_B} is not allowed`],
      [
        'a tid other than the tenant its iss names',
        () => entra.token(TENANT_B, { tid: TENANT_A }),
        'iss-tenant',
        `iss names tenant ${TENANT_B}, tid is ${TENANT_A}`,
      ],
      ['no tid', () => entra.token(TENANT_A, { tid: undefined }), 'tid', 'the token has no tid claim'],
      [
        'an upper-case tid (and iss)',
        () => entra.token(TENANT_A.toUpperCase()),
        'tid',
        `tid ${TENANT_A.toUpperCase()} is not in lower case`,
      ],
      ['a tid that is no GUID', () => entra.token(TENANT_A, { tid: 'contoso.com' }), 'tid', 'tid is not a tenant ID'],
      ['a tid that is no string', () => entra.token(TENANT_A, { tid: [TENANT_A] }), 'tid', 'tid is not a tenant ID'],
      [
        'the literal {tenantid} in iss',
        () => entra.token(TENANT_A, { iss: entra.template }),
        'iss-tenant',
        `iss names no tenant ID, tid is ${TENANT_A}`,
      ],
      [
        'the organizations base itself as iss',
        () => entra.token(TENANT_A, { iss: entra.base('organizations') }),
        'iss-tenant',
        'iss names no tenant ID',
      ],
      [
        'an iss with a second path segment where the tenant goes',
        () => entra.token(TENANT_A, { iss: `${entra.origin}/${TENANT_A}/x/v2.0` }),
        'iss',
        'expected iss',
      ],
      [
        'an iss with a trailing slash',
        () => entra.token(TENANT_A, { iss: `${entra.issuer(TENANT_A)}/` }),
        'iss',
        'expected iss',
      ],
    ])('refuses %s: 401 invalid_token with its reason', async (_case, token, reason, hint) => {
      const { app } = serve(options());
      const found = await refused(app, token());
      expect(found.reason).toBe(reason);
      expect(found.hint).toContain(hint);
    });

    it('refuses an iss of another host before asking the server anything', async () => {
      const { app } = serve(options());
      entra.server.reset();
      const found = await refused(app, entra.token(TENANT_A, { iss: `https://evil.example/${TENANT_A}/v2.0` }));
      expect(found.reason).toBe('iss');
      expect(entra.server.requests).toBe(0);
    });

    it("refuses a tenant the rule does not allow before asking the server anything (the base's template is known)", async () => {
      const { app } = serve(options());
      entra.server.reset();
      expect((await refused(app, entra.token(TENANT_B))).reason).toBe('iss-tenant');
      expect(entra.server.requests).toBe(0);
    });

    it('never puts anything of the token in the hint but GUIDs', async () => {
      const { app } = serve(options());
      const found = await refused(app, entra.token(TENANT_A, { iss: `${entra.origin}/secret-looking-text/v2.0` }));
      expect(found.reason).toBe('iss-tenant');
      expect(found.hint).not.toContain('secret-looking-text');
    });
  });

  describe('the tenants rule', () => {
    it("accepts every tenant with 'any', on purpose", async () => {
      const { app } = serve({ issuerBaseURL: entra.base('common'), tenants: 'any' });
      for (const tid of [TENANT_A, TENANT_B]) expect(await statusOf(app, entra.token(tid))).toBe(200);
      expect((await refused(app, entra.token(TENANT_A, { tid: TENANT_B }))).reason).toBe('iss-tenant');
    });

    it('asks a predicate with the tid; only true allows, a throw refuses', async () => {
      const asked: string[] = [];
      const { app } = serve({
        issuerBaseURL: entra.base('organizations'),
        tenants: (tid) => {
          asked.push(tid);
          if (tid === TENANT_B) throw new Error('no');
          return tid === TENANT_A;
        },
      });
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      expect((await refused(app, entra.token(TENANT_B))).reason).toBe('iss-tenant');
      expect(asked).toEqual([TENANT_A, TENANT_B]);
    });

    it('compares tenant IDs given in upper case as lower case', async () => {
      const { app } = serve({ issuerBaseURL: entra.base('organizations'), tenants: [TENANT_A.toUpperCase()] });
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
    });
  });

  describe('other Entra ID endpoints', () => {
    it('single tenant: the metadata names one issuer, no tenants needed; another tenant is refused (iss)', async () => {
      const { app } = serve({ issuerBaseURL: entra.base(TENANT_A) });
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      expect((await refused(app, entra.token(TENANT_B))).reason).toBe('iss');
    });

    it('consumers: the personal-account tenant, when tenants allows it', async () => {
      const { app } = serve({ issuerBaseURL: entra.base('consumers'), tenants: [CONSUMER_TENANT] });
      expect(await statusOf(app, entra.token(CONSUMER_TENANT, {}, 'consumers'))).toBe(200);
      expect((await refused(app, entra.token(TENANT_A))).reason).toBe('iss');
    });

    it('consumers with tenants that leave the personal-account tenant out: 503 naming tenants, never a 200', async () => {
      const { app, auth } = serve({ issuerBaseURL: entra.base('consumers'), tenants: [TENANT_A] });
      const err = await rejection(auth.ready());
      expect(err.reason).toBe('discovery-tenants');
      expect(err.hint).toContain('option "tenants"');
      // A personal account's token is refused at once by the rule; tenant A's waits on a server that refuses A.
      expect((await refused(app, entra.token(CONSUMER_TENANT, {}, 'consumers'))).reason).toBe('iss-tenant');
      const res = await request(app)
        .get('/me')
        .set(bearer(entra.token(TENANT_A)));
      expect(res.status).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(refusals[refusals.length - 1].reason).toBe('discovery-tenants');
    });

    it('v1.0 tokens: the sts.windows.net template as issuer, with the key set, follow the same rule', async () => {
      const { app } = serve({
        key: { jwksUri: entra.v1Keys },
        issuer: V1_TEMPLATE,
        tenants: [TENANT_A],
        audience: 'api://orders',
      });
      expect(await statusOf(app, entra.v1Token(TENANT_A))).toBe(200);
      expect((await refused(app, entra.v1Token(TENANT_B))).reason).toBe('iss-tenant');
      expect((await refused(app, entra.v1Token(TENANT_A, { tid: TENANT_B }))).reason).toBe('iss-tenant');
      expect((await refused(app, entra.v1Token(TENANT_A, { tid: undefined }))).reason).toBe('tid');
      // A v2.0 token is another issuer's.
      expect((await refused(app, entra.token(TENANT_A, { aud: 'api://orders' }))).reason).toBe('iss');
    });

    it('v1.0 and v2.0 templates together, one tenants rule for both', async () => {
      const { app } = serve({
        key: { jwksUri: entra.v1Keys },
        issuer: [V1_TEMPLATE, entra.template],
        tenants: [TENANT_A],
        audience: [API_CLIENT_ID, 'api://orders'],
      });
      expect(await statusOf(app, entra.v1Token(TENANT_A))).toBe(200);
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      expect((await refused(app, entra.token(TENANT_B))).reason).toBe('iss-tenant');
    });

    it('v1.0 common metadata names a template on another host: discovery refuses it and says what to give', async () => {
      const { auth } = serve({
        issuerBaseURL: `${entra.origin}/common`,
        tenants: [TENANT_A],
        audience: 'api://orders',
      });
      const err = await rejection(auth.ready());
      expect(err.code).toBe('verification_unavailable');
      expect(err.reason).toBe('discovery-issuer-mismatch');
      expect(err.hint).toContain('key: { jwksUri } and issuer: that template');
    });
  });

  describe("a key's own issuer (the issuer member of Entra's v2.0 keys)", () => {
    const consumerIssuer = () => entra.issuer(CONSUMER_TENANT);

    it('refuses a tenant-A token signed with the key of personal accounts only: 401 iss-key, naming its issuer', async () => {
      const { app } = serve({ issuerBaseURL: entra.base('organizations'), tenants: [TENANT_A] });
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      const found = await refused(app, entra.token(TENANT_A, {}, 'consumers'));
      expect(found.reason).toBe('iss-key');
      expect(found.hint).toContain(`bound to issuer "${consumerIssuer()}"`);
    });

    it("common with tenants 'any': each key verifies only the tokens its issuer fits", async () => {
      const { app } = serve({ issuerBaseURL: entra.base('common'), tenants: 'any' });
      // The consumer tenant's key, its own tokens; the template key, any tenant's (the consumer tenant's too).
      expect(await statusOf(app, entra.token(CONSUMER_TENANT, {}, 'consumers'))).toBe(200);
      expect(await statusOf(app, entra.token(CONSUMER_TENANT))).toBe(200);
      expect(await statusOf(app, entra.token(TENANT_B))).toBe(200);
      expect((await refused(app, entra.token(TENANT_B, {}, 'consumers'))).reason).toBe('iss-key');
    });

    it('holds key.jwksUri to the same rule, whatever option issuer accepts', async () => {
      const { app } = serve({ key: { jwksUri: entra.v2Keys }, issuer: entra.template, tenants: 'any' });
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      expect((await refused(app, entra.token(TENANT_A, {}, 'consumers'))).reason).toBe('iss-key');
      // A template key needs the tid it fills in: an exact issuer option does not stand in for it.
      const exact = serve({ key: { jwksUri: entra.v2Keys }, issuer: entra.issuer(TENANT_A) });
      expect((await refused(exact.app, entra.token(TENANT_A, { tid: undefined }))).reason).toBe('iss-key');
    });

    it('refuses a v1.0 token verified with the v2.0 keys when only the v1.0 issuer is accepted; the v1.0 keys name none', async () => {
      const options = { issuer: V1_TEMPLATE, tenants: [TENANT_A], audience: 'api://orders' };
      const v2 = serve({ key: { jwksUri: entra.v2Keys }, ...options });
      expect((await refused(v2.app, entra.v1Token(TENANT_A))).reason).toBe('iss-key');
      const v1 = serve({ key: { jwksUri: entra.v1Keys }, ...options });
      expect(await statusOf(v1.app, entra.v1Token(TENANT_A))).toBe(200);
    });

    describe('v1.0 and v2.0 issuers accepted, with the v2.0 keys (Microsoft.IdentityModel: the key issuer may be the v2.0 issuer accepted for the tenant)', () => {
      const both = (more: string[] = []) => ({
        key: { jwksUri: entra.v2Keys },
        issuer: [V1_TEMPLATE, entra.template, ...more],
        tenants: [TENANT_A],
        audience: [API_CLIENT_ID, 'api://orders'],
      });

      it('accepts a v1.0 token of tenant A signed with the v2.0 key whose issuer is the v2.0 template', async () => {
        const { app } = serve(both());
        const res = await request(app)
          .get('/me')
          .set(bearer(entra.v1Token(TENANT_A)));
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ iss: `https://sts.windows.net/${TENANT_A}/`, tid: TENANT_A, ver: '1.0' });
        expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      });

      it('does the same with the v2.0 keys given inline (key.jwks)', async () => {
        const jwks = (await (await fetch(entra.v2Keys)).json()) as JwkSet;
        const { app } = serve({ ...both(), key: { jwks } });
        expect(await statusOf(app, entra.v1Token(TENANT_A))).toBe(200);
        expect((await refused(app, entra.v1Token(TENANT_A, {}, 'consumers'))).reason).toBe('iss-key');
      });

      it('refuses a v1.0 token whose iss names tenant B while its tid is A', async () => {
        const { app } = serve(both());
        const v1OfB = `https://sts.windows.net/${TENANT_B}/`;
        // The key is asked first: its iss lacks the tid, so the v2.0 issuer accepted for tenant A does not count.
        expect((await refused(app, entra.v1Token(TENANT_A, { iss: v1OfB }))).reason).toBe('iss-key');
        // Tenant B's v1.0 issuer accepted exactly: the issuer rule would let it by; the key alone refuses it.
        const exact = serve(both([v1OfB]));
        const found = await refused(exact.app, entra.v1Token(TENANT_A, { iss: v1OfB }));
        expect(found.reason).toBe('iss-key');
        expect(found.hint).toContain(`bound to issuer "${entra.template}"`);
      });

      it('refuses a tenant-A v1.0 token signed with the key of personal accounts only (its exact issuer): iss-key', async () => {
        const { app } = serve(both());
        const found = await refused(app, entra.v1Token(TENANT_A, {}, 'consumers'));
        expect(found.reason).toBe('iss-key');
        expect(found.hint).toContain(`bound to issuer "${consumerIssuer()}"`);
      });

      it("refuses it too when the consumer tenant's exact issuer is accepted: that key's issuer names no other tenant", async () => {
        const { app } = serve({ ...both(), issuer: [V1_TEMPLATE, consumerIssuer()] });
        expect(await statusOf(app, entra.token(CONSUMER_TENANT, {}, 'consumers'))).toBe(200);
        expect((await refused(app, entra.v1Token(TENANT_A, {}, 'consumers'))).reason).toBe('iss-key');
      });
    });

    it.each(['organizations', 'common'])(
      'discovery (%s) still refuses a tenant-A token signed with the key of personal accounts only',
      async (segment) => {
        const { app } = serve({ issuerBaseURL: entra.base(segment), tenants: [TENANT_A] });
        expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
        // The consumer key's issuer is never the discovered issuer filled in with tenant A.
        expect((await refused(app, entra.token(TENANT_A, {}, 'consumers'))).reason).toBe('iss-key');
      },
    );
  });

  describe('a template only discovery reveals (a path Entra never uses)', () => {
    it('without tenants: ready() rejects naming tenants, and every token is refused with 503 naming it', async () => {
      const { app, auth } = serve({ issuerBaseURL: `${entra.origin}/multi/v2.0` });
      const err = await rejection(auth.ready());
      expect(err.code).toBe('verification_unavailable');
      expect(err.reason).toBe('discovery-tenants');
      expect(err.hint).toContain('option "tenants"');
      const res = await request(app)
        .get('/me')
        .set(bearer(entra.token(TENANT_A)));
      expect(res.status).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(refusals.map((r) => [r.reason, r.hint?.includes('option "tenants"')])).toEqual([
        ['discovery-tenants', true],
      ]);
    });

    it('with tenants: its tokens route to it once discovered, and the rule applies', async () => {
      const { app, auth } = serve({ issuerBaseURL: `${entra.origin}/multi/v2.0`, tenants: [TENANT_A] });
      await auth.ready();
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      expect((await refused(app, entra.token(TENANT_B))).reason).toBe('iss-tenant');
    });
  });

  describe('audience apart from resource', () => {
    const RESOURCE_URL = 'https://api.contoso.test/orders';

    it('with both, checks aud against audience only: the client ID passes, the resource URL is refused', async () => {
      const { app } = serve({ issuerBaseURL: entra.base(TENANT_A), resource: RESOURCE_URL });
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(200);
      const res = await request(app)
        .get('/me')
        .set(bearer(entra.token(TENANT_A, { aud: RESOURCE_URL })));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toContain(
        'resource_metadata="https://api.contoso.test/.well-known/oauth-protected-resource/orders"',
      );
      expect(refusals[refusals.length - 1].reason).toBe('aud');
    });

    it('with resource alone, the resource is the audience and the client ID is refused', async () => {
      const { app } = serve({ issuerBaseURL: entra.base(TENANT_A), resource: RESOURCE_URL, audience: undefined });
      const res = await request(app)
        .get('/me')
        .set(bearer(entra.token(TENANT_A, { aud: RESOURCE_URL })));
      expect(res.status).toBe(200);
      expect(await statusOf(app, entra.token(TENANT_A))).toBe(401);
      expect(refusals[refusals.length - 1].reason).toBe('aud');
    });
  });

  describe('the protected resource of a multi-tenant API', () => {
    it('names the multi-tenant endpoint as its authorization server, never the template', async () => {
      const { auth } = serve({
        issuerBaseURL: entra.base('organizations'),
        tenants: [TENANT_A],
        resource: 'http://127.0.0.1/orders',
      });
      const app = express();
      app.use(auth.protectedResourceMetadata());
      const res = await request(app).get('/.well-known/oauth-protected-resource/orders');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        resource: 'http://127.0.0.1/orders',
        authorization_servers: [entra.base('organizations')],
      });
    });
  });
});

describe('options of issuer templates (OptionError naming tenants, at createTokenAuth)', () => {
  const make = (options: Record<string, unknown>) => () =>
    createTokenAuth({ audience: API_CLIENT_ID, claims: 'jwt', ...options } as unknown as TokenAuthOptions).close();
  const KEY = { jwksUri: 'https://login.microsoftonline.com/common/discovery/v2.0/keys' };

  it.each([
    ['an issuer template given as issuer', { key: KEY, issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0' }],
    ['the v1.0 template', { key: KEY, issuer: V1_TEMPLATE }],
    ['a template among exact issuers', { key: KEY, issuer: ['https://a.example', V1_TEMPLATE] }],
    ['organizations', { issuerBaseURL: 'https://login.microsoftonline.com/organizations/v2.0' }],
    ['common', { issuerBaseURL: 'https://login.microsoftonline.com/common/v2.0' }],
    ['consumers', { issuerBaseURL: 'https://login.microsoftonline.com/consumers/v2.0' }],
    ['common (v1.0)', { issuerBaseURL: 'https://login.microsoftonline.com/common' }],
    [
      'a multi-tenant base among others',
      { issuerBaseURL: ['https://a.example', 'https://login.microsoftonline.us/organizations/v2.0'] },
    ],
  ])('refuses %s without tenants', (_case, options) => {
    const err = optionErrorOf(make(options));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.option).toBe('tenants');
    expect(err.message).toMatch(/option "tenants" must say which tenants to accept/);
  });

  it.each([
    ['tenants with an exact issuer', { key: KEY, issuer: 'https://a.example', tenants: 'any' }, 'tenants'],
    ['tenants with issuer: false', { key: KEY, issuer: false, tenants: 'any' }, 'tenants'],
    ['an empty tenants array', { key: KEY, issuer: V1_TEMPLATE, tenants: [] }, 'tenants'],
    ['a tenant that is no GUID', { key: KEY, issuer: V1_TEMPLATE, tenants: ['contoso.com'] }, 'tenants[0]'],
    ['a tenants string other than any', { key: KEY, issuer: V1_TEMPLATE, tenants: 'all' }, 'tenants'],
    ['a misspelt placeholder', { key: KEY, issuer: 'https://sts.windows.net/{tenantId}/', tenants: 'any' }, 'issuer'],
    [
      'the placeholder twice',
      { key: KEY, issuer: 'https://x.example/{tenantid}/{tenantid}', tenants: 'any' },
      'issuer',
    ],
    [
      'two multi-tenant bases of one template',
      {
        issuerBaseURL: [
          'https://login.microsoftonline.com/common/v2.0',
          'https://login.microsoftonline.com/organizations/v2.0',
        ],
        tenants: 'any',
      },
      'issuerBaseURL[1]',
    ],
  ])('refuses %s', (_case, options, option) => {
    expect(optionErrorOf(make(options)).option).toBe(option);
  });

  it.each([
    ['a template with tenants', { key: KEY, issuer: V1_TEMPLATE, tenants: [TENANT_A] }],
    [
      'a multi-tenant base with tenants',
      { issuerBaseURL: 'https://login.microsoftonline.com/common/v2.0', tenants: 'any' },
    ],
    [
      'tenants with a base whose template only discovery could reveal',
      { issuerBaseURL: 'https://as.example/t', tenants: 'any' },
    ],
  ])('accepts %s', (_case, options) => {
    expect(make(options)).not.toThrow();
  });
});
