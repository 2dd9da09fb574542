import { TokenAuthError } from '../../lib/base/errors';
import { isJwsText, jwsSignedEnd, normalizeTyp, readJsonSegment } from '../../lib/jose/jws';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (err) {
    return (err as { reason?: string }).reason;
  }
  return undefined;
}

describe('isJwsText', () => {
  it('accepts base64url characters and dots only (RFC 7515 §7.1)', () => {
    expect(isJwsText('abc-_.DEF.019')).toBe(true);
    for (const text of ['', 'a b', 'a+b', 'a/b', 'a=', 'a~b', 'é', 'a\nb']) expect(isJwsText(text)).toBe(false);
  });
});

describe('jwsSignedEnd', () => {
  it('finds the second dot of three segments with a canonical signature', () => {
    expect(jwsSignedEnd('aa.bb.cA')).toBe(5);
  });

  it.each([
    ['two segments', 'aa.bb', 'segments'],
    ['four segments', 'aa.bb.cc.dd', 'segments'],
    ['an empty signature', 'aa.bb.', 'signature-missing'],
    ['a signature of 4n+1 characters', 'aa.bb.ccccc', 'signature-encoding'],
    ['a signature with unused bits set', 'aa.bb.AB', 'signature-encoding'],
  ])('refuses %s as invalid_token (%s)', (_case, text, reason) => {
    expect(() => jwsSignedEnd(text)).toThrow(TokenAuthError);
    expect(reasonOf(() => jwsSignedEnd(text))).toBe(reason);
  });

  it("throws the caller's error when one is given", () => {
    const mine = new Error('mine');
    expect(() => jwsSignedEnd('aa.bb', () => mine)).toThrow(mine);
  });
});

describe('readJsonSegment', () => {
  it('reads a JSON object from canonical base64url', () => {
    expect(readJsonSegment(b64({ alg: 'ES256' }), 'header')).toEqual({ alg: 'ES256' });
  });

  it.each([
    ['an empty segment', '', 'header-encoding'],
    ['a non-canonical segment', `${b64({ a: 1 }).slice(0, -1)}x`, 'header-encoding'],
    ['text that is not JSON', Buffer.from('{nope').toString('base64url'), 'header-json'],
    ['JSON that is not an object', b64([1]), 'header-type'],
  ])('refuses %s with the reason given to the refusal', (_case, segment, reason) => {
    expect(reasonOf(() => readJsonSegment(segment, 'header'))).toBe(reason);
    const seen: string[] = [];
    expect(() =>
      readJsonSegment(segment, 'header', (why) => {
        seen.push(why);
        return new Error(why);
      }),
    ).toThrow(reason);
    expect(seen).toEqual([reason]);
  });
});

describe('normalizeTyp (RFC 7515 §4.1.9)', () => {
  it('compares case-insensitively, with or without application/', () => {
    for (const typ of ['dpop+jwt', 'DPoP+JWT', 'application/dpop+jwt', 'Application/DPOP+jwt']) {
      expect(normalizeTyp(typ)).toBe('dpop+jwt');
    }
    expect(normalizeTyp('application/token-introspection+jwt')).toBe('token-introspection+jwt');
    expect(normalizeTyp('text/dpop+jwt')).toBe('text/dpop+jwt');
  });
});
