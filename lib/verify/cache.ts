// The verdict cache: verdicts keyed by the token's SHA-256, bounded in entries and bytes, successes until min(ttl,
// exp) while their key is held, faults for errorTtl in a space of their own, outages never; in-flight sharing.
import * as crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { fingerprint, Sightings } from './admission';
import type { VerifiedClaims } from '../token/claims';
import type { TokenAuthError } from '../base/errors';
import type { JwsHeader } from '../jose/jws';
import { ALWAYS_HELD, type KeyHandle } from '../keys/source';
import type { TokenTimes } from '../token/registered';
import { deepFreeze } from './frozen';

/** What verification concluded about one token: its claims (with their time facts), or a token fault. */
export type Verdict =
  | { ok: true; claims: VerifiedClaims; times: TokenTimes; size: number; header?: JwsHeader; held?: KeyHandle }
  | { ok: false; error: TokenAuthError; times: TokenTimes | undefined };

/** A settled verdict that several requests will receive, its claims deep-frozen (verify/frozen.ts). */
function freezeShared(verdict: Verdict): Verdict {
  if (verdict.ok) deepFreeze(verdict.claims);
  return verdict;
}

/** Counters of the result cache. */
export interface CacheStats {
  hits: number;
  misses: number;
  /** Entries held now. */
  size: number;
  /** Entries pushed out by the entry or byte bound. */
  evictions: number;
  /** Verifications under way that concurrent requests for the same token are waiting on. */
  inflight: number;
}

/** Bounds and lifetimes, durations in seconds. */
export interface ResultCacheConfig {
  max: number;
  maxBytes: number;
  ttl: number;
  errorTtl: number;
}

interface Entry {
  verdict: Verdict;
  /** Clock time (seconds) after which the entry is dead. */
  until: number;
  /** The key that verified it; the entry is dead once that key is withdrawn. */
  held: KeyHandle;
}

/** Fixed cost per entry (entry object, LRU slots, verdict), added to the token and claims text sizes. */
const ENTRY_OVERHEAD = 256;
/**
 * What a remembered fault holds beyond that: its TokenAuthError with the stack V8 captured, facts and headers.
 * Measured: 1 966 bytes of heap per fault entry for 848-character tokens, which token + 256 counted as 1 104.
 */
const FAULT_OVERHEAD = 1024;

/**
 * SHA-256 of a token as a 32-character binary string: the cache key (the design allows the whole token or its
 * SHA-256). Cheaper than the token itself: V8 hashes an 850-character key one character at a time on every
 * lookup (1.3 µs), the digest costs 0.8 µs and leaves a 32-character key to hash, and an entry holds 32 characters
 * instead of the token. `crypto.hash` (Node 20.12+) skips the Hash object of `createHash`.
 */
const sha256: (token: string) => string =
  typeof crypto.hash === 'function'
    ? (token) => crypto.hash('sha256', token, 'binary')
    : (token) => crypto.createHash('sha256').update(token).digest('binary');

/**
 * The moment a verdict stops being the right answer for its token: a success dies at `exp`; a fault that is not
 * "expired" dies at `exp` too (after that the answer would be "expired"); and while the token is not yet valid
 * (`nbf`/`iat` ahead beyond tolerance), no verdict outlives the moment it becomes valid.
 */
function verdictLimit(verdict: Verdict, now: number, tolerance: number): number {
  const times = verdict.times;
  if (times === undefined) return Infinity;
  let limit = !verdict.ok && verdict.error.code === 'token_expired' ? Infinity : times.exp;
  const validFrom = Math.max(times.nbf ?? -Infinity, times.iat ?? -Infinity) - tolerance;
  if (validFrom > now) limit = Math.min(limit, validFrom);
  return limit;
}

/**
 * Share of `cache.max` and `cache.maxBytes` that token faults get, in an LRU of their own beside the successes'
 * (which keep the whole of both bounds): faults enter on first sight, so a flood of distinct bad tokens costs its
 * sender nothing to send, and it must only ever push out other faults, never a user's cached success.
 */
export const FAULT_SHARE = 0.1;

/** The bounds of the faults' own LRU: a tenth of the successes', at least one entry. */
export function faultBounds(config: ResultCacheConfig): { max: number; maxBytes: number } {
  return {
    max: Math.max(1, Math.ceil(config.max * FAULT_SHARE)),
    maxBytes: Math.max(1, Math.ceil(config.maxBytes * FAULT_SHARE)),
  };
}

/**
 * The result cache (docs/caching.md): keyed by the token's SHA-256 (`keyOf`), bounded by entries and bytes, each entry
 * dead at min(ttl, the token's own time limits). Token faults are kept for `errorTtl` only, in their own bounded
 * LRU; callers decide what is a token fault. Concurrent misses share one verification.
 */
export class ResultCache {
  /** Successes: `cache.max` entries, `cache.maxBytes` bytes. */
  private readonly lru: LRUCache<string, Entry> | undefined;
  /** Token faults: their own share (`faultBounds`), so that no fault ever evicts a success. */
  private readonly faults: LRUCache<string, Entry> | undefined;
  private readonly faultMaxBytes: number = 0;
  private readonly pending = new Map<string, Promise<Verdict>>();
  /** Admission (lib/verify/admission.ts): a success is stored on its token's second sighting, a fault at once. */
  private readonly sightings: Sightings | undefined;
  /** Sightings of tokens whose first verdict was a fault: aged by faults only, so they never crowd out users. */
  private readonly faultSightings: Sightings | undefined;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  /**
   * `admission` false (a remote source: every cold verification is a network call anyway) stores and looks up
   * every token by its SHA-256, without the second-sighting rule, so that no fingerprint lost to a collision can
   * keep a cached verdict from being found (and the upstream from being asked again, maybe while it is down).
   */
  constructor(
    private readonly config: ResultCacheConfig | false,
    private readonly tolerance: number,
    admission = true,
  ) {
    if (config !== false) {
      const dispose = (_value: Entry, _key: string, reason: LRUCache.DisposeReason) => {
        if (reason === 'evict') this.evictions++;
      };
      this.lru = new LRUCache<string, Entry>({ max: config.max, maxSize: config.maxBytes, dispose });
      const share = faultBounds(config);
      this.faults = new LRUCache<string, Entry>({ max: share.max, maxSize: share.maxBytes, dispose });
      this.faultMaxBytes = share.maxBytes;
      if (admission) {
        this.sightings = new Sightings(config.max);
        this.faultSightings = new Sightings(share.max);
      }
    }
  }

  /**
   * The key of a token for get, set, inflight and share: its SHA-256, computed once per request by the caller.
   * With the cache off, only in-flight sharing uses keys, so the token itself serves.
   */
  keyOf(token: string): string {
    return this.lru === undefined ? token : sha256(token);
  }

  /**
   * The key to look a token up under, or undefined on its first sighting: nothing but a fault can be stored for
   * it yet, so neither its SHA-256 nor a lookup is spent (a miss is counted). A fault is then stored under
   * `keyOf`, a success is not (`admits`); either way `sighted` records it. A token whose first verification is
   * still under way gets its key, to share it. With the cache off, the token itself (for in-flight sharing only).
   */
  lookupKey(token: string): string | undefined {
    if (this.sightings === undefined || this.faultSightings === undefined)
      return this.lru === undefined ? token : sha256(token);
    const print = fingerprint(token);
    if (this.sightings.seen(print) || this.faultSightings.seen(print)) return sha256(token);
    // Recorded only once its verdict is known: while verifications are under way, one may be this very token's.
    if (this.pending.size !== 0) {
      const key = sha256(token);
      if (this.pending.has(key)) return key;
    }
    this.misses++;
    return undefined;
  }

  /**
   * Record a token's first sighting once its verdict is known, in the table of its kind (success or fault). The
   * fingerprint is taken again (16 characters) rather than remembered with its token from `lookupKey`: a first
   * sighting refused before its verdict (a syntax fault, a precheck) would have left that token in the heap.
   */
  sighted(token: string, verdict: Verdict): void {
    (verdict.ok ? this.sightings : this.faultSightings)?.record(fingerprint(token));
  }

  /** Whether a verdict reached on a token's first sighting (no lookup key) may be stored: faults only. */
  admits(verdict: Verdict, key: string | undefined): boolean {
    return key !== undefined || !verdict.ok;
  }

  /** A live verdict for this key, or undefined (a dead entry is dropped). */
  get(key: string, now: number): Verdict | undefined {
    if (this.lru === undefined || this.faults === undefined) return undefined;
    // Successes first: a hit for a user costs one lookup; only a miss there asks the faults.
    let held = this.lru;
    let entry = held.get(key);
    if (entry === undefined) {
      held = this.faults;
      entry = held.get(key);
    }
    if (entry !== undefined) {
      if (now < entry.until && !entry.held.withdrawn) {
        this.hits++;
        return entry.verdict;
      }
      held.delete(key);
    }
    this.misses++;
    return undefined;
  }

  /**
   * Remember a verdict for a token under its key; `cacheable` false (a key-fetch or internal failure) keeps it
   * out. The entry's size counts the token's length, as if the token itself were held.
   */
  set(key: string, tokenLength: number, verdict: Verdict, now: number, cacheable: boolean): void {
    if (this.lru === undefined || this.faults === undefined || this.config === false || !cacheable) return;
    const ttl = verdict.ok ? this.config.ttl : this.config.errorTtl;
    const until = Math.min(now + ttl, verdictLimit(verdict, now, this.tolerance));
    if (!(until > now)) return;
    if (verdict.ok) {
      const size = tokenLength + ENTRY_OVERHEAD + verdict.size;
      if (size > this.config.maxBytes) return;
      // From here on every request with this token shares these claims: frozen, so none can change what the next reads.
      deepFreeze(verdict.claims);
      this.lru.set(key, { verdict, until, held: verdict.held ?? ALWAYS_HELD }, { size });
      return;
    }
    const size = tokenLength + ENTRY_OVERHEAD + FAULT_OVERHEAD;
    if (size <= this.faultMaxBytes) this.faults.set(key, { verdict, until, held: ALWAYS_HELD }, { size });
  }

  /** The verification under way for this key, if any. */
  inflight(key: string): Promise<Verdict> | undefined {
    // Usually nothing is under way (static keys verify synchronously): then no lookup, which would hash the key.
    return this.pending.size === 0 ? undefined : this.pending.get(key);
  }

  /** Register a verification under way so that concurrent misses wait on it; removed when it settles. */
  share(key: string, work: Promise<Verdict>): Promise<Verdict> {
    // Every request waiting on it receives the same claims: frozen before any of them does.
    const shared = work.then(freezeShared).finally(() => this.pending.delete(key));
    this.pending.set(key, shared);
    return shared;
  }

  stats(): CacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      size: (this.lru?.size ?? 0) + (this.faults?.size ?? 0),
      evictions: this.evictions,
      inflight: this.pending.size,
    };
  }

  clear(): void {
    this.lru?.clear();
    this.faults?.clear();
  }
}
