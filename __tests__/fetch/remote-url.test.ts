// The address of a remote key source (key.jwksUri, key.upstream), checked at createTokenAuth: https, or http on
// loopback only unless allowInsecureHttp; no credentials, no fragment.
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { AUDIENCE, ISSUER } from '../fixtures/issuer';

describe('remote key options', () => {
  const base = { issuer: ISSUER, audience: AUDIENCE };
  const make = (options: Record<string, unknown>) => () =>
    createTokenAuth({ ...base, ...options } as TokenAuthOptions).close();

  it.each([
    'https://keys.example.com/.well-known/jwks.json',
    'http://127.0.0.1:9/jwks',
    'http://127.3.4.5/jwks',
    'http://[::1]:9/jwks',
    'http://localhost/jwks',
    'http://LOCALHOST:8080/jwks',
  ])('accepts %s', (uri) => {
    expect(make({ key: { jwksUri: uri } })).not.toThrow();
    expect(make({ key: { upstream: uri.replace(/\/jwks$/, '') } })).not.toThrow();
  });

  it.each([
    ['http outside loopback', 'http://keys.example.com/jwks', /must be an https: URL/],
    ['a host that only starts like loopback', 'http://127.0.0.1.example.com/jwks', /must be an https: URL/],
    ['another scheme', 'ftp://keys.example.com/jwks', /must be an https: URL/],
    ['a relative URL', '/jwks', /not a valid absolute URL/],
    ['an empty string', '', /must be a URL string/],
    ['credentials', 'https://user:pass@keys.example.com/jwks', /must not contain credentials/],
    ['a fragment', 'https://keys.example.com/jwks#x', /must not contain a fragment/],
  ])('refuses %s with a TypeError', (_what, uri, message) => {
    expect(make({ key: { jwksUri: uri } })).toThrow(TypeError);
    expect(make({ key: { jwksUri: uri } })).toThrow(message);
    expect(make({ key: { upstream: uri } })).toThrow(message);
  });

  it('accepts http outside loopback with allowInsecureHttp: true', () => {
    expect(make({ key: { jwksUri: 'http://keys.example.com/jwks' }, allowInsecureHttp: true })).not.toThrow();
    expect(make({ key: { upstream: 'http://id.example.com/api' }, allowInsecureHttp: true })).not.toThrow();
  });
});
