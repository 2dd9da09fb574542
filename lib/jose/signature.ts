// The one JWS sign and the one JWS verify (RFC 7515 §5) over the algorithm table: every signature the package makes
// or checks goes through them (tokens, DPoP proofs, introspection answers, client assertions, test issuer, command).
//
// Both call node:crypto directly, not jsonwebtoken's `jwa` (which the verifier reached through jsonwebtoken's
// private file layout, with `jwt.verify` as a fallback): chosen by measurement. The signature step alone, jwa → here
// (`node bench/signature-step.js dist <build of 400309e> 15`, CPU µs per token, 2026-11-26): HS256 3.10 → 2.69,
// RS256 23.37 → 21.79, PS256 25.17 → 23.76, ES256 66.34 → 65.87, EdDSA (node:crypto before too) 110.16 → 108.34.
// RS, PS and ES stream through `createVerify`: one `crypto.verify` call measured about 1 µs more; EdDSA has no
// digest to stream. The whole request path before and after: docs/benchmarks.md, "One JOSE core".
import {
  constants,
  createHmac,
  createPrivateKey,
  createVerify,
  KeyObject,
  sign as cryptoSign,
  timingSafeEqual,
  verify as cryptoVerify,
  type SigningOptions,
} from 'node:crypto';
import { algorithmSpec, keyFitsAlgorithm, type AlgorithmSpec } from './algorithms';

/** node:crypto's options for one algorithm: padding and salt length (PSS), R ‖ S encoding (ECDSA). */
function optionsOf(spec: AlgorithmSpec): SigningOptions | undefined {
  if (spec.saltLength !== undefined) return { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: spec.saltLength };
  if (spec.dsaEncoding !== undefined) return { dsaEncoding: spec.dsaEncoding };
  return undefined;
}

/** Room for an HMAC as base64url text: HS512's 86 characters, and more, so that longer text cannot fit exactly. */
const MAC_TEXT_BYTES = 128;
const expectedMac = Buffer.alloc(MAC_TEXT_BYTES);
const givenMac = Buffer.alloc(MAC_TEXT_BYTES);

/**
 * Whether a token's signature text is the expected HMAC text, compared in constant time (`timingSafeEqual` over
 * the whole of two fixed buffers, so the time depends on neither value). Fixed buffers instead of two Buffers per
 * token (which cost about 0.2 µs), zeroed after each use so that no signature outlives its request. The signature
 * is written as UTF-8: a character outside ASCII takes more bytes than characters, and is refused by the count.
 */
function sameMacText(expected: string, given: string): boolean {
  if (given.length !== expected.length || expected.length >= MAC_TEXT_BYTES) return false;
  expectedMac.write(expected, 0, 'latin1');
  const written = givenMac.write(given, 0, 'utf8');
  const same = written === given.length && timingSafeEqual(expectedMac, givenMac);
  expectedMac.fill(0);
  givenMac.fill(0);
  return same;
}

/**
 * Whether `jws.slice(signedEnd + 1)` (base64url, as the compact-JWS reader checked it) is `alg`'s signature of
 * `jws.slice(0, signedEnd)` by `key`. False for an algorithm outside the table (`none`), a key that does not fit
 * it (type, curve, size, an RSA-PSS key's parameters: no key confusion), or a bad or malformed signature. An HMAC is compared in constant time. Text becomes bytes as UTF-8, never Latin-1,
 * which would read two different strings as the same bytes.
 */
export function verifyJws(jws: string, signedEnd: number, alg: string, key: KeyObject): boolean {
  const spec = algorithmSpec(alg);
  if (spec === undefined || !keyFitsAlgorithm(key, alg)) return false;
  const signature = jws.slice(signedEnd + 1);
  if (spec.hash !== null && spec.family === 'hmac') {
    // As base64url text: the reader refused non-canonical encodings, so equal text is equal bytes.
    return sameMacText(createHmac(spec.hash, key).update(jws.slice(0, signedEnd)).digest('base64url'), signature);
  }
  if (spec.hash === null)
    return cryptoVerify(null, Buffer.from(jws.slice(0, signedEnd)), key, Buffer.from(signature, 'base64url'));
  const options = optionsOf(spec);
  try {
    return createVerify(spec.hash)
      .update(jws.slice(0, signedEnd))
      .verify(options === undefined ? key : { key, ...options }, signature, 'base64url');
  } catch {
    return false; // an R ‖ S of the wrong length (a DER signature, another curve's): "Malformed signature"
  }
}

/**
 * `alg`'s signature of `signingInput` by `key`, base64url: a secret (string, Buffer or KeyObject) for HS*, a private
 * key (KeyObject or PEM) for the others. No key size or curve is checked: set-up checks a real signing key (client
 * assertions, the command), and tests sign with weak or mismatched keys on purpose. Throws for an algorithm
 * outside the table.
 */
export function signJws(signingInput: string, alg: string, key: KeyObject | string | Buffer): string {
  const spec = algorithmSpec(alg);
  if (spec === undefined) throw new TypeError(`no signature algorithm ${JSON.stringify(alg)}`);
  if (spec.hash !== null && spec.family === 'hmac')
    return createHmac(spec.hash, key).update(signingInput).digest('base64url');
  const privateKey = key instanceof KeyObject ? key : createPrivateKey(key);
  const options = optionsOf(spec);
  const input = Buffer.from(signingInput);
  return cryptoSign(spec.hash, input, options === undefined ? privateKey : { key: privateKey, ...options }).toString(
    'base64url',
  );
}
