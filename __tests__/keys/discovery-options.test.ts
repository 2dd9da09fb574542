// issuerBaseURL and discovery as users write them, checked at createTokenAuth without fetching anything.
import { createTokenAuth, type TokenAuthOptions } from '../../lib';

const AUDIENCE = 'https://api.example.test';
const make = (options: Record<string, unknown>) => () =>
  createTokenAuth({ audience: AUDIENCE, claims: 'jwt', ...options } as unknown as TokenAuthOptions).close();

describe('issuerBaseURL validation (at createTokenAuth, never at request time)', () => {
  it.each([
    [
      'together with key',
      { issuerBaseURL: 'https://as.example', key: { jwksUri: 'https://as.example/jwks' } },
      /"issuerBaseURL" replaces "key"/,
    ],
    [
      'together with issuer',
      { issuerBaseURL: 'https://as.example', issuer: 'https://as.example' },
      /"issuerBaseURL" replaces "issuer"/,
    ],
    [
      'together with issuer: false',
      { issuerBaseURL: 'https://as.example', issuer: false },
      /"issuerBaseURL" replaces "issuer"/,
    ],
    ['an empty array', { issuerBaseURL: [] }, /"issuerBaseURL" must be a URL string or a non-empty array/],
    ['not a string', { issuerBaseURL: 42 }, /"issuerBaseURL" must be a URL string/],
    [
      'an array holding a non-string',
      { issuerBaseURL: ['https://a.example', 7] },
      /"issuerBaseURL\[1\]" must be a URL string/,
    ],
    ['not a URL', { issuerBaseURL: 'as.example' }, /"issuerBaseURL" is not a valid absolute URL/],
    ['plain http on a public host', { issuerBaseURL: 'http://as.example' }, /"issuerBaseURL" must be an https: URL/],
    ['another scheme', { issuerBaseURL: 'ftp://as.example' }, /"issuerBaseURL" must be an https: URL/],
    ['credentials', { issuerBaseURL: 'https://user:pw@as.example' }, /must not contain credentials/],
    ['a query string', { issuerBaseURL: 'https://as.example/?tenant=1' }, /must not contain a query string/],
    ['a fragment', { issuerBaseURL: 'https://as.example/#x' }, /must not contain a fragment/],
    [
      'the same issuer twice',
      { issuerBaseURL: ['https://as.example/t', 'https://as.example/t'] },
      /names "https:\/\/as.example\/t" twice/,
    ],
    [
      'the same issuer twice, once with a trailing slash',
      { issuerBaseURL: ['https://as.example/t', 'https://as.example/t/'] },
      /twice/,
    ],
    [
      'an HMAC algorithm',
      { issuerBaseURL: 'https://as.example', algorithms: ['HS256'] },
      /HS\* algorithm with issuerBaseURL/,
    ],
  ])('throws a TypeError for %s', (_case, options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });

  it('still requires audience', () => {
    expect(() =>
      createTokenAuth({ issuerBaseURL: 'https://as.example', claims: 'jwt' } as unknown as TokenAuthOptions),
    ).toThrow(/option "audience" is required/);
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

describe('discovery.timeout: one refresh of metadata and key set together', () => {
  it.each([
    [
      'without issuerBaseURL',
      { key: { secret: 'x'.repeat(32) }, issuer: 'i', discovery: { timeout: 1 } },
      /"discovery" applies only with issuerBaseURL/,
    ],
    ['not an object', { issuerBaseURL: 'https://as.example', discovery: '1s' }, /"discovery" must be an object/],
    [
      'zero',
      { issuerBaseURL: 'https://as.example', discovery: { timeout: 0 } },
      /"discovery.timeout" must be more than zero/,
    ],
    ['not a duration', { issuerBaseURL: 'https://as.example', discovery: { timeout: 'soon' } }, /discovery\.timeout/],
    [
      'an unknown field',
      { issuerBaseURL: 'https://as.example', discovery: { cooldown: 1 } },
      /unknown option "discovery.cooldown"/,
    ],
  ])('throws a TypeError at createTokenAuth for a discovery option %s', (_case, options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });
});
