// Shared verdicts for a fleet (`cache.shared`): a remote source's answers stored so a token costs one remote call
// per fleet, not per instance.
import * as crypto from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import type { RemoteClaims, RemoteClaimsSource } from '../remote/source';
import { isObject } from '../base/values';
import { optionError } from '../base/option-error';
import { createSingleFlight, MAX_FLIGHTS, type FlightStats, type VerdictLockStore } from './single-flight';

/**
 * Verdicts of a remote source (upstream mode, introspection) shared across a fleet (`cache.shared`, docs/fleet.md):
 * a token costs one remote call per fleet, not one per instance. Only remote sources have verdicts worth sharing (a local signature check costs
 * microseconds, a shared lookup a network round trip).
 */

/**
 * Where shared verdicts live. Both calls wait a bounded time and reject when the store is unreachable; the
 * caller then falls back to its own cache and the remote source. `key` is a hex SHA-256 of the source's identity and the
 * token (of the token alone for a source without one), never the token.
 */
export interface SharedVerdictStore {
  /** The value stored under `key`, or undefined. */
  getVerdict(key: string): Promise<string | undefined>;
  /** Store `value` under `key` for `ttl` seconds (more than zero). */
  setVerdict(key: string, value: string, ttl: number): Promise<void>;
}

/**
 * `cache.shared` checked at `createTokenAuth`: a store with getVerdict/setVerdict, or undefined. Only a remote
 * source (`remote`: upstream mode or introspection) has verdicts to share.
 */
export function resolveSharedVerdicts(cache: unknown, remote: boolean): SharedVerdictStore | undefined {
  if (typeof cache !== 'object' || cache === null) return undefined;
  const shared = (cache as { shared?: unknown }).shared;
  if (shared === undefined) return undefined;
  const store = shared as Partial<SharedVerdictStore> | null;
  if (
    typeof store !== 'object' ||
    store === null ||
    typeof store.getVerdict !== 'function' ||
    typeof store.setVerdict !== 'function'
  ) {
    optionError(
      'cache.shared',
      'option "cache.shared" must be a shared store (createRedisStore from express-verified-user/redis)',
    );
  }
  if (!remote) {
    optionError(
      'cache.shared',
      'option "cache.shared" applies to key.upstream and introspection only (local verification needs no shared verdicts)',
    );
  }
  return store as SharedVerdictStore;
}

/** What is stored: the remote source's payload (checked again locally when read), or its "invalid token" answer. */
type SharedVerdict = { ok: true; payload: Record<string, unknown> } | { ok: false; code: 'invalid_token' };

/**
 * The store key of a token's verdict: a hex SHA-256 of `<identity>\0<token>`, so that two sources on one store (other
 * upstreams, other authorization servers or clients) never share verdicts; of the token alone without an identity.
 */
export function verdictKey(identity: string | undefined, token: string): string {
  const hash = crypto.createHash('sha256');
  if (identity !== undefined) hash.update(identity).update('\0');
  return hash.update(token).digest('hex');
}

/**
 * A stored value read back: only a well-formed verdict counts, whose payload meets the source's own rule on its
 * answers (`answerFault`); anything else is a miss.
 */
function readVerdict(text: string, source: RemoteClaimsSource): SharedVerdict | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  if (value.ok === false && value.code === 'invalid_token') return { ok: false, code: 'invalid_token' };
  if (value.ok === true && isObject(value.payload) && source.answerFault?.(value.payload) === undefined) {
    return { ok: true, payload: value.payload };
  }
  return undefined;
}

/** A stored verdict as the source's answer: its claims, or its refusal thrown; undefined when unreadable. */
function answerOf(text: string, source: RemoteClaimsSource): RemoteClaims | undefined {
  const known = readVerdict(text, source);
  if (known?.ok === false) throw new TokenAuthError('invalid_token', { reason: 'upstream-401-shared' });
  return known === undefined ? undefined : { payload: known.payload, size: text.length };
}

/** A verdict to store, as text, and its life in seconds. */
type Kept = { value: string; ttl: number };

/** Whether the store offers single flight's lock (createRedisStore does; a store of the app's own may not). */
function isLockStore(store: SharedVerdictStore): store is SharedVerdictStore & VerdictLockStore {
  const candidate = store as Partial<VerdictLockStore>;
  return typeof candidate.claimVerdict === 'function' && typeof candidate.releaseVerdict === 'function';
}

/** The lock's life when the source names no timeout of its own, and the margin for storing the verdict after it. */
const DEFAULT_SOURCE_TIMEOUT = 5;
const LOCK_MARGIN = 1;

/** What the shared-verdict wrapper reads of the resolved options. */
export interface SharedVerdictConfig {
  sharedVerdicts: SharedVerdictStore | undefined;
  cache: { ttl: number; errorTtl: number } | false;
  clock: () => number;
}

/** A remote source behind shared verdicts, with the counters of its fleet single flight when it has one. */
export interface SharedVerdictSource extends RemoteClaimsSource {
  /** Counters of fleet single flight, when shared verdicts use it (verify/single-flight.ts). */
  flightStats?(): FlightStats;
}

/**
 * A remote source (upstream, introspection) with a fleet-wide verdict store in front: a stored verdict answers
 * without calling the remote; a fresh answer is stored — a success until min(`cache.ttl`, `exp`), an "invalid
 * token" for `errorTtl`, an outage never. The payload of a stored success goes through the verifier's local checks
 * (times, issuer, audience, shape) exactly as a fresh answer does. A store that cannot be reached is skipped: the
 * remote answers (fail open, since it remains the authority). With a store that offers locks, a new
 * token costs one call per fleet even when every instance sees it at once (verify/single-flight.ts).
 */
export function withSharedVerdicts(
  source: RemoteClaimsSource,
  options: SharedVerdictConfig,
): RemoteClaimsSource | SharedVerdictSource {
  const store = options.sharedVerdicts;
  if (store === undefined) return source;
  const cache = options.cache;
  const ttl = cache === false ? 0 : cache.ttl;
  const errorTtl = cache === false ? 0 : cache.errorTtl;
  // Awaited (the store bounds the wait) so that the next instance asked after this answer finds the verdict.
  const remember = async (key: string, keep: Kept | undefined): Promise<void> => {
    if (keep !== undefined) await store.setVerdict(key, keep.value, keep.ttl).catch(() => undefined);
  };
  /** The verdict to share for an answer or a refusal of the source: none for an outage, or a life of zero. */
  const keptFor = (result: { ok: true; value: RemoteClaims } | { ok: false; error: unknown }): Kept | undefined => {
    let verdict: SharedVerdict;
    let life: number;
    if (result.ok) {
      const exp = result.value.payload.exp;
      if (typeof exp !== 'number') return undefined;
      verdict = { ok: true, payload: result.value.payload };
      life = Math.floor(Math.min(ttl, exp - options.clock()));
    } else {
      if (!(result.error instanceof TokenAuthError && result.error.code === 'invalid_token')) return undefined;
      verdict = { ok: false, code: 'invalid_token' };
      life = errorTtl;
    }
    return life > 0 ? { value: JSON.stringify(verdict), ttl: life } : undefined;
  };
  const ask = async (token: string) => {
    try {
      return { ok: true as const, value: await source.claimsFor(token) };
    } catch (error) {
      return { ok: false as const, error };
    }
  };
  /** The path without a lock: ask the source, store its verdict, answer. */
  const alone = async (key: string, token: string): Promise<RemoteClaims> => {
    const result = await ask(token);
    await remember(key, keptFor(result));
    if (result.ok) return result.value;
    throw result.error;
  };
  /** Shared verdicts without a lock: the stored verdict, else the source (its verdict stored). */
  const unlocked = async (key: string, token: string): Promise<RemoteClaims> => {
    let stored: string | undefined;
    try {
      stored = await store.getVerdict(key);
    } catch {
      stored = undefined; // unreachable: fall back to the remote source
    }
    const known = stored === undefined ? undefined : answerOf(stored, source);
    return known ?? alone(key, token);
  };
  // Single flight when the store offers locks and there is a verdict worth waiting for.
  const flight =
    isLockStore(store) && (ttl > 0 || errorTtl > 0)
      ? createSingleFlight(store, {
          lockTtl: (source.timeout ?? DEFAULT_SOURCE_TIMEOUT) + LOCK_MARGIN,
          maxFlights: MAX_FLIGHTS,
        })
      : undefined;

  const shared: SharedVerdictSource = {
    kind: 'remote',
    timeout: source.timeout,
    async claimsFor(token): Promise<RemoteClaims> {
      const key = verdictKey(source.identity, token);
      if (flight !== undefined) {
        return flight.run(key, {
          stored: (text) => answerOf(text, source),
          async fresh() {
            const result = await ask(token);
            return { result, keep: keptFor(result) };
          },
          alone: () => alone(key, token),
          overflow: () => unlocked(key, token),
        });
      }
      return unlocked(key, token);
    },
    close() {
      flight?.close();
      source.close();
    },
    breakerStats: source.breakerStats,
    answerFault: source.answerFault,
    identity: source.identity,
    flightStats: flight === undefined ? undefined : () => flight.stats(),
  };
  return shared;
}
