import { createSecretKey, generateKeyPairSync } from 'node:crypto';
import {
  ALGORITHMS,
  algorithmForCurve,
  algorithmSpec,
  algorithmsForKey,
  defaultAlgorithm,
  isSupportedAlgorithm,
  keyFitsAlgorithm,
  MIN_RSA_BITS,
  MIN_SECRET_BYTES,
  SUPPORTED_ALGORITHMS,
} from '../../lib/jose/algorithms';

describe('which algorithms a key may verify (no key confusion)', () => {
  const secret = createSecretKey(Buffer.alloc(32, 1));
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
  /** An RSA-PSS key restricted by its parameters (@types/node types saltLength as a string). */
  const restricted = (hash: string, mgf1: string, saltLength?: number) =>
    generateKeyPairSync('rsa-pss', {
      modulusLength: 2048,
      hashAlgorithm: hash,
      mgf1HashAlgorithm: mgf1,
      ...(saltLength === undefined ? {} : { saltLength: saltLength as unknown as string }),
    });
  const pss256 = restricted('sha256', 'sha256');
  const pss512 = restricted('sha512', 'sha512', 64);
  const pssSha256Mgf512 = restricted('sha256', 'sha512');
  const pssLongSalt = restricted('sha256', 'sha256', 33);
  const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
  const p521 = generateKeyPairSync('ec', { namedCurve: 'secp521r1' });
  const k256 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const ed = generateKeyPairSync('ed25519');
  const ed448 = generateKeyPairSync('ed448');
  const x25519 = generateKeyPairSync('x25519');

  it.each([
    ['an HMAC secret', secret, ['HS256', 'HS384', 'HS512'], 'HS256'],
    ['an RSA public key', rsa.publicKey, ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'], 'RS256'],
    ['an RSA-PSS public key restricted to SHA-256', pss256.publicKey, ['PS256'], 'PS256'],
    ['an RSA-PSS public key restricted to SHA-512, salt 64', pss512.publicKey, ['PS512'], 'PS512'],
    ['a P-256 public key', p256.publicKey, ['ES256'], 'ES256'],
    ['a P-384 public key', p384.publicKey, ['ES384'], 'ES384'],
    ['a P-521 public key', p521.publicKey, ['ES512'], 'ES512'],
    ['an Ed25519 public key', ed.publicKey, ['EdDSA', 'Ed25519'], 'EdDSA'],
    ['an Ed448 public key', ed448.publicKey, ['EdDSA'], 'EdDSA'],
  ])('%s verifies only its own family', (_case, key, family, inferred) => {
    expect(algorithmsForKey(key)).toEqual(family);
    expect(defaultAlgorithm(key)).toBe(inferred);
    for (const alg of [
      'HS256',
      'HS384',
      'HS512',
      'RS256',
      'PS256',
      'ES256',
      'ES384',
      'ES512',
      'EdDSA',
      'Ed25519',
      'none',
    ]) {
      expect(keyFitsAlgorithm(key, alg)).toBe(family.includes(alg));
    }
  });

  it.each([
    ['a private RSA key', rsa.privateKey],
    ['a private EC key', p256.privateKey],
    ['a secp256k1 key', k256.publicKey],
    ['a private Ed25519 key', ed.privateKey],
    ['an X25519 (key agreement) key', x25519.publicKey],
    ['an RSA-PSS key without parameters (any hash, any salt)', pss.publicKey],
    ['an RSA-PSS key whose MGF1 hash is not its hash', pssSha256Mgf512.publicKey],
    ['an RSA-PSS key asking a longer salt than PS256 uses', pssLongSalt.publicKey],
  ])('%s verifies nothing', (_case, key) => {
    expect(algorithmsForKey(key)).toEqual([]);
    expect(defaultAlgorithm(key)).toBeUndefined();
  });
});

describe('the algorithm table (lib/jose/algorithms.ts)', () => {
  it('has one row per supported algorithm, and none for `none`', () => {
    expect(Object.keys(ALGORITHMS).sort()).toEqual([...SUPPORTED_ALGORITHMS].sort());
    expect(algorithmSpec('none')).toBeUndefined();
    expect(isSupportedAlgorithm('none')).toBe(false);
  });

  it('binds each ES algorithm to its one curve, and a curve back to its algorithm', () => {
    expect([ALGORITHMS.ES256.crv, ALGORITHMS.ES384.crv, ALGORITHMS.ES512.crv]).toEqual([
      ['P-256'],
      ['P-384'],
      ['P-521'],
    ]);
    expect(['prime256v1', 'secp384r1', 'secp521r1', 'secp256k1'].map(algorithmForCurve)).toEqual([
      'ES256',
      'ES384',
      'ES512',
      undefined,
    ]);
  });

  it('sets the PS salt length to the hash size and signs ES as R ‖ S', () => {
    for (const bits of [256, 384, 512] as const) {
      expect(ALGORITHMS[`PS${bits}`].saltLength).toBe(bits / 8);
      expect(ALGORITHMS[`ES${bits}`].dsaEncoding).toBe('ieee-p1363');
    }
  });

  it('refuses keys under the bounds: RSA under 2048 bits, an HMAC secret under 32 bytes', () => {
    expect(MIN_RSA_BITS).toBe(2048);
    expect(MIN_SECRET_BYTES).toBe(32);
    expect(algorithmsForKey(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey)).toEqual([]);
    expect(algorithmsForKey(createSecretKey(Buffer.alloc(31, 1)))).toEqual([]);
    expect(defaultAlgorithm(createSecretKey(Buffer.alloc(31, 1)))).toBeUndefined();
  });
});
