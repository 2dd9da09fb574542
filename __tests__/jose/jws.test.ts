// Reading a compact JWS: the memo of the last flat JOSE header (a shortcut the hot path takes, measured in bench/)
// must never change an answer.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import {
  type JwsHeader,
  decodePaddedJws,
  isJwsText,
  isPaddedJwsText,
  jwsSignedEnd,
  normalizeTyp,
  readJsonSegment,
} from '../../lib/jose/jws';
import { paddedBase64url } from '../fixtures/edge-proxies';
import { AUDIENCE, b64, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';
import { TokenAuthError } from '../../lib/base/errors';

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };
const secretKey = createSecretKey(Buffer.from(SECRET));

describe('the memo of the last flat header', () => {
  it('gives every token its own header object, so a resolver that changes one changes no other', async () => {
    const seen: JwsHeader[] = [];
    const resolver = (header: JwsHeader): KeyObject => {
      seen.push({ ...header });
      header.kid = 'changed';
      header.extra = 'added';
      return secretKey;
    };
    const auth = createTokenAuth({ ...base, key: resolver, algorithms: ['HS256'], cache: false });
    const token = sign(shapeB(NOW), SECRET, 'HS256', { kid: 'k1' });
    for (let i = 0; i < 3; i++) await auth.verify(token);
    await auth.verify(sign(shapeB(NOW), SECRET, 'HS256', { kid: 'k1' }));
    expect(seen).toEqual(Array(4).fill({ alg: 'HS256', typ: 'JWT', kid: 'k1' }));
  });

  it('decodes a header holding objects afresh for every token', async () => {
    const seen: JwsHeader[] = [];
    const resolver = (header: JwsHeader): KeyObject => {
      seen.push(header);
      (header.x5c as string[]).push('changed');
      return secretKey;
    };
    const auth = createTokenAuth({ ...base, key: resolver, algorithms: ['HS256'], cache: false });
    const token = sign(shapeB(NOW), SECRET, 'HS256', { x5c: ['a'] });
    await auth.verify(token);
    await auth.verify(token);
    expect(seen.map((h) => h.x5c)).toEqual([
      ['a', 'changed'],
      ['a', 'changed'],
    ]);
    expect(seen[0]).not.toBe(seen[1]);
  });

  it('never lets the memo answer for a header that differs, even by one character', async () => {
    const auth = createTokenAuth(base);
    const good = sign(shapeB(NOW));
    await auth.verify(good);
    const [, payload, signature] = good.split('.');
    const relabelled = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`;
    expect((await rejection(auth.verify(relabelled))).code).toBe('invalid_token');
    const noTyp = `${b64({ alg: 'HS256' })}.${payload}.${signature}`;
    expect((await rejection(auth.verify(noTyp))).code).toBe('invalid_token');
  });
});

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

describe('decodePaddedJws (AWS ALB: base64url segments padded with =)', () => {
  const seg = (value: unknown) => paddedBase64url(Buffer.from(JSON.stringify(value)));
  const header = seg({ alg: 'ES256', kid: 'abc' }); // 27 bytes of JSON: 36 characters, no padding needed
  const payload = seg({ sub: 'a' }); // 11 bytes: 15 characters and one =
  const signature = paddedBase64url(Buffer.alloc(64, 1)); // 86 characters and ==

  it('reads segments with exactly the padding their length needs; signedEnd indexes the text as received', () => {
    expect(header).not.toContain('=');
    expect(payload).toMatch(/[^=]=$/);
    expect(signature).toMatch(/==$/);
    const token = `${header}.${payload}.${signature}`;
    expect(isPaddedJwsText(token)).toBe(true);
    expect(isJwsText(token)).toBe(false);
    const decoded = decodePaddedJws(token);
    expect(decoded).toMatchObject({ header: { alg: 'ES256', kid: 'abc' }, payload: { sub: 'a' } });
    expect(decoded.signedEnd).toBe(header.length + 1 + payload.length);
  });

  it.each([
    ['a payload without its padding', () => `${header}.${payload.replace(/=+$/, '')}.${signature}`, 'payload-encoding'],
    ['a payload with one = too many', () => `${header}.${payload}=.${signature}`, 'payload-encoding'],
    ['a signature with one = too few', () => `${header}.${payload}.${signature.slice(0, -1)}`, 'signature-encoding'],
    [
      'a signature without its padding',
      () => `${header}.${payload}.${signature.replace(/=+$/, '')}`,
      'signature-encoding',
    ],
    ['three = after one character', () => `${header}.${payload}.${signature.slice(0, -3)}A===`, 'signature-encoding'],
    ['four = after a whole segment', () => `${header}====.${payload}.${signature}`, 'header-encoding'],
    [
      'an = inside a segment',
      () => `${header.slice(0, 4)}=${header.slice(5)}.${payload}.${signature}`,
      'header-encoding',
    ],
    [
      'unused bits set before the padding',
      () => `${header}.${payload.slice(0, -2)}B=.${signature}`,
      'payload-encoding',
    ],
    ['two segments', () => `${header}.${payload}`, 'segments'],
    ['an empty signature', () => `${header}.${payload}.`, 'signature-missing'],
  ])('refuses %s', (_what, make, reason) => {
    let refused: unknown;
    try {
      decodePaddedJws(make());
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(TokenAuthError);
    expect(refused).toMatchObject({ code: 'invalid_token', reason });
  });
});
