// Single use of DPoP proofs (RFC 9449 §11.1): the ReplayStore seam and the in-process store, bounded in all and
// per proof key; a fleet passes a shared store instead (`express-verified-user/redis`).
import { optionError } from '../base/option-error';
import { positiveInteger } from '../base/option-checks';
import type { TokenAuthError } from '../base/errors';

/**
 * Remembers proof identifiers until they expire. `claimOnce(id, expiresAt, jkt)` records `id` through `expiresAt`
 * (seconds since the epoch, inclusive) and answers true the first time it sees `id`, false every later time up to
 * and including `expiresAt`. `id` is already namespaced and bounded by the caller (a base64url SHA-256 of the key
 * thumbprint and the proof's `jti`, 43 characters), so a store needs no escaping or length checks of its own.
 * `jkt` is the thumbprint of the proof's key: a store may bound what one key holds. A store that cannot promise
 * single use right now (a shared store unreachable, a key over its share) throws or rejects: the request then
 * answers 503.
 */
export interface ReplayStore {
  claimOnce(id: string, expiresAt: number, jkt?: string): boolean | Promise<boolean>;
  /**
   * Optional: report what may cost single use (a shared store whose server may evict ids) to `report`, which
   * hands it to `onError`; returns the function that stops reporting.
   */
  watch?(report: (err: TokenAuthError) => void): () => void;
}

/** Options of the in-process store. */
export interface MemoryReplayStoreOptions {
  /** Most proof ids remembered at once (default 100 000); a full store refuses (503) rather than forget. */
  max?: number;
  /**
   * Most proof ids one proof key (`jkt`) holds at once (default a tenth of `max`); past it, that key gets 503. As
   * the store fills, a key's share shrinks below this: see `createMemoryReplayStore`.
   */
  maxPerKey?: number;
  /** Current time in seconds (default: the system clock; a TokenAuth's default store uses its `clock`). */
  clock?: () => number;
}

/** The in-process store, with its size for tests and stats. */
export interface MemoryReplayStore extends ReplayStore {
  /** Proof ids held now (expired ones leave at the next claim). */
  readonly size: number;
}

/** Thrown by the in-process store for a key that already holds its share (as full as the store is): 503 for it only. */
export class ReplayShareExhausted extends Error {
  constructor() {
    super('this proof key holds its whole share of the in-process replay store');
    this.name = 'ReplayShareExhausted';
  }
}

interface Entry {
  expiresAt: number;
  jkt: string | undefined;
}

/** A binary min-heap of numbers: the expiry seconds that have ids waiting. */
class SecondsHeap {
  private readonly items: number[] = [];
  get first(): number | undefined {
    return this.items[0];
  }
  push(value: number): void {
    const items = this.items;
    let i = items.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent] <= value) break;
      items[i] = items[parent];
      i = parent;
    }
    items[i] = value;
  }
  pop(): void {
    const items = this.items;
    const last = items.pop();
    if (last === undefined || items.length === 0) return;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && items[child + 1] < items[child]) child++;
      if (items[child] >= last) break;
      items[i] = items[child];
      i = child;
    }
    items[i] = last;
  }
}

/**
 * The in-process ReplayStore. Ids wait in buckets by expiry second, the seconds in a min-heap, so the expired ids
 * leave in expiry order whatever order they came in (a proof's expiry follows its `iat`, which the client picks),
 * and a claim costs the ids that expired since the last one, never a walk over the store. Full of live ids it
 * throws rather than forget one (that would let its proof be replayed); so does a key that holds its share.
 * A key's share is `maxPerKey`, or less once the store is fuller: with `free` ids of room left, a key may hold
 * fewer than `free × free / max` (the free room times the fraction free). A key holding nothing is refused only by
 * a full store, and keys that flood leave room for the others: K keys, each filled in turn (the worst order),
 * leave about `max / K` free while K < √max; filling the store takes about `2 × √max` keys, not `max / maxPerKey`.
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): MemoryReplayStore {
  const max = positiveInteger(options.max, 'max', 100_000);
  const maxPerKey = positiveInteger(options.maxPerKey, 'maxPerKey', Math.max(1, Math.floor(max / 10)));
  if (options.clock !== undefined && typeof options.clock !== 'function')
    optionError('clock', 'option "clock" must be a function');
  const clock = options.clock ?? (() => Date.now() / 1000);
  const seen = new Map<string, Entry>();
  const heldBy = new Map<string, number>();
  const buckets = new Map<number, string[]>();
  const seconds = new SecondsHeap();

  function forget(id: string, entry: Entry): void {
    seen.delete(id);
    if (entry.jkt === undefined) return;
    const held = (heldBy.get(entry.jkt) ?? 1) - 1;
    if (held === 0) heldBy.delete(entry.jkt);
    else heldBy.set(entry.jkt, held);
  }

  /** Drop the ids of every bucket whose second has passed (an id re-claimed since lives on). */
  function expire(now: number): void {
    for (let second = seconds.first; second !== undefined && second < now; second = seconds.first) {
      seconds.pop();
      for (const id of buckets.get(second) ?? []) {
        const entry = seen.get(id);
        if (entry !== undefined && entry.expiresAt < now) forget(id, entry);
      }
      buckets.delete(second);
    }
  }

  return {
    get size() {
      return seen.size;
    },
    claimOnce(id, expiresAt, jkt) {
      if (!(Math.abs(expiresAt) < Infinity)) throw new TypeError('claimOnce needs expiresAt in seconds');
      const now = clock();
      expire(now);
      const known = seen.get(id);
      if (known !== undefined) {
        if (known.expiresAt >= now) return false;
        forget(id, known);
      }
      const held = jkt === undefined ? 0 : (heldBy.get(jkt) ?? 0);
      if (held >= maxPerKey) throw new ReplayShareExhausted();
      const free = max - seen.size;
      if (free <= 0) throw new Error('in-process replay store is full');
      // The share shrinks as the store fills (held < free² / max, exact in integers): see above.
      if (held * max >= free * free) throw new ReplayShareExhausted();
      seen.set(id, { expiresAt, jkt });
      if (jkt !== undefined) heldBy.set(jkt, held + 1);
      const second = Math.ceil(expiresAt);
      const bucket = buckets.get(second);
      if (bucket !== undefined) bucket.push(id);
      else {
        buckets.set(second, [id]);
        seconds.push(second);
      }
      return true;
    },
  };
}
