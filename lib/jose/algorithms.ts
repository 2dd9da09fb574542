// The JWS algorithms the package verifies and which key types fit each; `none` is never one.
import type { KeyObject } from 'node:crypto';

/**
 * Every JWS algorithm this package verifies: jsonwebtoken's HS, RS, PS and ES families, and EdDSA (RFC 8037) with
 * RFC 9864's fully specified `Ed25519`, checked by node:crypto. `none` is not one.
 */
export const SUPPORTED_ALGORITHMS = [
  'HS256',
  'HS384',
  'HS512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

/** Edwards-curve algorithms, verified by node:crypto rather than jsonwebtoken (which does not know them). */
export const EDDSA_ALGORITHMS: ReadonlySet<string> = new Set(['EdDSA', 'Ed25519']);

/** One of SUPPORTED_ALGORITHMS. */
export type Algorithm = (typeof SUPPORTED_ALGORITHMS)[number];

const CURVE_ALGORITHM: Record<string, Algorithm> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** True for a name in SUPPORTED_ALGORITHMS. */
export function isSupportedAlgorithm(alg: unknown): alg is Algorithm {
  return typeof alg === 'string' && (SUPPORTED_ALGORITHMS as readonly string[]).includes(alg);
}

const fitCache = new WeakMap<KeyObject, readonly Algorithm[]>();

/**
 * The algorithms a key can verify: a secret only HS*, an RSA public key RS* and PS*, an RSA-PSS key PS*, an EC
 * public key only the ES* of its curve, an Ed25519 key `EdDSA` and `Ed25519`, an Ed448 key `EdDSA` only. This is what makes key confusion impossible: the header's `alg` must be
 * in this list for the key that will check it.
 */
export function algorithmsForKey(key: KeyObject): readonly Algorithm[] {
  let fit = fitCache.get(key);
  if (fit !== undefined) return fit;
  if (key.type === 'secret') fit = ['HS256', 'HS384', 'HS512'];
  else if (key.type !== 'public') fit = [];
  else if (key.asymmetricKeyType === 'rsa') fit = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
  else if (key.asymmetricKeyType === 'rsa-pss') fit = ['PS256', 'PS384', 'PS512'];
  else if (key.asymmetricKeyType === 'ec') {
    const alg = CURVE_ALGORITHM[key.asymmetricKeyDetails?.namedCurve ?? ''];
    fit = alg === undefined ? [] : [alg];
  } else if (key.asymmetricKeyType === 'ed25519') fit = ['EdDSA', 'Ed25519'];
  else if (key.asymmetricKeyType === 'ed448') fit = ['EdDSA'];
  else fit = [];
  fitCache.set(key, fit);
  return fit;
}

/** The algorithm to accept by default for a key: HS256, RS256, PS256 (RSA-PSS), the ES* of the curve, or EdDSA. */
export function defaultAlgorithm(key: KeyObject): Algorithm | undefined {
  const fit = algorithmsForKey(key);
  if (fit.length === 0) return undefined;
  return key.type === 'secret' ? 'HS256' : fit[0];
}

/** Whether `key` may verify a token signed with `alg`. */
export function keyFitsAlgorithm(key: KeyObject, alg: string): boolean {
  return (algorithmsForKey(key) as readonly string[]).includes(alg);
}

/** Minimum RSA modulus (bits); jsonwebtoken refuses smaller keys, so they are refused at set-up instead. */
export const MIN_RSA_BITS = 2048;
