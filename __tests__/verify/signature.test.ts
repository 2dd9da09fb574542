import { createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createSignatureCheck, type SignatureCheck } from '../../lib/verify/signature';
import { ecKeys, NOW, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';

const secret = createSecretKey(Buffer.from(SECRET));
const rsa = rsaKeys();
const ec = ecKeys();
const ed25519 = generateKeyPairSync('ed25519');
const otherEd = generateKeyPairSync('ed25519');
// An RSA-PSS key restricted to SHA-256 (its parameters are part of the key); @types/node types saltLength as a string.
const pss256 = generateKeyPairSync('rsa-pss', {
  modulusLength: 2048,
  hashAlgorithm: 'sha256',
  mgf1HashAlgorithm: 'sha256',
});

const cases: [alg: 'HS256' | 'RS256' | 'PS256' | 'ES256', signing: KeyObject | string, verifying: KeyObject][] = [
  ['HS256', SECRET, secret],
  ['RS256', rsa.privateKey, rsa.publicKey],
  ['PS256', rsa.privateKey, rsa.publicKey],
  ['ES256', ec.privateKey, ec.publicKey],
];

function flipLastSignatureChar(token: string): string {
  return `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.at(-1)}`;
}

function refuses(check: SignatureCheck, token: string, alg: string, key: KeyObject): boolean {
  try {
    return !check(token, token.lastIndexOf('.'), alg, key);
  } catch {
    return true;
  }
}

describe('createSignatureCheck', () => {
  const check = createSignatureCheck();

  it.each(cases)('accepts a good %s signature', (alg, signing, verifying) => {
    const token = sign(shapeB(), signing, alg);
    expect(check(token, token.lastIndexOf('.'), alg, verifying)).toBe(true);
  });

  it.each(cases)('refuses a %s token with one signature character changed', (alg, signing, verifying) => {
    expect(refuses(check, flipLastSignatureChar(sign(shapeB(), signing, alg)), alg, verifying)).toBe(true);
  });

  it.each(cases)('refuses a %s token with a changed payload', (alg, signing, verifying) => {
    const [header, , signature] = sign(shapeB(), signing, alg).split('.');
    const other = sign(shapeB(undefined, { scopes: ['admin'] }), signing, alg).split('.')[1];
    expect(refuses(check, `${header}.${other}.${signature}`, alg, verifying)).toBe(true);
  });

  it('refuses a signature from another key of the same kind', () => {
    expect(refuses(check, sign(shapeB(), rsaKeys().privateKey, 'RS256'), 'RS256', rsa.publicKey)).toBe(true);
    expect(refuses(check, sign(shapeB(), ecKeys().privateKey, 'ES256'), 'ES256', ec.publicKey)).toBe(true);
  });

  it('refuses an EC key of another curve, and an RSA-PSS key whose hash does not match alg', () => {
    const p384 = ecKeys('secp384r1');
    expect(refuses(check, sign(shapeB(), p384.privateKey, 'ES384'), 'ES256', p384.publicKey)).toBe(true);
    const token = sign(shapeB(), pss256.privateKey, 'PS256');
    expect(check(token, token.lastIndexOf('.'), 'PS256', pss256.publicKey)).toBe(true);
    expect(refuses(check, sign(shapeB(), pss256.privateKey, 'PS256'), 'PS512', pss256.publicKey)).toBe(true);
  });
});

describe('createSignatureCheck, whatever the header says', () => {
  it('never accepts alg "none", even with an empty signature', () => {
    const check = createSignatureCheck();
    const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{}').toString('base64url')}.`;
    expect(refuses(check, unsigned, 'none', secret)).toBe(true);
  });
});

describe('EdDSA signatures (RFC 8037, RFC 9864)', () => {
  const check = createSignatureCheck();
  const good = sign(shapeB(NOW), ed25519.privateKey, 'EdDSA');

  it('checks an Ed25519 signature with node:crypto', () => {
    expect(check(good, good.lastIndexOf('.'), 'EdDSA', ed25519.publicKey)).toBe(true);
  });

  it('refuses a signature of another Ed25519 key', () => {
    expect(check(good, good.lastIndexOf('.'), 'EdDSA', otherEd.publicKey)).toBe(false);
  });

  it('refuses a signature over a changed payload', () => {
    const [header, , signature] = good.split('.');
    const changed = `${header}.${Buffer.from(JSON.stringify(shapeB(NOW, { scopes: ['admin'] }))).toString('base64url')}.${signature}`;
    expect(check(changed, changed.lastIndexOf('.'), 'EdDSA', ed25519.publicKey)).toBe(false);
  });
});
