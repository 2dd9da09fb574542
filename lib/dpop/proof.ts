// One DPoP proof JWT checked against its request and token (RFC 9449 §4.3): header, key, thumbprint, signature,
// htm, htu, iat, ath.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { keyFitsAlgorithm, MIN_RSA_BITS } from '../jose/algorithms';
import { hasThumbprintMembers, jwkThumbprint, privateMemberOf, type Jwk } from '../jose/jwk';
import { isJwsText, jwsSignedEnd, normalizeTyp, readJsonSegment } from '../jose/jws';
import { verifyJws } from '../jose/signature';

/** What a checked proof tells the binding step. */
export interface CheckedProof {
  /** RFC 7638 thumbprint of the proof's `jwk` (base64url SHA-256). */
  jkt: string;
  jti: string;
  iat: number;
  /** The proof's `nonce` claim, unchecked (nonces are the caller's business). */
  nonce: unknown;
}

/** The request a proof must describe. */
export interface ProofContext {
  method: string;
  /** The request URI without query and fragment, already normalised (`normaliseUri`). */
  uri: string;
  /** The token's `cnf.jkt`: the proof's key must have this thumbprint (checked before the signature). */
  jkt: string;
  /** The access token sent with the proof, for `ath`. */
  token: string;
  now: number;
  /** How far `iat` may lie in the past. */
  iatWindow: number;
  /** How far `iat` may lie in the future (the token clock tolerance). */
  clockTolerance: number;
  algorithms: ReadonlySet<string>;
}

/** What the `jwk` of a proof header resolves to; cached per header text. */
interface ProofKey {
  alg: string;
  key: KeyObject;
  jkt: string;
}

/** Longest proof read: an RSA-4096 `jwk` makes a header of about 900 characters. */
const MAX_PROOF_LENGTH = 8192;
/**
 * RSA proof keys: the modulus MIN_RSA_BITS to 4096 bits, the public exponent at most 65537. Verifying costs with
 * both, and the key is the client's choice: a 16 384-bit modulus or a 3 064-bit exponent made one proof cost 12 to
 * 60 times an ES256 one.
 */
const RSA_MODULUS_BITS = { min: MIN_RSA_BITS, max: 4096 };
const RSA_MAX_EXPONENT = 65537;

/** A refused proof: 401 `invalid_dpop_proof`; `reason` is for logs only. */
export function invalidProof(reason: string): TokenAuthError {
  return new TokenAuthError('invalid_dpop_proof', { reason: `dpop:${reason}` });
}

/**
 * Proof headers seen recently, by their base64url text: one client signs every proof with one key, so its
 * header text repeats and the JSON parse, key import and thumbprint are done once (they cost more than the
 * signature check). Bounded; only headers that passed every header rule are kept.
 */
const knownHeaders = new LRUCache<string, ProofKey>({ max: 1000 });

/** A proof whose text is not a compact JWS: refused as `syntax`, whichever part of the form it breaks. */
const notCompact = () => invalidProof('syntax');

/** The bit length of a base64url big-endian unsigned integer (a JWK member), leading zero bytes ignored. */
function bitLength(member: string): number {
  const bytes = Buffer.from(member, 'base64url');
  let i = 0;
  while (i < bytes.length && bytes[i] === 0) i++;
  return i === bytes.length ? 0 : (bytes.length - i - 1) * 8 + (32 - Math.clz32(bytes[i]));
}

/** Whether an RSA `jwk` is inside the bounds, read from its members before any key is built from them. */
function rsaWithinBounds(jwk: Record<string, unknown>): boolean {
  const bits = bitLength(jwk.n as string);
  if (bits < RSA_MODULUS_BITS.min || bits > RSA_MODULUS_BITS.max) return false;
  if (bitLength(jwk.e as string) > 17) return false;
  const e = Number.parseInt(Buffer.from(jwk.e as string, 'base64url').toString('hex'), 16);
  return e >= 3 && e <= RSA_MAX_EXPONENT && e % 2 === 1;
}

/**
 * RFC 9449 §4.3 checks 3–6 on the header: `typ`, an asymmetric `alg`, a public `jwk` that fits it, whose
 * thumbprint is the token's `cnf.jkt` (checked before any key is built, so a key the token is not bound to costs
 * a hash, never a signature check). `fresh` is true when the header was not in the cache: the caller adds it once
 * the signature has verified, so unsigned junk cannot push the keys of real clients out.
 */
function readHeader(segment: string, algorithms: ReadonlySet<string>, boundTo: string): ProofKey & { fresh: boolean } {
  const known = knownHeaders.get(segment);
  if (known !== undefined) {
    if (!algorithms.has(known.alg)) throw invalidProof('alg');
    if (known.jkt !== boundTo) throw invalidProof('jkt');
    return { ...known, fresh: false };
  }
  const header = readJsonSegment(segment, 'header', invalidProof);
  if (typeof header.typ !== 'string' || normalizeTyp(header.typ) !== 'dpop+jwt') throw invalidProof('typ');
  const alg = header.alg;
  if (typeof alg !== 'string' || !algorithms.has(alg)) throw invalidProof('alg');
  if (header.crit !== undefined) throw invalidProof('crit');
  const jwk = header.jwk;
  if (!isObject(jwk)) throw invalidProof('jwk');
  if (privateMemberOf(jwk) !== undefined) throw invalidProof('jwk-private');
  if (!hasThumbprintMembers(jwk)) throw invalidProof('jwk');
  const jkt = jwkThumbprint(jwk);
  if (jkt !== boundTo) throw invalidProof('jkt');
  if (jwk.kty === 'RSA' && !rsaWithinBounds(jwk)) throw invalidProof('jwk-rsa-size');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: jwk as Jwk, format: 'jwk' });
  } catch {
    throw invalidProof('jwk');
  }
  // The algorithm table decides (no key confusion): the kind of key, its curve; RSA bounds were checked on the jwk.
  if (!keyFitsAlgorithm(key, alg)) throw invalidProof('jwk-alg');
  return { alg, key, jkt, fresh: true };
}

function signatureIsGood(proof: string, signedEnd: number, alg: string, key: KeyObject): boolean {
  try {
    return verifyJws(proof, signedEnd, alg, key);
  } catch {
    return false;
  }
}

/**
 * RFC 3986 §6 normalisation of an http(s) URI, for comparing `htu`: scheme and host lower-cased, the default
 * port dropped, dot segments removed, an empty path as `/` (all by the WHATWG parser), then percent-encodings
 * upper-cased and those of unreserved characters decoded. Returns the URI without query and fragment (RFC 9449
 * §4.3 (9): they are ignored); undefined when it is not an http(s) URI.
 */
export function normaliseUri(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  const path = url.pathname.replace(/%[0-9a-fA-F]{2}/g, (escape) => {
    const char = String.fromCharCode(parseInt(escape.slice(1), 16));
    return /[A-Za-z0-9\-._~]/.test(char) ? char : escape.toUpperCase();
  });
  return `${url.protocol}//${url.host}${path}`;
}

/** base64url(SHA-256(token)): the `ath` a proof must carry for this token. */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/**
 * RFC 9449 §4.3 checks 1–10 and 12 on one proof (single use and nonces are the caller's, as they need state).
 * Throws `invalid_dpop_proof` for the first failure; never caches anything about the proof itself.
 */
export function checkProof(proof: string, context: ProofContext): CheckedProof {
  if (proof.length > MAX_PROOF_LENGTH || !isJwsText(proof)) throw notCompact();
  const second = jwsSignedEnd(proof, notCompact);
  const first = proof.indexOf('.');
  const segment = proof.slice(0, first);
  const { alg, key, jkt, fresh } = readHeader(segment, context.algorithms, context.jkt);
  if (!signatureIsGood(proof, second, alg, key)) throw invalidProof('signature');
  // A flat copy of the segment: a slice would keep the whole proof alive in the cache.
  if (fresh) knownHeaders.set(Buffer.from(segment, 'latin1').toString('latin1'), { alg, key, jkt });

  const payload = readJsonSegment(proof.slice(first + 1, second), 'payload', invalidProof);
  const { jti, htm, htu, iat, ath } = payload;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) throw invalidProof('jti');
  if (htm !== context.method) throw invalidProof('htm');
  const target = typeof htu === 'string' ? normaliseUri(htu) : undefined;
  if (target === undefined || target !== context.uri) throw invalidProof('htu');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalidProof('iat');
  if (iat < context.now - context.iatWindow || iat > context.now + context.clockTolerance)
    throw invalidProof('iat-window');
  if (typeof ath !== 'string' || ath !== accessTokenHash(context.token)) throw invalidProof('ath');
  return { jkt, jti, iat, nonce: payload.nonce };
}
