import { generateKeyPairSync } from 'node:crypto';
import { hasThumbprintMembers, jwkThumbprint, keyThumbprint, privateMemberOf } from '../../lib/jose/jwk';

describe('jwkThumbprint (RFC 7638)', () => {
  // RFC 7638 §3.1: the published example key and its SHA-256 thumbprint.
  const example = {
    kty: 'RSA',
    n:
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3' +
      'oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgd' +
      'AZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur' +
      '-kEgU8awapJzKnqDKgw',
    e: 'AQAB',
    alg: 'RS256',
    kid: '2011-04-29',
  };

  it("gives RFC 7638 §3.1's published thumbprint for its example key", () => {
    expect(jwkThumbprint(example)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('reads only the required members, whatever their order and whatever else the JWK holds', () => {
    const { e, n, kty } = example;
    expect(jwkThumbprint({ n, e, kty, use: 'sig', x5c: ['AAAA'] })).toBe(jwkThumbprint(example));
  });

  it('gives the same thumbprint for a key, its private half, and its JWK (EC, RSA, Ed25519)', () => {
    for (const pair of [
      generateKeyPairSync('ec', { namedCurve: 'prime256v1' }),
      generateKeyPairSync('rsa', { modulusLength: 2048 }),
      generateKeyPairSync('ed25519'),
    ]) {
      const jwk = pair.publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
      expect(keyThumbprint(pair.publicKey)).toBe(jwkThumbprint(jwk));
      expect(keyThumbprint(pair.privateKey)).toBe(jwkThumbprint(jwk));
    }
  });
});

describe('hasThumbprintMembers', () => {
  it('wants a public key type and each of its required members as a string', () => {
    expect(hasThumbprintMembers({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b' })).toBe(true);
    expect(hasThumbprintMembers({ kty: 'EC', crv: 'P-256', x: 'a' })).toBe(false);
    expect(hasThumbprintMembers({ kty: 'RSA', n: 'a', e: 7 })).toBe(false);
    expect(hasThumbprintMembers({ kty: 'oct', k: 'a' })).toBe(false);
    // Names of Object.prototype's members are no key types.
    for (const kty of ['toString', 'constructor', '__proto__']) expect(hasThumbprintMembers({ kty })).toBe(false);
  });
});

describe('privateMemberOf', () => {
  it('names the first member that holds private or symmetric material', () => {
    expect(privateMemberOf({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b' })).toBeUndefined();
    expect(privateMemberOf({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' })).toBe('d');
    for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']) {
      expect(privateMemberOf({ kty: 'RSA', n: 'a', e: 'b', [member]: 'x' })).toBe(member);
    }
  });
});
