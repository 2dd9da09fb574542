import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { JWKS_DEFAULT_ALGORITHMS } from '../../lib/keys/jwks';
import { createSignatureCheck } from '../../lib/verify/signature';
import { createTestIssuer } from '../../lib/testing';
import { AUDIENCE, ISSUER, NOW, rsaKeys, shapeB, sign } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';

const ed25519 = generateKeyPairSync('ed25519');
const ed448 = generateKeyPairSync('ed448');
const otherEd = generateKeyPairSync('ed25519');
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

describe('EdDSA signatures (RFC 8037, RFC 9864)', () => {
  const check = createSignatureCheck();
  const good = token(ed25519.privateKey, 'EdDSA');

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

describe('key and algorithm fit at verification (resolver keys)', () => {
  it('never lets an Ed25519 key verify an RS256 token', async () => {
    const verifier = auth({ key: () => ed25519.publicKey, algorithms: ['RS256', 'EdDSA'] });
    expect(await rejection(verifier.verify(token(rsa.privateKey, 'RS256')))).toMatchObject({
      code: 'invalid_token',
      reason: 'key-mismatch',
    });
  });

  it('never lets an RSA key verify an EdDSA token', async () => {
    const verifier = auth({ key: () => rsa.publicKey, algorithms: ['RS256', 'EdDSA'] });
    expect(await rejection(verifier.verify(token(ed25519.privateKey, 'EdDSA')))).toMatchObject({
      code: 'invalid_token',
      reason: 'key-mismatch',
    });
  });

  it('never lets an Ed448 key verify an Ed25519 token', async () => {
    const verifier = auth({ key: () => ed448.publicKey, algorithms: ['Ed25519'] });
    expect(await rejection(verifier.verify(token(ed25519.privateKey, 'Ed25519')))).toMatchObject({
      code: 'invalid_token',
      reason: 'key-mismatch',
    });
  });
});

describe('EdDSA from a JWKS', () => {
  it('is in the default algorithms of a JWKS (and so of discovery)', () => {
    expect(JWKS_DEFAULT_ALGORITHMS).toEqual(expect.arrayContaining(['EdDSA', 'Ed25519']));
  });

  it('createTestIssuer signs EdDSA and serves its OKP key as a JWKS', async () => {
    const issuer = await createTestIssuer({ alg: 'EdDSA', jwks: true, issuer: ISSUER, audience: AUDIENCE, clock });
    try {
      const verifier = auth({ key: { jwksUri: issuer.jwksUri as string } });
      const signed = issuer.sign();
      expect(JSON.parse(Buffer.from(signed.split('.')[0], 'base64url').toString())).toMatchObject({
        alg: 'EdDSA',
        kid: issuer.kid,
      });
      await expect(verifier.verify(signed)).resolves.toMatchObject({ iss: ISSUER });
    } finally {
      await issuer.close();
    }
  });
});
