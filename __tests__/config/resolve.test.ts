import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';

const base = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE } as TokenAuthOptions;
const make = (changes: Record<string, unknown>) => () => createTokenAuth({ ...base, ...changes } as TokenAuthOptions);

describe('createTokenAuth option validation', () => {
  it('accepts the minimal options', () => {
    expect(() => createTokenAuth(base)).not.toThrow();
  });

  it.each([
    ['issuer missing', { issuer: undefined }, /"issuer" is required/],
    ['audience missing', { audience: undefined }, /"audience" is required/],
    ['issuer empty', { issuer: '' }, /"issuer"/],
    ['audience an empty array', { audience: [] }, /"audience"/],
    ['issuer true', { issuer: true }, /"issuer"/],
    ['an unknown option', { isuer: ISSUER }, /unknown option "isuer"/],
    ['key missing', { key: undefined }, /"key" is required/],
    ['key a string', { key: 'secret' }, /"key" must be/],
    ['two key forms', { key: { secret: SECRET, publicKey: 'x' } }, /exactly one of/],
    ['no key form', { key: {} }, /exactly one of/],
    ['a short secret', { key: { secret: 'short' } }, /at least 32 bytes/],
    ['a secret of the wrong type', { key: { secret: 42 } }, /key.secret must be/],
    ['algorithms with none', { algorithms: ['none'] }, /never include "none"/],
    ['algorithms with None', { algorithms: ['HS256', 'None'] }, /never include "none"/],
    ['an unsupported algorithm', { algorithms: ['ES256K'] }, /unsupported algorithm/],
    ['an empty algorithms list', { algorithms: [] }, /"algorithms"/],
    ['RS256 with a secret (key confusion)', { algorithms: ['RS256'] }, /cannot verify/],
    ['claims mode unknown', { claims: 'loose' }, /"claims"/],
    ['errors mode unknown', { errors: 'throw' }, /"errors"/],
    ['realm with a quote', { realm: 'a"b' }, /"realm"/],
    ['clockTolerance negative', { clockTolerance: -1 }, /"clockTolerance"/],
    ['clockTolerance a bare numeric string', { clockTolerance: '10' }, /"clockTolerance"/],
    ['maxTokenAge without a known unit', { maxTokenAge: '1 fortnight' }, /"maxTokenAge"/],
    ['maxLifetime NaN', { maxLifetime: Number.NaN }, /"maxLifetime"/],
    ['maxTokenLength zero', { maxTokenLength: 0 }, /"maxTokenLength"/],
    ['cache.max zero', { cache: { max: 0 } }, /"cache.max"/],
    ['cache.maxBytes fractional', { cache: { maxBytes: 1.5 } }, /"cache.maxBytes"/],
    ['cache.ttl garbage', { cache: { ttl: 'soon' } }, /"cache.ttl"/],
    ['an unknown cache option', { cache: { size: 1 } }, /"cache.size"/],
    ['cache true', { cache: true }, /"cache"/],
    ['isRevoked not a function', { isRevoked: true }, /"isRevoked"/],
    ['getToken not a function', { getToken: 'query' }, /"getToken"/],
    ['onError not a function', { onError: {} }, /"onError"/],
    ['clock not a function', { clock: 5 }, /"clock"/],
    ['allowInsecureHttp not a boolean', { allowInsecureHttp: 'yes' }, /"allowInsecureHttp"/],
  ])('throws a TypeError for %s', (_case, changes, message) => {
    expect(make(changes)).toThrow(TypeError);
    expect(make(changes)).toThrow(message);
  });

  it('requires algorithms with a resolver function', () => {
    expect(make({ key: () => undefined })).toThrow(/"algorithms" is required/);
    expect(make({ key: () => undefined, algorithms: ['RS256'] })).not.toThrow();
  });
});
