/**
 * Single use of DPoP proofs (RFC 9449 §11.1): the seam between the proof checks and whatever remembers the
 * proofs already seen. The in-process store lives here; a fleet passes a shared one (`express-verified-user/redis`).
 */

/**
 * Remembers proof identifiers until they expire. `claimOnce(id, expiresAt)` records `id` until `expiresAt`
 * (seconds since the epoch) and answers true the first time it sees `id`, false every later time before then.
 * `id` is already namespaced and bounded by the caller (a base64url SHA-256 of the key thumbprint and the proof's
 * `jti`, 43 characters), so a store needs no escaping or length checks of its own. A store that cannot promise
 * single use right now (a shared store unreachable) throws or rejects: the request then answers 503.
 */
export interface ReplayStore {
  claimOnce(id: string, expiresAt: number): boolean | Promise<boolean>;
}

/** Options of the in-process store. */
export interface MemoryReplayStoreOptions {
  /** Most proof ids remembered at once (default 100 000); a full store refuses (503) rather than forget. */
  max?: number;
  /** Current time in seconds (default: the system clock). */
  clock?: () => number;
}

/**
 * The in-process ReplayStore: a Map in insertion order whose entries die at their `expiresAt`. Expiry times
 * rise with insertion (each is a proof's `iat` plus one fixed window), so the expired ones sit at the front and
 * a sweep stops at the first live entry. When it is full of live entries it throws: forgetting one would let
 * that proof be replayed.
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): ReplayStore {
  const max = options.max ?? 100_000;
  const clock = options.clock ?? (() => Date.now() / 1000);
  const seen = new Map<string, number>();

  /** Drop expired entries: from the front until a live one, or (when full) all through. */
  function sweep(now: number, all: boolean): void {
    for (const [id, expiresAt] of seen) {
      if (expiresAt > now) {
        if (all) continue;
        break;
      }
      seen.delete(id);
    }
  }

  return {
    claimOnce(id, expiresAt) {
      const now = clock();
      const known = seen.get(id);
      if (known !== undefined && known > now) return false;
      if (seen.size >= max) sweep(now, true);
      else if (seen.size % 64 === 0) sweep(now, false);
      if (seen.size >= max) throw new Error('in-process replay store is full');
      seen.delete(id);
      seen.set(id, expiresAt);
      return true;
    },
  };
}
