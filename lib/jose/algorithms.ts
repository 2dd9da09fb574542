// The JWS algorithms as one table (RFC 7518 §3, RFC 8037, RFC 9864): for each, its key, curve, hash, padding,
// signature encoding and key-size bound; and which algorithms a key may verify. `none` is never one.
import type { KeyObject } from 'node:crypto';

/**
 * Every JWS algorithm this package verifies: the HS, RS, PS and ES families, and EdDSA (RFC 8037) with RFC 9864's
 * fully specified `Ed25519`. `none` is not one.
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

/** One of SUPPORTED_ALGORITHMS. */
export type Algorithm = (typeof SUPPORTED_ALGORITHMS)[number];

/** Shortest HMAC secret accepted (RFC 7518 §3.2: at least the hash size, 256 bits for HS256). */
export const MIN_SECRET_BYTES = 32;

/** Smallest RSA modulus accepted, in bits (RFC 7518 §3.3 and §3.5: 2048 or larger). */
export const MIN_RSA_BITS = 2048;

/** How an algorithm signs: HMAC, RSASSA-PKCS1-v1_5, RSASSA-PSS, ECDSA or EdDSA. */
export type AlgorithmFamily = 'hmac' | 'rsa' | 'rsa-pss' | 'ecdsa' | 'eddsa';

/** Everything about one algorithm, in one place: a new algorithm or bound is one row here. */
export interface AlgorithmSpec {
  readonly family: AlgorithmFamily;
  /** node:crypto's digest; null for EdDSA, which signs the message itself. */
  readonly hash: 'sha256' | 'sha384' | 'sha512' | null;
  /** The node:crypto key types that verify it: `secret`, or an `asymmetricKeyType`. */
  readonly keyTypes: readonly string[];
  /** Its JWK `kty` (RFC 7518 §6, RFC 8037 §2) and, for EC and OKP, the `crv` values that fit. */
  readonly kty: 'oct' | 'RSA' | 'EC' | 'OKP';
  readonly crv?: readonly string[];
  /** ECDSA: the one curve (OpenSSL's name, as KeyObject reports it) bound to the algorithm. */
  readonly namedCurve?: string;
  /** RSASSA-PSS: the salt length in bytes, the hash's size (RFC 7518 §3.5). */
  readonly saltLength?: number;
  /** ECDSA: the signature is R ‖ S of fixed length (RFC 7518 §3.4), never DER. */
  readonly dsaEncoding?: 'ieee-p1363';
  /** Smallest key, in bits: an HMAC secret's length, an RSA modulus. */
  readonly minKeyBits?: number;
}

const hmac = (bits: 256 | 384 | 512): AlgorithmSpec => ({
  family: 'hmac',
  hash: `sha${bits}`,
  keyTypes: ['secret'],
  kty: 'oct',
  minKeyBits: MIN_SECRET_BYTES * 8,
});
const rsa = (bits: 256 | 384 | 512): AlgorithmSpec => ({
  family: 'rsa',
  hash: `sha${bits}`,
  keyTypes: ['rsa'],
  kty: 'RSA',
  minKeyBits: MIN_RSA_BITS,
});
const pss = (bits: 256 | 384 | 512): AlgorithmSpec => ({
  family: 'rsa-pss',
  hash: `sha${bits}`,
  keyTypes: ['rsa', 'rsa-pss'],
  kty: 'RSA',
  saltLength: bits / 8,
  minKeyBits: MIN_RSA_BITS,
});
const ecdsa = (bits: 256 | 384 | 512, crv: string, namedCurve: string): AlgorithmSpec => ({
  family: 'ecdsa',
  hash: `sha${bits}`,
  keyTypes: ['ec'],
  kty: 'EC',
  crv: [crv],
  namedCurve,
  dsaEncoding: 'ieee-p1363',
});

/** The table. */
export const ALGORITHMS: Readonly<Record<Algorithm, AlgorithmSpec>> = {
  HS256: hmac(256),
  HS384: hmac(384),
  HS512: hmac(512),
  RS256: rsa(256),
  RS384: rsa(384),
  RS512: rsa(512),
  PS256: pss(256),
  PS384: pss(384),
  PS512: pss(512),
  ES256: ecdsa(256, 'P-256', 'prime256v1'),
  ES384: ecdsa(384, 'P-384', 'secp384r1'),
  ES512: ecdsa(512, 'P-521', 'secp521r1'),
  EdDSA: { family: 'eddsa', hash: null, keyTypes: ['ed25519', 'ed448'], kty: 'OKP', crv: ['Ed25519', 'Ed448'] },
  // RFC 9864: `Ed25519` names the Ed25519 case of `EdDSA` alone.
  Ed25519: { family: 'eddsa', hash: null, keyTypes: ['ed25519'], kty: 'OKP', crv: ['Ed25519'] },
};

const BY_NAME: ReadonlyMap<string, AlgorithmSpec> = new Map(Object.entries(ALGORITHMS));

/** The table's row for `alg`, or undefined for anything else (`none` included). */
export function algorithmSpec(alg: string): AlgorithmSpec | undefined {
  return BY_NAME.get(alg);
}

/** True for a name in SUPPORTED_ALGORITHMS. */
export function isSupportedAlgorithm(alg: unknown): alg is Algorithm {
  return typeof alg === 'string' && BY_NAME.has(alg);
}

/** The ES* algorithm bound to an EC curve (OpenSSL's name, `prime256v1`), if any. */
export function algorithmForCurve(namedCurve: string | undefined): Algorithm | undefined {
  return SUPPORTED_ALGORITHMS.find((alg) => ALGORITHMS[alg].namedCurve === namedCurve && namedCurve !== undefined);
}

/** The size a key is measured by in the table: an HMAC secret's bits, an RSA modulus; undefined for the others. */
function keyBits(key: KeyObject): number | undefined {
  if (key.type === 'secret') return (key.symmetricKeySize ?? 0) * 8;
  return key.asymmetricKeyDetails?.modulusLength;
}

/**
 * An RSA-PSS key carries its own parameters (RFC 4055 §3.1): a PS* algorithm fits it only when they name its hash
 * for both digests and allow its salt length. A key without them (any hash, any salt) fits no PS* algorithm, as
 * jsonwebtoken's rule had it: RFC 7518 §3.5 fixes each, and such a key verifies nothing here.
 */
function pssParametersFit(spec: AlgorithmSpec, key: KeyObject): boolean {
  if (key.asymmetricKeyType !== 'rsa-pss') return true;
  const details = key.asymmetricKeyDetails;
  if (details?.hashAlgorithm !== spec.hash || details.mgf1HashAlgorithm !== spec.hash) return false;
  return details.saltLength === undefined || details.saltLength <= (spec.saltLength ?? 0);
}

function fits(spec: AlgorithmSpec, key: KeyObject, type: string, bits: number | undefined): boolean {
  if (!spec.keyTypes.includes(type)) return false;
  if (spec.namedCurve !== undefined && key.asymmetricKeyDetails?.namedCurve !== spec.namedCurve) return false;
  if (!pssParametersFit(spec, key)) return false;
  return spec.minKeyBits === undefined || (bits ?? 0) >= spec.minKeyBits;
}

const fitCache = new WeakMap<KeyObject, readonly Algorithm[]>();

/**
 * The algorithms a key can verify, by the table: a secret of at least MIN_SECRET_BYTES only HS*, an RSA public
 * key of at least MIN_RSA_BITS RS* and PS*, an RSA-PSS key the PS* its parameters name (none without parameters),
 * an EC public key only the ES* of its curve, an Ed25519 key `EdDSA` and `Ed25519`, an Ed448 key `EdDSA` only; a
 * private key nothing. This is what makes key confusion impossible: the header's `alg` must be in this list for the
 * key that will check it.
 */
export function algorithmsForKey(key: KeyObject): readonly Algorithm[] {
  let fit = fitCache.get(key);
  if (fit !== undefined) return fit;
  if (key.type === 'private') fit = [];
  else {
    const type = key.type === 'secret' ? 'secret' : (key.asymmetricKeyType ?? '');
    const bits = keyBits(key);
    fit = SUPPORTED_ALGORITHMS.filter((alg) => fits(ALGORITHMS[alg], key, type, bits));
  }
  fitCache.set(key, fit);
  return fit;
}

/** The algorithm to accept by default for a key: HS256, RS256, PS256 (RSA-PSS), the ES* of the curve, or EdDSA. */
export function defaultAlgorithm(key: KeyObject): Algorithm | undefined {
  return algorithmsForKey(key)[0];
}

/** Whether `key` may verify a token signed with `alg`. */
export function keyFitsAlgorithm(key: KeyObject, alg: string): boolean {
  return (algorithmsForKey(key) as readonly string[]).includes(alg);
}
