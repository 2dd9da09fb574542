// A fetched JWKS as the JWKS source holds it: indexed by `kid`, carried over a refetch in linear time (keys still
// published keep their handles, dropped ones are withdrawn), and the choice of key (or keys) for a token header.
import type { KeyObject } from 'node:crypto';
import type { JwsHeader } from '../jose/jws';
import { keyFitsAlgorithm, type Algorithm } from '../jose/algorithms';
import { holdKey, type KeyCandidates } from './source';

/** One usable verification key from a JWKS. */
export interface JwksKey {
  kid: string | undefined;
  /** The JWK's own `alg`, when it names one: the key then verifies that algorithm only. */
  alg: Algorithm | undefined;
  key: KeyObject;
  /**
   * What makes two entries the same key across refetches: `kid`, `alg` and the public members of the JWK as
   * published (a key republished with other spelling counts as new: its results are verified once more).
   */
  identity: string;
  /** Set when a refetch no longer lists this key: results it verified leave the cache (see KeyHandle). */
  withdrawn: boolean;
}

/**
 * Most keys that share one `kid` and fit a token's `alg` that are tried on it, in the set's order. An issuer may
 * publish a `kid` twice (a rotation that reuses names); trying each costs one signature check more per key, so a
 * hostile set cannot multiply a forged token's cost beyond this.
 */
export const MAX_KID_CANDIDATES = 3;

/** What a key set says about a header: the key (or keys) to use, `known` (no key can), `unknown` (a refetch might). */
export type Choice = KeyObject | KeyCandidates | 'known' | 'unknown';

/** A fetched key set, indexed by `kid` for the per-token lookup. */
export interface KeySet {
  all: readonly JwksKey[];
  byKid: ReadonlyMap<string, readonly JwksKey[]>;
  /** Clock time at which it was fetched. */
  fetchedAt: number;
  /** A token without `kid`: the answer per `alg`, worked out once per set (the set never changes). */
  kidless: Map<string, Choice>;
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

/**
 * The key (or up to MAX_KID_CANDIDATES keys, when the set names the `kid` more than once) for a header; `known`
 * when the set has the answer and it is no (a refetch would not change it); `unknown` when a refetch might find it.
 */
export function select(set: KeySet, header: JwsHeader): Choice {
  if (header.kid !== undefined) {
    const named = set.byKid.get(header.kid);
    if (named === undefined) return 'unknown';
    if (named.length === 1) return fits(named[0], header.alg) ? named[0].key : 'known';
    const candidates: KeyObject[] = [];
    for (const entry of named) {
      if (fits(entry, header.alg)) candidates.push(entry.key);
      if (candidates.length === MAX_KID_CANDIDATES) break;
    }
    if (candidates.length === 0) return 'known';
    return candidates.length === 1 ? candidates[0] : candidates;
  }
  const memo = set.kidless.get(header.alg);
  if (memo !== undefined) return memo;
  const choice = kidlessChoice(set, header.alg);
  // `alg` is one of the source's algorithms (checked before keyFor), so this map holds a dozen entries at most.
  set.kidless.set(header.alg, choice);
  return choice;
}

/** No kid: only an unambiguous set may answer; trying each key in turn would multiply the cost of bad tokens. */
function kidlessChoice(set: KeySet, alg: string): Choice {
  let only: KeyObject | undefined;
  let count = 0;
  for (const entry of set.all) {
    if (fits(entry, alg)) {
      only = entry.key;
      count++;
    }
  }
  if (count === 1) return only as KeyObject;
  return count === 0 ? 'unknown' : 'known';
}
