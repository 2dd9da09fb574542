// Compact JWS serialisation of a header and payload exactly as given, signed by the one sign (jose/signature.ts):
// for client assertions, DPoP proofs and tokens of the test issuer and the command; and key pairs per algorithm.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ALGORITHMS, MIN_RSA_BITS, type Algorithm } from './algorithms';
import { signJws } from './signature';

/** Algorithms `signToken` can produce. */
export type TestSigningAlgorithm = Algorithm;

const encodeJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A compact JWS (RFC 7515 §7.1) of `header` and `payload` serialised as given (members in their order, nothing
 * added), signed with `alg`, which need not be the header's own: tests make tokens whose header lies.
 */
export function signCompact(
  header: Record<string, unknown>,
  payload: unknown,
  key: string | Buffer | KeyObject,
  alg: Algorithm,
): string {
  const input = `${encodeJson(header)}.${encodeJson(payload)}`;
  return `${input}.${signJws(input, alg, key)}`;
}

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
  return signCompact({ alg, typ: 'JWT', ...header }, payload, key, alg);
}

/** A new key pair for an asymmetric `alg`: RSA of MIN_RSA_BITS, the EC curve bound to it, or Ed25519. */
export function generateSigningKeyPair(alg: Exclude<Algorithm, 'HS256' | 'HS384' | 'HS512'>): {
  privateKey: KeyObject;
  publicKey: KeyObject;
} {
  const spec = ALGORITHMS[alg];
  if (spec.namedCurve !== undefined) return generateKeyPairSync('ec', { namedCurve: spec.namedCurve });
  if (spec.family === 'eddsa') return generateKeyPairSync('ed25519');
  return generateKeyPairSync('rsa', { modulusLength: MIN_RSA_BITS });
}
