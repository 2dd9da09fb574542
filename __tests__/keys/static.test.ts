// Keys the app holds (key.secret, key.publicKey as a PEM, JWK or KeyObject, a resolver): read and checked at
// createTokenAuth, the algorithm inferred from the key, EdDSA (RFC 8037, RFC 9864) among them.
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { AUDIENCE, ecKeys, ISSUER, NOW, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';
import { optionErrorOf } from '../fixtures/option-error';
import { rejection } from '../fixtures/rejection';

const ed25519 = generateKeyPairSync('ed25519');
const ed448 = generateKeyPairSync('ed448');
const rsa = rsaKeys();
const clock = () => NOW;

const opened: TokenAuth[] = [];
afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

function auth(options: Partial<TokenAuthOptions>): TokenAuth {
  const made = createTokenAuth({ issuer: ISSUER, audience: AUDIENCE, clock, ...options } as TokenAuthOptions);
  opened.push(made);
  return made;
}

const token = (key: KeyObject, alg: 'EdDSA' | 'Ed25519' | 'RS256', header: Record<string, unknown> = {}) =>
  sign(shapeB(NOW), key, alg, header);

describe('createTokenAuth option validation', () => {
  const base = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE } as TokenAuthOptions;
  const make = (changes: Record<string, unknown>) => () => createTokenAuth({ ...base, ...changes } as TokenAuthOptions);

  describe('public keys', () => {
    const ec = ecKeys('secp384r1');

    it('accepts a PEM, a JWK and a KeyObject, and infers the algorithm', () => {
      expect(make({ key: { publicKey: rsa.publicKey.export({ format: 'pem', type: 'spki' }) } })).not.toThrow();
      expect(make({ key: { publicKey: rsa.publicKey.export({ format: 'jwk' }) } })).not.toThrow();
      expect(make({ key: { publicKey: ec.publicKey } })).not.toThrow();
      expect(make({ key: { publicKey: ec.publicKey }, algorithms: ['ES384'] })).not.toThrow();
    });

    it.each([
      ['a private key PEM', () => rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }), /not a private one/],
      ['a private KeyObject', () => rsa.privateKey, /must be a public key/],
      ['a private JWK', () => rsa.privateKey.export({ format: 'jwk' }), /private parameter "d"/],
      ['a symmetric JWK', () => ({ kty: 'oct', k: 'AAAA' }), /symmetric JWK/],
      ['garbage text', () => 'not a key', /could not be read/],
      ['a 1024-bit RSA key', () => generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey, /at least 2048 bits/],
      [
        'an X25519 (key agreement) key',
        () => generateKeyPairSync('x25519').publicKey,
        /not an RSA, EC P-256\/P-384\/P-521, Ed25519 or Ed448/,
      ],
    ])('refuses %s', (_case, publicKey, message) => {
      expect(make({ key: { publicKey: publicKey() } })).toThrow(message);
    });

    it('refuses algorithms the key cannot verify', () => {
      expect(make({ key: { publicKey: rsa.publicKey }, algorithms: ['HS256'] })).toThrow(/cannot verify/);
      expect(make({ key: { publicKey: ec.publicKey }, algorithms: ['ES256'] })).toThrow(/cannot verify/);
      expect(make({ key: { publicKey: ec.publicKey }, algorithms: ['RS256'] })).toThrow(/cannot verify/);
    });
  });

  describe('RSA-PSS public keys (their parameters bind hash and salt)', () => {
    const open = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
    const pss384 = generateKeyPairSync('rsa-pss', {
      modulusLength: 2048,
      hashAlgorithm: 'sha384',
      mgf1HashAlgorithm: 'sha384',
      saltLength: 48 as unknown as string, // @types/node types it as a string
    });
    const pem = (key: KeyObject) => key.export({ format: 'pem', type: 'spki' }) as string;
    /** The RSAPublicKey (PKCS #1) inside an RSA-PSS key's SPKI: the same key, read as a plain RSA key. */
    const asPlainRsa = (key: KeyObject) => {
      const der = key.export({ format: 'der', type: 'spki' });
      const bits = der.indexOf(Buffer.from([0x03, 0x82]), 4); // the BIT STRING after the algorithm identifier
      return createPublicKey({ key: der.subarray(bits + 5), format: 'der', type: 'pkcs1' });
    };

    it.each([
      ['as a PEM', () => pem(open.publicKey)],
      ['as a KeyObject', () => open.publicKey],
    ])('refuses one without parameters %s at set-up, naming key.publicKey and the fix', (_form, publicKey) => {
      for (const algorithms of [undefined, ['PS256']]) {
        const err = optionErrorOf(make({ key: { publicKey: publicKey() }, algorithms }));
        expect(err.option).toBe('key.publicKey');
        expect(err.message).toMatch(/RSA-PSS key without parameters that fit PS256, PS384 or PS512/);
        expect(err.message).toMatch(/plain RSA key \(a JWK \{ kty: "RSA", n, e \}/);
      }
    });

    it('refuses algorithms its parameters rule out, naming algorithms and what the key is restricted to', () => {
      const err = optionErrorOf(make({ key: { publicKey: pem(pss384.publicKey) }, algorithms: ['PS256'] }));
      expect(err.option).toBe('algorithms');
      expect(err.message).toMatch(/names PS256, .* its RSA-PSS parameters restrict it to PS384/);
    });

    it('accepts one restricted to PS384 and verifies its tokens; the same key as plain RSA verifies PS256', async () => {
      const restricted = auth({ key: { publicKey: pem(pss384.publicKey) } });
      await expect(restricted.verify(sign(shapeB(NOW), pss384.privateKey, 'PS384'))).resolves.toMatchObject({
        iss: ISSUER,
      });
      const asRsa = auth({
        key: { publicKey: asPlainRsa(open.publicKey).export({ format: 'jwk' }) },
        algorithms: ['PS256'],
      });
      await expect(asRsa.verify(sign(shapeB(NOW), open.privateKey, 'PS256'))).resolves.toMatchObject({
        iss: ISSUER,
      });
    });
  });
});

describe('EdDSA keys in every form', () => {
  it.each([
    ['a KeyObject', () => ed25519.publicKey],
    ['an SPKI PEM', () => ed25519.publicKey.export({ type: 'spki', format: 'pem' }) as string],
    ['an OKP JWK', () => ed25519.publicKey.export({ format: 'jwk' })],
  ])('verifies EdDSA with an Ed25519 public key given as %s, EdDSA inferred', async (_form, publicKey) => {
    const verifier = auth({ key: { publicKey: publicKey() } as TokenAuthOptions['key'] });
    await expect(verifier.verify(token(ed25519.privateKey, 'EdDSA'))).resolves.toMatchObject({ iss: ISSUER });
  });

  it('verifies the fully specified Ed25519 algorithm when it is named', async () => {
    const verifier = auth({ key: { publicKey: ed25519.publicKey }, algorithms: ['Ed25519', 'EdDSA'] });
    await expect(verifier.verify(token(ed25519.privateKey, 'Ed25519'))).resolves.toMatchObject({ iss: ISSUER });
  });

  it('refuses Ed25519 when only EdDSA is accepted (the inferred default)', async () => {
    const verifier = auth({ key: { publicKey: ed25519.publicKey } });
    expect(await rejection(verifier.verify(token(ed25519.privateKey, 'Ed25519')))).toMatchObject({
      code: 'invalid_token',
      reason: 'alg',
    });
  });

  it('verifies EdDSA with an Ed448 key', async () => {
    const verifier = auth({ key: { publicKey: ed448.publicKey } });
    await expect(verifier.verify(sign(shapeB(NOW), ed448.privateKey, 'EdDSA'))).resolves.toMatchObject({ iss: ISSUER });
  });

  it('refuses the Ed25519 algorithm for an Ed448 key at set-up', () => {
    expect(() =>
      createTokenAuth({
        key: { publicKey: ed448.publicKey },
        algorithms: ['Ed25519'],
        issuer: ISSUER,
        audience: AUDIENCE,
      }),
    ).toThrow(/names Ed25519, which this public key cannot verify/);
  });

  it('refuses RS256 for an Ed25519 key, and EdDSA for an RSA key, at set-up', () => {
    expect(() =>
      createTokenAuth({
        key: { publicKey: ed25519.publicKey },
        algorithms: ['RS256'],
        issuer: ISSUER,
        audience: AUDIENCE,
      }),
    ).toThrow(TypeError);
    expect(() =>
      createTokenAuth({ key: { publicKey: rsa.publicKey }, algorithms: ['EdDSA'], issuer: ISSUER, audience: AUDIENCE }),
    ).toThrow(TypeError);
  });
});
