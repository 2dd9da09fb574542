// Fleet single flight for shared verdicts: a short lock per new token in the shared store, so that a burst of one
// token across the fleet costs one remote call; the other callers wait, bounded, for the verdict its holder stores.
import { randomBytes } from 'node:crypto';

/**
 * What a shared store offers for single flight (createRedisStore does). Each call is one round trip, bounded by
 * the store's own timeout, and rejects when the store cannot be reached. `key` is a verdict key: a hex SHA-256
 * (shared-verdicts.ts `verdictKey`).
 */
export interface VerdictLockStore {
  /**
   * The verdict stored under `key`; else the lock of `key`, taken for `owner` for `lockTtl` seconds when free
   * (`'mine'`); else `'busy'` (another caller holds it).
   */
  claimVerdict(key: string, owner: string, lockTtl: number): Promise<VerdictClaim>;
  /**
   * Store `verdict` (when given) for its `ttl` seconds, then release the lock of `key` if `owner` still holds it:
   * a lock that expired and was taken by another caller is never released by the one that lost it.
   */
  releaseVerdict(key: string, owner: string, verdict?: { value: string; ttl: number }): Promise<void>;
}

/** The answer of `claimVerdict`. */
export type VerdictClaim = { state: 'verdict'; value: string } | { state: 'mine' } | { state: 'busy' };

/** Bounds of single flight; durations in seconds. */
export interface FlightConfig {
  /** Lifetime of a lock: the longest a holder that died keeps the others waiting. */
  lockTtl: number;
  /** Tokens in flight (held or waited for) per process; beyond it a call goes straight to the remote source. */
  maxFlights: number;
}

/** What a caller of `run` supplies: how a stored verdict reads, how to ask the source, and the path without a lock. */
export interface FlightWork<T> {
  /** A stored verdict as an answer (or the error it stands for, thrown); undefined when it cannot be read. */
  stored(text: string): T | undefined;
  /** Ask the remote source; `keep` is the verdict to store for the fleet (none for an outage). */
  fresh(): Promise<{
    result: { ok: true; value: T } | { ok: false; error: unknown };
    keep?: { value: string; ttl: number };
  }>;
  /** Without the lock, after a wait or with the store unreachable: ask the source and store its verdict. */
  alone(): Promise<T>;
  /** Past `maxFlights`: the path before single flight (the stored verdict read once, else `alone`). */
  overflow(): Promise<T>;
}

/** Default tokens in flight per process. */
export const MAX_FLIGHTS = 128;
/** First wait between two polls of a busy lock, doubled up to LONGEST_POLL_MS. */
const FIRST_POLL_MS = 10;
const LONGEST_POLL_MS = 100;

/** Counters of fleet single flight, for `stats().flight`. */
export interface FlightStats {
  /** Locks this process holds now (one remote call each). */
  holding: number;
  /** Tokens this process waits for now (another instance holds their lock). */
  waiting: number;
  /** Calls made without the lock because this process already had its most tokens in flight. */
  overflow: number;
  /** Verdicts this process received from another instance's call instead of making its own. */
  shared: number;
}

/** The single flight of one shared-verdict wrapper. */
export interface SingleFlight {
  run<T>(key: string, work: FlightWork<T>): Promise<T>;
  stats(): FlightStats;
  close(): void;
}

/**
 * Single flight over `store`. A caller first claims the token: a stored verdict answers at once; a free lock is
 * taken, the remote source asked, the verdict stored and the lock released in one round trip; a busy lock is
 * polled (10 ms doubling to 100 ms) until a verdict appears or the lock is free again, at most two lock lifetimes
 * (polling, not pub/sub: no subscription to lose in a failover, and no message to every node per token). The lock frees without a verdict when its holder had an outage (never stored) or died (the
 * lock expires): the next poll takes it and asks the source itself. The store unreachable, the wait over, or
 * `maxFlights` reached: the caller asks the source directly (fail open, as when Redis is down: the source stays
 * the authority, and its breaker bounds an outage).
 */
export function createSingleFlight(store: VerdictLockStore, config: FlightConfig): SingleFlight {
  const inFlight = new Map<string, Promise<unknown>>();
  const counts: FlightStats = { holding: 0, waiting: 0, overflow: 0, shared: 0 };
  // Two lock lifetimes: a holder that died (one), then the call of the caller that took the lock after it (one).
  const waitMs = 2 * config.lockTtl * 1000;
  let closed = false;

  async function lead<T>(key: string, work: FlightWork<T>): Promise<T> {
    const owner = randomBytes(12).toString('hex');
    const deadline = Date.now() + waitMs;
    let delay = FIRST_POLL_MS;
    let waited = false;
    try {
      // Bounded by the deadline; the count bound only guards against a clock that stands still.
      for (let poll = 0; poll < 10_000 && !closed; poll++) {
        let claim: VerdictClaim;
        try {
          claim = await store.claimVerdict(key, owner, config.lockTtl);
        } catch {
          break; // unreachable: the source answers
        }
        if (claim.state === 'verdict') {
          const answer = work.stored(claim.value);
          if (answer === undefined) break;
          if (waited) counts.shared++;
          return answer;
        }
        if (claim.state === 'mine') {
          if (waited) counts.waiting--;
          waited = false;
          return await hold(key, owner, work);
        }
        if (!waited) counts.waiting++;
        waited = true;
        if (Date.now() + delay > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, LONGEST_POLL_MS);
      }
    } finally {
      if (waited) counts.waiting--;
    }
    return work.alone();
  }

  async function hold<T>(key: string, owner: string, work: FlightWork<T>): Promise<T> {
    counts.holding++;
    try {
      const { result, keep } = await work.fresh();
      // Awaited (bounded by the store's timeout) so that the callers polling find the verdict with the lock gone.
      await store.releaseVerdict(key, owner, keep).catch(() => undefined);
      if (result.ok) return result.value;
      throw result.error;
    } finally {
      counts.holding--;
    }
  }

  return {
    run<T>(key: string, work: FlightWork<T>): Promise<T> {
      // One flight per token per process: a second caller here joins the first instead of polling too.
      const joined = inFlight.get(key) as Promise<T> | undefined;
      if (joined !== undefined) return joined;
      if (closed || inFlight.size >= config.maxFlights) {
        counts.overflow++;
        return work.overflow();
      }
      const flight = lead(key, work).finally(() => inFlight.delete(key));
      inFlight.set(key, flight);
      return flight;
    },
    stats: () => ({ ...counts }),
    close() {
      closed = true;
    },
  };
}
