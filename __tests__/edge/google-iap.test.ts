// googleIap(): its arguments checked at the call (an OptionError naming each), and the options it returns.
import { createTokenAuth } from '../../lib';
import { googleIap } from '../../lib/edge';
import { optionErrorOf } from '../fixtures/option-error';

const BACKEND = '/projects/123456/global/backendServices/789';

describe('googleIap', () => {
  it("returns options for IAP: its header, Google's JWK set, iss https://cloud.google.com/iap, ES256, claims jwt", () => {
    const options = googleIap({ audience: BACKEND });
    expect(options).toMatchObject({
      key: { jwksUri: 'https://www.gstatic.com/iap/verify/public_key-jwk' },
      issuer: 'https://cloud.google.com/iap',
      audience: [BACKEND],
      algorithms: ['ES256'],
      claims: 'jwt',
    });
    expect(options.getToken?.({ headers: { 'x-goog-iap-jwt-assertion': 'a.b.c' } } as never)).toBe('a.b.c');
    expect(options.getToken?.({ headers: { authorization: 'Bearer a.b.c' } } as never)).toBeUndefined();
    expect(googleIap({ audience: '/projects/1/apps/my-project', jwksUri: 'http://127.0.0.1:9/k' }).key).toEqual({
      jwksUri: 'http://127.0.0.1:9/k',
    });
    createTokenAuth(options).close();
  });

  it.each<[string, unknown, string]>([
    ['no audience', {}, 'audience'],
    ['a project id where the number goes', { audience: '/projects/my-project/apps/my-project' }, 'audience'],
    ['a bare backend service id', { audience: '789' }, 'audience'],
    ['an http: jwksUri', { audience: BACKEND, jwksUri: 'http://keys.example.com/jwk' }, 'jwksUri'],
    ['an unknown argument', { audience: BACKEND, issuer: 'x' }, 'issuer'],
  ])('refuses %s with an OptionError naming it', (_what, options, option) => {
    const err = optionErrorOf(() => googleIap(options as never));
    expect(err.option).toBe(option);
    expect(err.message).toMatch(/googleIap/);
  });
});
