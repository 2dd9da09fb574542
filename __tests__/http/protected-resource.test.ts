// RFC 9728 metadata through real Express 4 and 5 apps: the document field by field at the path and root forms,
// CORS and caching, methods, the discovered issuer of a real oidc-provider, and the options that shape it.
import request from 'supertest';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { NOW, SECRET } from '../fixtures/issuer';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';

const RESOURCE = 'https://mcp.example.com/mcp';
const AS = 'https://as.example.com';
const PATH_FORM = '/.well-known/oauth-protected-resource/mcp';
const ROOT_FORM = '/.well-known/oauth-protected-resource';
const base: TokenAuthOptions = {
  key: { secret: SECRET },
  issuer: AS,
  resource: RESOURCE,
  claims: 'jwt',
  clock: () => NOW,
};

describe.each(EXPRESS_VERSIONS)('protectedResourceMetadata() through %s', (_name, express) => {
  /** The metadata document, and GET /other that is not the document's. */
  const metadataApp = (options: Partial<TokenAuthOptions> = {}) =>
    appWith(
      express,
      { ...base, ...options },
      {
        routes: (app, auth) => {
          app.use(auth.protectedResourceMetadata());
          app.get('/other', (_req, res) => {
            res.json({ other: true });
          });
        },
      },
    );

  it.each([PATH_FORM, ROOT_FORM])(
    'serves the document at %s, field by field, with CORS and a max-age',
    async (path) => {
      const app = metadataApp({
        scopesSupported: ['mcp:tools', 'mcp:admin'],
        resourceName: 'Example MCP',
        resourceDocumentation: 'https://docs.example.com/mcp',
      });
      const res = await request(app).get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cache-control']).toBe('public, max-age=3600');
      expect(res.body).toEqual({
        resource: RESOURCE,
        authorization_servers: [AS],
        scopes_supported: ['mcp:tools', 'mcp:admin'],
        bearer_methods_supported: ['header'],
        resource_name: 'Example MCP',
        resource_documentation: 'https://docs.example.com/mcp',
      });
    },
  );

  it('names only the fields it can vouch for: no scopes, name or documentation unless configured', async () => {
    const res = await request(metadataApp()).get(PATH_FORM).expect(200);
    expect(res.body).toEqual({ resource: RESOURCE, authorization_servers: [AS], bearer_methods_supported: ['header'] });
  });

  it('keeps the resource exactly as configured (RFC 9728 §3.3), and every configured issuer', async () => {
    const resource = 'https://MCP.Example.com/Tools';
    const res = await request(metadataApp({ resource, issuer: [AS, 'https://as2.example.com'] }))
      .get('/.well-known/oauth-protected-resource/Tools')
      .expect(200);
    expect(res.body.resource).toBe(resource);
    expect(res.body.authorization_servers).toEqual([AS, 'https://as2.example.com']);
  });

  it('leaves authorization_servers out when the issuer is unchecked (issuer: false)', async () => {
    const res = await request(metadataApp({ issuer: false }))
      .get(PATH_FORM)
      .expect(200);
    expect(res.body).not.toHaveProperty('authorization_servers');
  });

  it('serves only the root form for a resource without a path, with or without its slash', async () => {
    for (const resource of ['https://api.example.com', 'https://api.example.com/']) {
      const app = metadataApp({ resource });
      const res = await request(app).get(ROOT_FORM).expect(200);
      expect(res.body.resource).toBe(resource);
      await request(app).get(`${ROOT_FORM}/api`).expect(404);
    }
  });

  it('passes other paths on, and is not fooled by a longer or shorter path', async () => {
    const app = metadataApp();
    await request(app).get('/other').expect(200, { other: true });
    await request(app).get(`${PATH_FORM}/more`).expect(404);
    await request(app).get('/.well-known/oauth-protected-resource/mc').expect(404);
  });

  it('answers HEAD with the headers, a CORS preflight with 204, and other methods with 405', async () => {
    const app = metadataApp();
    const head = await request(app).head(PATH_FORM).expect(200);
    expect(head.headers['access-control-allow-origin']).toBe('*');
    const preflight = await request(app)
      .options(PATH_FORM)
      .set({
        Origin: 'https://client.example',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'mcp-protocol-version',
      })
      .expect(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
    expect(preflight.headers['access-control-allow-headers']).toBe('*');
    const post = await request(app).post(PATH_FORM).expect(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(post.body).toEqual({ status: 'error', message: 'Method not allowed' });
  });

  it('says what DPoP accepts, and that Bearer is refused with dpop.required', async () => {
    const optional = await request(metadataApp({ dpop: { algorithms: ['ES256', 'EdDSA'] } }))
      .get(PATH_FORM)
      .expect(200);
    expect(optional.body.dpop_signing_alg_values_supported).toEqual(['ES256', 'EdDSA', 'Ed25519']);
    expect(optional.body.dpop_bound_access_tokens_required).toBe(false);
    expect(optional.body).not.toHaveProperty('tls_client_certificate_bound_access_tokens');
    const required = await request(metadataApp({ dpop: { required: true } }))
      .get(PATH_FORM)
      .expect(200);
    expect(required.body.dpop_bound_access_tokens_required).toBe(true);
    expect(required.body.dpop_signing_alg_values_supported).toContain('ES256');
  });

  it('says certificate-bound tokens are supported with mtls', async () => {
    const res = await request(metadataApp({ mtls: {} }))
      .get(PATH_FORM)
      .expect(200);
    expect(res.body.tls_client_certificate_bound_access_tokens).toBe(true);
    expect(res.body).not.toHaveProperty('dpop_signing_alg_values_supported');
  });
});

describe('protectedResourceMetadata() with a discovered authorization server (oidc-provider)', () => {
  let as: AuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer();
  });
  afterAll(async () => {
    await as.close();
  });

  it.each(EXPRESS_VERSIONS)('lists the issuer as discovered, not as typed (%s)', async (_name, express) => {
    // Typed with a trailing slash the provider's issuer lacks: the document names the provider's own.
    expect(as.issuer.endsWith('/')).toBe(false);
    const auth = createTokenAuth({ issuerBaseURL: `${as.issuer}/`, resource: 'http://127.0.0.1:1/mcp' });
    const app = express();
    app.use(auth.protectedResourceMetadata());
    const res = await request(app).get(PATH_FORM).expect(200);
    expect(res.body.authorization_servers).toEqual([as.issuer]);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    auth.close();
  });

  it('stands in with the configured base URL, uncached, while discovery cannot answer; then names the discovered issuer', async () => {
    let now = NOW;
    const auth = createTokenAuth({
      issuerBaseURL: `${as.issuer}/`,
      resource: 'http://127.0.0.1:1/mcp',
      clock: () => now,
    });
    const app = EXPRESS_VERSIONS[0][1]();
    app.use(auth.protectedResourceMetadata());
    await as.stop();
    try {
      const down = await request(app).get(PATH_FORM).expect(200);
      expect(down.body.authorization_servers).toEqual([`${as.issuer}/`]);
      expect(down.headers['cache-control']).toBe('no-store');
    } finally {
      await as.start();
    }
    // Within the cooldown nothing is fetched again; after it, discovery answers.
    const soon = await request(app).get(PATH_FORM).expect(200);
    expect(soon.body.authorization_servers).toEqual([`${as.issuer}/`]);
    now += 31;
    const later = await request(app).get(PATH_FORM).expect(200);
    expect(later.body.authorization_servers).toEqual([as.issuer]);
    expect(later.headers['cache-control']).toBe('public, max-age=3600');
    auth.close();
  });
});

describe('resource options', () => {
  const make = (options: Record<string, unknown>) => () => createTokenAuth({ ...base, ...options } as TokenAuthOptions);

  it.each([
    ['not a string', { resource: 42 }, /option "resource" must be a URL string/],
    ['relative', { resource: '/mcp' }, /option "resource" is not a valid absolute URL/],
    ['another scheme', { resource: 'urn:example:mcp' }, /option "resource" must be an https: URL/],
    ['without its two slashes', { resource: 'https:mcp.example.com/mcp' }, /option "resource" must be an absolute URI/],
    [
      'http off loopback',
      { resource: 'http://mcp.example.com/mcp' },
      /option "resource" must be an https: URL \(plain http: is accepted only for loopback/,
    ],
    ['with a fragment', { resource: 'https://mcp.example.com/mcp#x' }, /option "resource" must not contain a fragment/],
    [
      'with an empty fragment',
      { resource: 'https://mcp.example.com/mcp#' },
      /option "resource" must not contain a fragment/,
    ],
    ['with a query', { resource: 'https://mcp.example.com/mcp?x=1' }, /option "resource" must not contain a query/],
    [
      'with credentials',
      { resource: 'https://u:p@mcp.example.com/mcp' },
      /option "resource" must not contain credentials/,
    ],
    [
      'not in normal form',
      { resource: 'https://mcp.example.com/a/../mcp' },
      /option "resource" must be a URI in normal form/,
    ],
    [
      'scopesSupported without resource',
      { resource: undefined, audience: 'x', scopesSupported: ['a'] },
      /option "scopesSupported" needs option "resource"/,
    ],
    [
      'resourceName without resource',
      { resource: undefined, audience: 'x', resourceName: 'A' },
      /option "resourceName" needs option "resource"/,
    ],
    ['scopesSupported not scopes', { scopesSupported: ['a b'] }, /option "scopesSupported" holds an invalid scope/],
    ['scopesSupported not an array', { scopesSupported: 'a' }, /option "scopesSupported" must be an array/],
    [
      'scopesSupported listing offline_access (MCP 2026-07-28, SEP-2207)',
      { scopesSupported: ['mcp:tools', 'offline_access'] },
      /option "scopesSupported" must not list "offline_access"/,
    ],
    ['resourceName empty', { resourceName: '' }, /option "resourceName" must be a non-empty string/],
    [
      'resourceDocumentation not a URL',
      { resourceDocumentation: 'docs' },
      /option "resourceDocumentation" must be an absolute URL/,
    ],
    [
      'neither audience nor resource',
      { resource: undefined },
      /option "audience" is required unless "resource" is given/,
    ],
  ])('refuses a resource %s with a TypeError at createTokenAuth', (_what, options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });

  it('accepts http on loopback, or anywhere with allowInsecureHttp', () => {
    expect(make({ resource: 'http://127.0.0.1:3000/mcp' })).not.toThrow();
    expect(make({ resource: 'http://localhost/mcp' })).not.toThrow();
    expect(make({ resource: 'http://mcp.internal/mcp', allowInsecureHttp: true })).not.toThrow();
  });

  it('refuses protectedResourceMetadata() without a resource, when it is called (at start-up)', () => {
    const auth = createTokenAuth({ key: { secret: SECRET }, issuer: AS, audience: 'api' });
    expect(() => auth.protectedResourceMetadata()).toThrow(TypeError);
    expect(() => auth.protectedResourceMetadata()).toThrow(/protectedResourceMetadata\(\) needs option "resource"/);
  });
});
