// Compact JWS signing, for tests and the command line only (the verifier never signs): the payload exactly as
// given, with every algorithm the package verifies.
import { constants, createHmac, createSecretKey, sign as cryptoSign, type KeyObject } from 'node:crypto';

/** Algorithms `signToken` can produce. */
export type TestSigningAlgorithm =
  | 'HS256'
  | 'HS384'
  | 'HS512'
  | 'RS256'
  | 'RS384'
  | 'RS512'
  | 'PS256'
  | 'PS384'
  | 'PS512'
  | 'ES256'
  | 'ES384'
  | 'ES512'
  | 'EdDSA'
  | 'Ed25519';

/**
 * Sign a payload as a compact JWS, exactly as given: no claim is added or removed (unlike `jsonwebtoken.sign`,
 * which adds or drops `iat`). The header is `{ alg, typ: 'JWT', ...header }`. For tests only.
 */
export function signToken(
  payload: unknown,
  key: string | Buffer | KeyObject,
  alg: TestSigningAlgorithm,
  header: Record<string, unknown> = {},
): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const input = `${encode({ alg, typ: 'JWT', ...header })}.${encode(payload)}`;
  const bits = `sha${alg.slice(2)}`;
  let signature: Buffer;
  if (alg === 'EdDSA' || alg === 'Ed25519') {
    // Edwards curves sign the message itself: no digest to name.
    signature = cryptoSign(null, Buffer.from(input), key as KeyObject);
  } else if (alg.startsWith('HS')) {
    signature = createHmac(
      bits,
      typeof key === 'string' || Buffer.isBuffer(key) ? createSecretKey(Buffer.from(key)) : key,
    )
      .update(input)
      .digest();
  } else {
    const padding = alg.startsWith('PS')
      ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 }
      : {};
    const dsaEncoding = alg.startsWith('ES') ? { dsaEncoding: 'ieee-p1363' as const } : {};
    signature = cryptoSign(bits, Buffer.from(input), { key: key as KeyObject, ...padding, ...dsaEncoding });
  }
  return `${input}.${signature.toString('base64url')}`;
}
