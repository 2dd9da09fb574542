// Reading a compact JWS: the memo of the last flat JOSE header (a shortcut the hot path takes, measured in bench/)
// must never change an answer.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import {
  decodeJws,
  decodePaddedJws,
  HEADER_MEMO_LENGTH,
  HEADER_MEMO_SIZE,
  type JwsHeader,
  isJwsText,
  isPaddedJwsText,
  jwsSignedEnd,
  normalizeTyp,
  readJsonSegment,
  rememberedHeaders,
} from '../../lib/jose/jws';
import { paddedBase64url } from '../fixtures/edge-proxies';
import { AUDIENCE, b64, ISSUER, NOW, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';
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

describe('the bounded map of flat headers', () => {
  const claims = shapeB(NOW);

  it(`holds at most ${HEADER_MEMO_SIZE} headers under a flood of distinct ones, and still decodes each right`, () => {
    for (let i = 0; i < 200; i++) {
      const token = sign(claims, SECRET, 'HS256', { kid: `flood-${i}` });
      expect(decodeJws(token).header.kid).toBe(`flood-${i}`);
      expect(rememberedHeaders().count).toBeLessThanOrEqual(HEADER_MEMO_SIZE);
    }
    expect(rememberedHeaders().count).toBe(HEADER_MEMO_SIZE);
  });

  it(`keeps no header segment longer than ${HEADER_MEMO_LENGTH} characters`, () => {
    for (let i = 0; i < 2 * HEADER_MEMO_SIZE; i++) {
      const kid = `${i}`.padEnd(600, 'k');
      expect(decodeJws(sign(claims, SECRET, 'HS256', { kid })).header.kid).toBe(kid);
    }
    expect(rememberedHeaders().characters).toBeLessThanOrEqual(HEADER_MEMO_SIZE * HEADER_MEMO_LENGTH);
  });

  it('gives each caller its own copy when two headers alternate, so one change reaches no other token', async () => {
    const seen: JwsHeader[] = [];
    const resolver = (header: JwsHeader): KeyObject => {
      seen.push({ ...header });
      header.kid = 'changed';
      header.extra = 'added';
      return secretKey;
    };
    const auth = createTokenAuth({ ...base, key: resolver, algorithms: ['HS256'], cache: false });
    const kids = ['k1', 'k2', 'k1', 'k2', 'k1'];
    for (const kid of kids) await auth.verify(sign(claims, SECRET, 'HS256', { kid }));
    expect(seen).toEqual(kids.map((kid) => ({ alg: 'HS256', typ: 'JWT', kid })));
  });

  it('never shares a header holding objects, even when it alternates with a flat one', () => {
    const withList = sign(claims, SECRET, 'HS256', { x5c: ['a'] });
    const flat = sign(claims, SECRET, 'HS256', { kid: 'flat' });
    const first = decodeJws(withList).header;
    decodeJws(flat);
    const second = decodeJws(withList).header;
    expect(second).not.toBe(first);
    expect(second.x5c).not.toBe(first.x5c);
    (first.x5c as string[]).push('changed');
    expect(decodeJws(withList).header.x5c).toEqual(['a']);
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

describe('decodeJws: the alphabet, checked as each segment is decoded', () => {
  const claims = shapeB(NOW);
  const good = sign(claims);
  const [header, payload, signature] = good.split('.');
  // {"a":">>>","b":"???"} in base64url holds a - and a _, which Buffer's decoder also reads from + and /.
  const respellable = b64('{"a":">>>","b":"???"}');

  it('decodes a token of base64url characters and two dots', () => {
    expect(decodeJws(good).payload).toEqual(claims);
    expect(decodeJws(`${header}.${respellable}.${signature}`).payload).toEqual({ a: '>>>', b: '???' });
  });

  it.each([
    ['+ for - in the payload', () => `${header}.${respellable.replace('-', '+')}.${signature}`],
    ['/ for _ in the payload', () => `${header}.${respellable.replace('_', '/')}.${signature}`],
    [
      'a character Buffer skips, in the payload',
      () => `${header}.${payload.slice(0, 8)}~${payload.slice(8)}.${signature}`,
    ],
    ['padding after the payload', () => `${header}.${payload}==.${signature}`],
    ['a space in the header already seen', () => `${header.slice(0, 4)} ${header.slice(4)}.${payload}.${signature}`],
    ['a non-ASCII character in the signature', () => `${header}.${payload}.${signature}é`],
    ['= after the signature', () => `${header}.${payload}.${signature}=`],
  ])('refuses %s as syntax, whatever else is wrong with it', (_case, make) => {
    decodeJws(good); // the header memo now holds this header
    const bad = make();
    expect(isJwsText(bad)).toBe(false);
    expect(reasonOf(() => decodeJws(bad))).toBe('syntax');
  });

  it('refuses an RS256 signature respelt with + or /, which Buffer and node:crypto decode to the same bytes', () => {
    const { privateKey } = rsaKeys();
    const rs = sign(shapeB(NOW), privateKey, 'RS256');
    const sig = rs.slice(rs.lastIndexOf('.') + 1);
    const at = sig.search(/[-_]/); // one of 64 values twice, in 342 random characters: all but certain
    const respelt = `${rs.slice(0, rs.lastIndexOf('.') + 1)}${sig.slice(0, at)}${sig[at] === '-' ? '+' : '/'}${sig.slice(at + 1)}`;
    expect(Buffer.from(respelt.slice(respelt.lastIndexOf('.') + 1), 'base64url')).toEqual(
      Buffer.from(sig, 'base64url'),
    );
    expect(reasonOf(() => decodeJws(respelt))).toBe('syntax');
  });

  it('refuses a payload whose unused low bits are set (non-canonical) with payload-encoding', () => {
    const canonical = b64({ a: 1 }); // 'eyJhIjoxfQ': 10 characters, the last one's low four bits unused
    const changed = `${canonical.slice(0, -1)}R`; // 'Q' + 1: a low bit set, the same bytes to Buffer
    expect(Buffer.from(changed, 'base64url')).toEqual(Buffer.from(canonical, 'base64url'));
    expect(reasonOf(() => decodeJws(`${header}.${changed}.${signature}`))).toBe('payload-encoding');
  });
});

describe('decodeJws: segments decoded into one fixed buffer', () => {
  const [header, , signature] = sign({ a: 1 }).split('.');

  it('reads a payload longer than the buffer (a raised maxTokenLength) whole, and refuses it non-canonical', () => {
    const claims = { long: 'x'.repeat(20_000) }; // 26 700 characters of base64url, beyond the 12 288-byte buffer
    const long = b64(claims);
    expect(decodeJws(`${header}.${long}.${signature}`).payload).toEqual(claims);
    expect(decodeJws(`${header}.${long}.${signature}`).payloadLength).toBe(JSON.stringify(claims).length);
    // The last character one step on in the alphabet: an unused low bit set, the same bytes to Buffer.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelt = `${long.slice(0, -1)}${alphabet[alphabet.indexOf(long[long.length - 1]) + 1]}`;
    expect(Buffer.from(respelt, 'base64url')).toEqual(Buffer.from(long, 'base64url'));
    expect(reasonOf(() => decodeJws(`${header}.${respelt}.${signature}`))).toBe('payload-encoding');
  });

  it('reads each payload from its own bytes only: a short one after a long one, a long one at the bound', () => {
    const long = { long: 'y'.repeat(9_000) };
    expect(decodeJws(`${header}.${b64(long)}.${signature}`).payload).toEqual(long);
    expect(decodeJws(`${header}.${b64({ b: 2 })}.${signature}`).payload).toEqual({ b: 2 });
    const atBound = { z: 'z'.repeat(12_288 - 8) }; // {"z":"…"} is exactly 12 288 bytes: 16 384 characters
    expect(b64(atBound)).toHaveLength(16_384);
    expect(decodeJws(`${header}.${b64(atBound)}.${signature}`).payload).toEqual(atBound);
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

  it('reads the standard unpadded form as decodeJws does (the day the ALB drops the padding)', () => {
    const token = `${header}.${payload.replace(/=+$/, '')}.${signature.replace(/=+$/, '')}`;
    expect(token).not.toContain('=');
    const decoded = decodePaddedJws(token);
    expect(decoded).toMatchObject({ header: { alg: 'ES256', kid: 'abc' }, payload: { sub: 'a' } });
    expect(decoded).toEqual(decodeJws(token));
    // Still canonical base64url, segment by segment: no stray bits, no 4n+1 lengths.
    for (const bad of [
      `${header}.${payload.replace(/=+$/, '').slice(0, -1)}B.${signature.replace(/=+$/, '')}`,
      `${header}.${payload.replace(/=+$/, '')}.${signature.replace(/=+$/, '')}AAA`,
    ])
      expect(() => decodePaddedJws(bad)).toThrow(TokenAuthError);
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
