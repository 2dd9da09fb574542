import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { optionsFromEnv } from '../../lib/default-auth';
import { metadataUrls } from '../../lib/keys/discovery';

const AUDIENCE = 'https://api.example.test';
const make = (options: Record<string, unknown>) => () => createTokenAuth({ audience: AUDIENCE, claims: 'jwt', ...options } as unknown as TokenAuthOptions).close();

describe('issuerBaseURL validation (at createTokenAuth, never at request time)', () => {
  it.each([
    ['together with key', { issuerBaseURL: 'https://as.example', key: { jwksUri: 'https://as.example/jwks' } }, /"issuerBaseURL" replaces "key"/],
    ['together with issuer', { issuerBaseURL: 'https://as.example', issuer: 'https://as.example' }, /"issuerBaseURL" replaces "issuer"/],
    ['together with issuer: false', { issuerBaseURL: 'https://as.example', issuer: false }, /"issuerBaseURL" replaces "issuer"/],
    ['an empty array', { issuerBaseURL: [] }, /"issuerBaseURL" must be a URL string or a non-empty array/],
    ['not a string', { issuerBaseURL: 42 }, /"issuerBaseURL" must be a URL string/],
    ['an array holding a non-string', { issuerBaseURL: ['https://a.example', 7] }, /"issuerBaseURL\[1\]" must be a URL string/],
    ['not a URL', { issuerBaseURL: 'as.example' }, /"issuerBaseURL" is not a valid absolute URL/],
    ['plain http on a public host', { issuerBaseURL: 'http://as.example' }, /"issuerBaseURL" must be an https: URL/],
    ['another scheme', { issuerBaseURL: 'ftp://as.example' }, /"issuerBaseURL" must be an https: URL/],
    ['credentials', { issuerBaseURL: 'https://user:pw@as.example' }, /must not contain credentials/],
    ['a query string', { issuerBaseURL: 'https://as.example/?tenant=1' }, /must not contain a query string/],
    ['a fragment', { issuerBaseURL: 'https://as.example/#x' }, /must not contain a fragment/],
    ['the same issuer twice', { issuerBaseURL: ['https://as.example/t', 'https://as.example/t'] }, /names "https:\/\/as.example\/t" twice/],
    ['the same issuer twice, once with a trailing slash', { issuerBaseURL: ['https://as.example/t', 'https://as.example/t/'] }, /twice/],
    ['an HMAC algorithm', { issuerBaseURL: 'https://as.example', algorithms: ['HS256'] }, /HS\* algorithm with issuerBaseURL/],
  ])('throws a TypeError for %s', (_case, options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });

  it('still requires audience', () => {
    expect(() => createTokenAuth({ issuerBaseURL: 'https://as.example', claims: 'jwt' } as unknown as TokenAuthOptions))
      .toThrow(/option "audience" is required/);
  });

  it('requires key when issuerBaseURL is absent', () => {
    expect(make({ issuer: 'x' })).toThrow(/option "key" is required/);
  });

  it.each([
    ['one https base URL', 'https://as.example/'],
    ['several', ['https://a.example', 'https://b.example/tenant']],
    ['loopback http', 'http://127.0.0.1:8080/realms/x'],
  ])('accepts %s without fetching anything', (_case, issuerBaseURL) => {
    expect(make({ issuerBaseURL })).not.toThrow();
  });

  it('accepts plain http on a public host with allowInsecureHttp', () => {
    expect(make({ issuerBaseURL: 'http://as.example', allowInsecureHttp: true })).not.toThrow();
  });
});

describe('metadataUrls', () => {
  it.each([
    ['https://as.example', 'https://as.example/.well-known/openid-configuration', 'https://as.example/.well-known/oauth-authorization-server'],
    ['https://as.example/', 'https://as.example/.well-known/openid-configuration', 'https://as.example/.well-known/oauth-authorization-server'],
    ['https://as.example/tenant/1', 'https://as.example/tenant/1/.well-known/openid-configuration', 'https://as.example/.well-known/oauth-authorization-server/tenant/1'],
    ['https://as.example:8443/t/', 'https://as.example:8443/t/.well-known/openid-configuration', 'https://as.example:8443/.well-known/oauth-authorization-server/t'],
  ])('for %s: OIDC appends, RFC 8414 §3.1 inserts between host and path', (base, openid, oauth) => {
    expect(metadataUrls(new URL(base))).toEqual({ openid, oauth });
  });
});

describe('TOKEN_ISSUER_BASE_URL', () => {
  it('reads one base URL, or a comma list for several issuers', () => {
    expect(optionsFromEnv({ TOKEN_ISSUER_BASE_URL: 'https://a.example/', TOKEN_AUDIENCE: AUDIENCE }))
      .toEqual({ issuerBaseURL: 'https://a.example/', audience: AUDIENCE });
    expect(optionsFromEnv({ TOKEN_ISSUER_BASE_URL: 'https://a.example, https://b.example', TOKEN_AUDIENCE: AUDIENCE, TOKEN_ALGORITHMS: 'EdDSA' }))
      .toEqual({ issuerBaseURL: ['https://a.example', 'https://b.example'], audience: AUDIENCE, algorithms: ['EdDSA'] });
  });

  it('takes TOKEN_CLAIMS and TOKEN_SCOPE_CLAIM with it, as every key variable does', () => {
    expect(optionsFromEnv({ TOKEN_ISSUER_BASE_URL: 'https://a.example', TOKEN_AUDIENCE: AUDIENCE, TOKEN_CLAIMS: 'at+jwt', TOKEN_SCOPE_CLAIM: 'scp' }))
      .toEqual({ issuerBaseURL: 'https://a.example', audience: AUDIENCE, claims: 'at+jwt', scopeClaim: ['scp'] });
  });

  it('is a key variable: refused together with another one', () => {
    expect(() => optionsFromEnv({ TOKEN_ISSUER_BASE_URL: 'https://a.example', TOKEN_JWKS_URI: 'https://a.example/jwks', TOKEN_AUDIENCE: AUDIENCE }))
      .toThrow(/set only one of/);
  });

  it('passes TOKEN_ISSUER on, for createTokenAuth to refuse', () => {
    const options = optionsFromEnv({ TOKEN_ISSUER_BASE_URL: 'https://a.example', TOKEN_ISSUER: 'https://a.example', TOKEN_AUDIENCE: AUDIENCE });
    expect(() => createTokenAuth(options)).toThrow(/"issuerBaseURL" replaces "issuer"/);
  });
});
