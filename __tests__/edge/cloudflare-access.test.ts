// cloudflareAccess(): its arguments checked at the call (an OptionError naming each), and the options it returns.
import { createTokenAuth } from '../../lib';
import { cloudflareAccess } from '../../lib/edge';
import { optionErrorOf } from '../fixtures/option-error';

const AUD = 'a'.repeat(64);

describe('cloudflareAccess', () => {
  it('returns options for the team: its header, its certs address as a JWKS, iss the team domain, RS256, claims jwt', () => {
    const options = cloudflareAccess({ teamDomain: 'https://acme.cloudflareaccess.com/', audience: AUD });
    expect(options).toMatchObject({
      key: { jwksUri: 'https://acme.cloudflareaccess.com/cdn-cgi/access/certs' },
      issuer: 'https://acme.cloudflareaccess.com',
      audience: [AUD],
      algorithms: ['RS256'],
      claims: 'jwt',
    });
    const req = { headers: { 'cf-access-jwt-assertion': 'a.b.c', authorization: 'Bearer x.y.z' } };
    expect(options.getToken?.(req as never)).toBe('a.b.c');
    expect(options.getToken?.({ headers: { authorization: 'Bearer x.y.z' } } as never)).toBeUndefined();
    createTokenAuth(options).close();
  });

  it.each<[string, unknown, string]>([
    ['no options', undefined, ''],
    ['an unknown argument', { teamDomain: 'https://acme.cloudflareaccess.com', audience: AUD, aud: AUD }, 'aud'],
    ['no teamDomain', { audience: AUD }, 'teamDomain'],
    ['an http: teamDomain', { teamDomain: 'http://acme.cloudflareaccess.com', audience: AUD }, 'teamDomain'],
    [
      'a teamDomain with a path',
      { teamDomain: 'https://acme.cloudflareaccess.com/cdn-cgi', audience: AUD },
      'teamDomain',
    ],
    ['a teamDomain with a query', { teamDomain: 'https://acme.cloudflareaccess.com/?x', audience: AUD }, 'teamDomain'],
    ['no audience', { teamDomain: 'https://acme.cloudflareaccess.com' }, 'audience'],
    ['an empty audience', { teamDomain: 'https://acme.cloudflareaccess.com', audience: [] }, 'audience'],
    ['an audience with spaces', { teamDomain: 'https://acme.cloudflareaccess.com', audience: ` ${AUD}` }, 'audience'],
    [
      'an http: jwksUri off loopback',
      { teamDomain: 'https://acme.cloudflareaccess.com', audience: AUD, jwksUri: 'http://keys.example.com/certs' },
      'jwksUri',
    ],
    [
      'a jwksUri that is no URL',
      { teamDomain: 'https://acme.cloudflareaccess.com', audience: AUD, jwksUri: 'certs.json' },
      'jwksUri',
    ],
    [
      'a jwksUri with credentials',
      { teamDomain: 'https://acme.cloudflareaccess.com', audience: AUD, jwksUri: 'https://u:p@keys.example.com/' },
      'jwksUri',
    ],
  ])('refuses %s with an OptionError naming it', (_what, options, option) => {
    const err = optionErrorOf(() => cloudflareAccess(options as never));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.option).toBe(option);
    expect(err.message).toMatch(/cloudflareAccess/);
  });

  it('accepts a loopback http: teamDomain (a test server)', () => {
    expect(cloudflareAccess({ teamDomain: 'http://127.0.0.1:8080', audience: AUD }).issuer).toBe(
      'http://127.0.0.1:8080',
    );
  });

  it('takes its keys from jwksUri (a mirror, or a loopback test server), iss still the team domain', () => {
    const options = cloudflareAccess({
      teamDomain: 'https://acme.cloudflareaccess.com',
      audience: AUD,
      jwksUri: 'http://127.0.0.1:8080/cdn-cgi/access/certs',
    });
    expect(options.key).toEqual({ jwksUri: 'http://127.0.0.1:8080/cdn-cgi/access/certs' });
    expect(options.issuer).toBe('https://acme.cloudflareaccess.com');
  });

  it('returns public options only: nothing rides under a symbol (its keys are a plain JWKS)', () => {
    const options = { ...cloudflareAccess({ teamDomain: 'https://acme.cloudflareaccess.com', audience: AUD }) };
    expect(Object.getOwnPropertySymbols(options)).toEqual([]);
  });
});
