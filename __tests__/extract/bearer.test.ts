import { alphabetFault, bearerCredential, extractBearer, isPreflight, tokenInQuery } from '../../lib/extract/bearer';
import { TokenAuthError } from '../../lib/base/errors';
import { NOW, shapeB, sign } from '../fixtures/issuer';

const JWS = 'aGVhZGVy.cGF5bG9hZA.c2ln';

describe('extractBearer (RFC 6750 §2.1)', () => {
  it.each([
    ['Bearer aGVhZGVy.cGF5bG9hZA.c2ln', JWS],
    ['bearer aGVhZGVy.cGF5bG9hZA.c2ln', JWS],
    ['BEARER aGVhZGVy.cGF5bG9hZA.c2ln', JWS],
    ['  Bearer    aGVhZGVy.cGF5bG9hZA.c2ln  ', JWS],
  ])('reads %p', (header, token) => {
    expect(extractBearer(header, 8192, 'jws')).toBe(token);
  });

  it.each([
    [undefined],
    [''],
    ['   '],
    ['Basic dXNlcjpwYXNz'],
    ['Token abc'],
    ['Bearerabc.def.ghi'],
    ['Digest username="x"'],
  ])('treats %p as no bearer credential (missing)', (header) => {
    expect(extractBearer(header, 8192, 'jws')).toBeUndefined();
  });

  it.each([
    ['Bearer'],
    ['Bearer   '],
    [`Bearer ${JWS} ${JWS}`],
    [`Bearer ${JWS},${JWS}`],
    ['Bearer abc+def.ghi.jkl'],
    ['Bearer abc/def.ghi.jkl'],
    ['Bearer abc=.ghi.jkl'],
    ['Bearer abc\tdef'],
    ['Bearer "abc.def.ghi"'],
  ])('answers invalid_token for %p', (header) => {
    const result = extractBearer(header, 8192, 'jws');
    expect(result).toBeInstanceOf(TokenAuthError);
    expect((result as TokenAuthError).code).toBe('invalid_token');
  });

  it('applies the length cap to the token itself', () => {
    expect(extractBearer(`Bearer ${'a'.repeat(100)}`, 100, 'jws')).toBe('a'.repeat(100));
    expect((extractBearer(`Bearer ${'a'.repeat(101)}`, 100, 'jws') as TokenAuthError).reason).toBe('length');
  });

  it('accepts an RFC 6750 b64token (opaque) only in b64token mode', () => {
    expect(extractBearer('Bearer abc+/~-._xyz==', 8192, 'b64token')).toBe('abc+/~-._xyz==');
    expect(extractBearer('Bearer abc+/~-._xyz==', 8192, 'jws')).toBeInstanceOf(TokenAuthError);
    expect(extractBearer('Bearer ab=c', 8192, 'b64token')).toBeInstanceOf(TokenAuthError);
  });

  it('refuses several Authorization values', () => {
    expect(extractBearer([`Bearer ${JWS}`, `Bearer ${JWS}`], 8192, 'jws')).toBeInstanceOf(TokenAuthError);
  });
});

describe('isPreflight', () => {
  it('is true only for OPTIONS with Access-Control-Request-Method', () => {
    expect(isPreflight('OPTIONS', { 'access-control-request-method': 'GET' })).toBe(true);
    expect(isPreflight('OPTIONS', {})).toBe(false);
    expect(isPreflight('GET', { 'access-control-request-method': 'GET' })).toBe(false);
  });
});

// The hot path reads the credential and leaves the alphabet check to a cache miss (bench/ measures it): the two
// halves together must answer exactly as the whole.
describe('bearerCredential and alphabetFault', () => {
  it('together answer exactly as extractBearer does', () => {
    const token = sign(shapeB(NOW));
    const headers = [
      undefined,
      '',
      'Basic abc',
      'Bearer',
      'Bearer ',
      `Bearer ${token}`,
      `bearer   ${token}  `,
      `BEARER ${token}`,
      `Bearerx ${token}`,
      'Bearer a+b.c.d',
      'Bearer a b',
      `Bearer ${'x'.repeat(700)}`,
      'Bearer \u00a0abc',
      ['Bearer a', 'Bearer b'],
    ];
    for (const header of headers) {
      const credential = bearerCredential(header, 600);
      const composed = typeof credential === 'string' ? (alphabetFault(credential, 'jws') ?? credential) : credential;
      const direct = extractBearer(header, 600, 'jws');
      if (direct instanceof TokenAuthError) {
        expect(composed).toBeInstanceOf(TokenAuthError);
        expect((composed as TokenAuthError).reason).toBe(direct.reason);
      } else {
        expect(composed).toBe(direct);
      }
    }
  });
});

describe('tokenInQuery (RFC 6750 §2.3, seen but never read)', () => {
  it.each([
    ['/me?access_token=abc', true],
    ['/me?page=2&access_token=', true],
    ['/me?access%5Ftoken=abc', true],
    ['/me?token=abc', false],
    ['/me#access_token=abc', false],
    ['/access_token=abc', false],
    ['/me', false],
    [undefined, false],
  ])('%p → %p', (url, seen) => {
    expect(tokenInQuery(url)).toBe(seen);
  });
});
