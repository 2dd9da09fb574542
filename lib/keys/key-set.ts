// A JWK Set as a key source holds it (fetched, or given inline as `key.jwks`): each JWK read and checked once,
// indexed by `kid`, carried over a refetch in linear time (keys still published keep their handles, dropped ones are
// withdrawn), and the choice of key (or keys) for a token, held to a key's own `issuer` when it names one.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import { MAX_SERVER_TEXT, quoted } from '../base/printable';
import { isObject } from '../base/values';
import type { Jwk } from '../jose/jwk';
import { privateMemberOf } from '../jose/jwk';
import type { JwsHeader } from '../jose/jws';
import {
  ALGORITHMS,
  algorithmsForKey,
  isSupportedAlgorithm,
  keyFitsAlgorithm,
  type Algorithm,
} from '../jose/algorithms';
import { keyIssuerRule, type KeyIssuerRule, type ServedIssuers } from '../token/issuer';
import { holdKey, type KeyCandidates, type KeyChoice } from './source';

/** One usable verification key from a JWK Set. */
export interface JwksKey {
  kid: string | undefined;
  /** The JWK's own `alg`, when it names one: the key then verifies that algorithm only. */
  alg: Algorithm | undefined;
  key: KeyObject;
  /**
   * The JWK's `issuer` member, when it has one (Entra ID's keys: docs/enterprise.md), and its rule: the key verifies
   * only tokens whose `iss` is that issuer, `{tenantid}` filled in from the token's `tid`, or whose tenant's issuer
   * it is among those the set serves (token/issuer.ts).
   */
  issuer: string | undefined;
  fitsIssuer: KeyIssuerRule | undefined;
  /**
   * What makes two entries the same key across refetches: `kid`, `alg`, `issuer` and the public members of the JWK
   * as published (a key republished with other spelling counts as new: its results are verified once more).
   */
  identity: string;
  /** Set when a refetch no longer lists this key: results it verified leave the cache (see KeyHandle). */
  withdrawn: boolean;
}

/** Why a JWK is not a usable verification key; `otherUse` when it says so itself (`use`, `key_ops`). */
export interface JwkFault {
  why: string;
  otherUse?: true;
}

/**
 * One JWK as a usable verification key, or why not: not RSA, EC or OKP (Ed25519, Ed448), `use` other than `sig`,
 * `key_ops` without `verify`, private or symmetric material, an `alg` that is not an asymmetric algorithm of ours or
 * does not fit the key, an `issuer` that is not a non-empty string, RSA under 2048 bits, a curve we do not verify,
 * or anything unparseable. Only the public parameters go to OpenSSL: nothing else in the JWK (x5c, x5u, …) is read.
 */
export function readJwkOrFault(jwk: unknown): JwksKey | JwkFault {
  if (!isObject(jwk)) return { why: 'not a JSON object' };
  const secret = privateMemberOf(jwk);
  if (secret !== undefined) return { why: `it holds private or symmetric material ("${secret}")` };
  if (jwk.use !== undefined && jwk.use !== 'sig') return { why: 'its "use" is not "sig"', otherUse: true };
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify')))
    return { why: 'its "key_ops" lack "verify"', otherUse: true };
  if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP')
    return { why: 'its "kty" is not RSA, EC or OKP (a signature key)' };
  if (jwk.kid !== undefined && typeof jwk.kid !== 'string') return { why: 'its "kid" is not a string' };
  if (jwk.alg !== undefined && (!isSupportedAlgorithm(jwk.alg) || ALGORITHMS[jwk.alg].family === 'hmac'))
    return { why: 'its "alg" is not an asymmetric JWS algorithm this package verifies' };
  if (jwk.issuer !== undefined && (typeof jwk.issuer !== 'string' || jwk.issuer === ''))
    return { why: 'its "issuer" is not a non-empty string' };
  const material: Jwk =
    jwk.kty === 'RSA'
      ? { kty: 'RSA', n: jwk.n as string, e: jwk.e as string }
      : jwk.kty === 'EC'
        ? { kty: 'EC', crv: jwk.crv as string, x: jwk.x as string, y: jwk.y as string }
        : { kty: 'OKP', crv: jwk.crv as string, x: jwk.x as string };
  // OKP also names the X25519/X448 key-agreement curves, which never verify a signature.
  if (jwk.kty === 'OKP' && !ALGORITHMS.EdDSA.crv?.includes(jwk.crv as string))
    return { why: 'its "crv" is not Ed25519 or Ed448' };
  if (Object.values(material).some((value) => typeof value !== 'string' || value === ''))
    return { why: `a public member of a ${jwk.kty} key is missing or empty` };
  let key: KeyObject;
  try {
    key = createPublicKey({ key: material, format: 'jwk' });
  } catch {
    return { why: 'its public members do not make a key' };
  }
  // The table's bounds: RSA under MIN_RSA_BITS, or a curve no algorithm is bound to, verifies nothing.
  if (algorithmsForKey(key).length === 0)
    return { why: 'it verifies no algorithm (RSA under 2048 bits, or a curve not verified here)' };
  const alg = jwk.alg as Algorithm | undefined;
  if (alg !== undefined && !keyFitsAlgorithm(key, alg)) return { why: `its "alg" ${alg} does not fit the key` };
  const kid = jwk.kid as string | undefined;
  const issuer = jwk.issuer as string | undefined;
  const identity = JSON.stringify([kid, alg, material, issuer]);
  const fitsIssuer = issuer === undefined ? undefined : keyIssuerRule(issuer);
  return { kid, alg, key, issuer, fitsIssuer, identity, withdrawn: false };
}

/**
 * One JWK as a usable verification key, or undefined when it must be skipped (readJwkOrFault says why). Skipping
 * (rather than failing the whole set) keeps one odd key of a fetched set from taking every other key down with it.
 */
export function readJwk(jwk: unknown): JwksKey | undefined {
  const read = readJwkOrFault(jwk);
  return 'key' in read ? read : undefined;
}

/**
 * Most keys that share one `kid` and fit a token's `alg` that are tried on it, in the set's order. An issuer may
 * publish a `kid` twice (a rotation that reuses names); trying each costs one signature check more per key, so a
 * hostile set cannot multiply a forged token's cost beyond this.
 */
export const MAX_KID_CANDIDATES = 3;

/** A token without `kid`: the one key of the set that fits its `alg`, `known` (several), `unknown` (none). */
type KidlessChoice = JwksKey | 'known' | 'unknown';

/** A key set, indexed by `kid` for the per-token lookup. */
export interface KeySet {
  all: readonly JwksKey[];
  byKid: ReadonlyMap<string, readonly JwksKey[]>;
  /** Clock time at which it was fetched. */
  fetchedAt: number;
  /** A token without `kid`: the answer per `alg`, worked out once per set (the set never changes). */
  kidless: Map<string, KidlessChoice>;
}

/** Index a key set by `kid`. */
export function indexKeys(keys: readonly JwksKey[], fetchedAt: number): KeySet {
  const byKid = new Map<string, JwksKey[]>();
  for (const entry of keys) {
    if (entry.kid === undefined) continue;
    const same = byKid.get(entry.kid);
    if (same === undefined) byKid.set(entry.kid, [entry]);
    else same.push(entry);
  }
  return { all: keys, byKid, fetchedAt, kidless: new Map() };
}

/**
 * The new key set, keeping the entries (and so the handles) of keys that are still published, and marking every
 * key the issuer dropped as withdrawn. Linear in the size of both sets: old entries are found by their identity
 * in a map, never by comparing each new key with each old one (8 000 keys without `kid` took 28 s that way).
 */
export function carryOver(previous: KeySet | undefined, fetched: readonly JwksKey[]): JwksKey[] {
  const byIdentity = new Map<string, JwksKey>();
  if (previous !== undefined) {
    for (const old of previous.all) {
      if (!byIdentity.has(old.identity)) byIdentity.set(old.identity, old);
    }
  }
  const kept = byIdentity.size === 0 ? [...fetched] : fetched.map((entry) => byIdentity.get(entry.identity) ?? entry);
  if (previous !== undefined) {
    const still = new Set(kept);
    for (const old of previous.all) if (!still.has(old)) old.withdrawn = true;
  }
  for (const entry of kept) holdKey(entry.key, entry);
  return kept;
}

function fits(entry: JwksKey, alg: string): boolean {
  return (entry.alg === undefined || entry.alg === alg) && keyFitsAlgorithm(entry.key, alg);
}

function fitsToken(
  entry: JwksKey,
  payload: Readonly<Record<string, unknown>>,
  served: ServedIssuers | undefined,
): boolean {
  return entry.fitsIssuer === undefined || entry.fitsIssuer(payload, served);
}

/** A key bound to another issuer than the token's: 401, the key's issuer named (remote text, quoted and cut). */
function otherIssuer(entry: JwksKey): TokenAuthError {
  const hint =
    `the key this token names is bound to issuer ${quoted(String(entry.issuer), MAX_SERVER_TEXT)} (its JWK "issuer" member, {tenantid} ` +
    "filled in from the token's tid): the token's iss is another, and that issuer is not one this API accepts for " +
    "the tenant the token's tid and iss name (a v1.0 token signed with a v2.0 key passes when the v2.0 issuer is " +
    'accepted too), so this key never verifies it';
  return new TokenAuthError('invalid_token', { reason: 'iss-key', hint });
}

/**
 * The key (or up to MAX_KID_CANDIDATES keys, when the set names the `kid` more than once) for a token; undefined
 * when the set does not know its `kid` (a refetch might). Throws `invalid_token` when the set has the answer and it
 * is no: `kid-no-fit` (the `kid`'s keys fit another `alg`), `kid-ambiguous` (no `kid`, several keys fit), `iss-key`
 * (the key is bound to another issuer than the token's `iss`, and not to the one of its tenant among `served`, the
 * issuers the set serves).
 */
export function keyFromSet(
  set: KeySet,
  header: JwsHeader,
  payload: Readonly<Record<string, unknown>>,
  served?: ServedIssuers,
): KeyChoice | undefined {
  if (header.kid === undefined) return kidlessKey(set, header, payload, served);
  const named = set.byKid.get(header.kid);
  if (named === undefined) return undefined;
  if (named.length === 1) {
    const entry = named[0];
    if (!fits(entry, header.alg)) throw noFit(header);
    if (!fitsToken(entry, payload, served)) throw otherIssuer(entry);
    return entry.key;
  }
  const candidates: KeyObject[] = [];
  let bound: JwksKey | undefined;
  for (const entry of named) {
    if (!fits(entry, header.alg)) continue;
    if (fitsToken(entry, payload, served)) candidates.push(entry.key);
    else bound ??= entry;
    if (candidates.length === MAX_KID_CANDIDATES) break;
  }
  if (candidates.length === 0) throw bound === undefined ? noFit(header) : otherIssuer(bound);
  return candidates.length === 1 ? candidates[0] : (candidates as KeyCandidates);
}

function noFit(header: JwsHeader): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason: header.kid === undefined ? 'kid-ambiguous' : 'kid-no-fit' });
}

/** No kid: only an unambiguous set may answer; trying each key in turn would multiply the cost of bad tokens. */
function kidlessKey(
  set: KeySet,
  header: JwsHeader,
  payload: Readonly<Record<string, unknown>>,
  served: ServedIssuers | undefined,
): KeyObject | undefined {
  let choice = set.kidless.get(header.alg);
  if (choice === undefined) {
    choice = kidlessChoice(set, header.alg);
    // `alg` is one of the source's algorithms (checked before keyFor), so this map holds a dozen entries at most.
    set.kidless.set(header.alg, choice);
  }
  if (choice === 'unknown') return undefined;
  if (choice === 'known') throw noFit(header);
  if (!fitsToken(choice, payload, served)) throw otherIssuer(choice);
  return choice.key;
}

function kidlessChoice(set: KeySet, alg: string): KidlessChoice {
  let only: JwksKey | undefined;
  let count = 0;
  for (const entry of set.all) {
    if (fits(entry, alg)) {
      only = entry;
      count++;
    }
  }
  if (count === 1) return only as JwksKey;
  return count === 0 ? 'unknown' : 'known';
}
