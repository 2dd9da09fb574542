// Keys from a remote JWKS: chosen by `kid`, cached, refetched for an unknown `kid` at most once per cooldown, with
// withdrawn keys flagged so the verdict cache stops serving what they verified.
import { TokenAuthError } from '../base/errors';
import type { JwsHeader } from '../jose/jws';
import { ALGORITHMS, SUPPORTED_ALGORITHMS, type Algorithm } from '../jose/algorithms';
import { fetchBounded, RemoteFetchError } from '../fetch/bounded-fetch';
import { carryOver, indexKeys, keyFromSet, readJwk, type JwksKey, type KeySet } from './key-set';
import type { KeyChoice, SigningKeySource } from './source';
import type { ServedIssuers } from '../token/issuer';
import { isObject } from '../base/values';
import { metadataInsteadOfJwks, notAKeySet, WrongDocumentError } from './wrong-document';

/**
 * Algorithms accepted from a JWKS when the `algorithms` option is absent: every asymmetric one this package
 * verifies. A JWKS holds public keys only, so HS* never applies, and each key is fit-checked against the token's
 * `alg` (an RSA key never verifies ES256, a P-256 key never ES384), so the wide default opens no key confusion.
 */
export const JWKS_DEFAULT_ALGORITHMS: readonly Algorithm[] = SUPPORTED_ALGORITHMS.filter(
  (alg) => ALGORITHMS[alg].family !== 'hmac',
);

/** Largest JWKS document read (1 MiB); real sets are a few kilobytes. */
export const MAX_JWKS_BYTES = 1024 * 1024;

/**
 * Most entries of a JWKS `keys` array read; the rest are ignored. Real sets hold a handful of keys; 1 MiB holds
 * 8 000 EC keys, and parsing each costs tens of microseconds of blocked event loop on every refetch.
 */
export const MAX_JWKS_KEYS = 1000;

/**
 * Age (seconds) after which a key set is refreshed in the background on its next use, so that a key the issuer
 * withdrew stops verifying. The known keys keep answering meanwhile, and after a failed refresh.
 */
export const JWKS_MAX_AGE = 600;

/** Resolved settings of a JWKS key source; durations in seconds. */
export interface JwksSourceConfig {
  url: URL;
  /** Least time between two fetches. */
  cooldown: number;
  /** Limit for one refresh, body included (and locating the set, when `locate` is given). */
  timeout: number;
  /** Accepted algorithms (the `algorithms` option), or undefined for JWKS_DEFAULT_ALGORITHMS. */
  algorithms: readonly Algorithm[] | undefined;
  /** Current time in seconds (the `clock` option), which paces the cooldown. */
  clock: () => number;
  /**
   * Where the key set is, asked before each fetch (discovery: the metadata is fetched with the key set). It
   * rejects when the address cannot be had; the fetch then fails like an unreachable JWKS. `deadline` (a
   * `Date.now()` time) is when the whole refresh must be done; what locating leaves of it is the fetch's.
   * Default: `url`.
   */
  locate?: (deadline: number) => Promise<URL>;
  /** How hints name the key set's address: `'key.jwksUri'` (the default), or where discovery found it. */
  named?: string;
  /** The issuers the set serves, for keys bound to an issuer (keys/key-set.ts); none when absent. */
  served?: ServedIssuers;
}

export { readJwk } from './key-set';

const NOT_JSON = 'JWKS is not JSON';

/**
 * The usable keys among the first MAX_JWKS_KEYS entries of a JWKS document; throws (a plain Error, for logs)
 * unless it is JSON `{ "keys": [...] }`.
 */
export function parseJwks(text: string): JwksKey[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error(NOT_JSON);
  }
  if (!isObject(document) || !Array.isArray(document.keys))
    throw metadataInsteadOfJwks(document) ?? new Error('JWKS is not an object with a "keys" array');
  const usable: JwksKey[] = [];
  const read = Math.min(document.keys.length, MAX_JWKS_KEYS);
  for (let i = 0; i < read; i++) {
    const key = readJwk(document.keys[i]);
    if (key !== undefined) usable.push(key);
  }
  return usable;
}

/** The short reason, or the hint, a failure carries for logs (a discovery failure says which step), if any. */
function noteOf(cause: unknown, note: 'reason' | 'hint'): string | undefined {
  const value = (cause as { reason?: unknown; hint?: unknown } | null | undefined)?.[note];
  return typeof value === 'string' ? value : undefined;
}

/**
 * `{ jwksUri }`: keys fetched from a JWKS, chosen by `kid`, cached. A miss refetches, but no two fetches are ever
 * closer than `cooldown` and concurrent misses share one fetch, so a flood of made-up `kid`s costs the issuer
 * at most one request per cooldown. A failed fetch never drops known keys. Answers synchronously when the key is
 * at hand, so warm verification stays free of promises.
 */
export function jwksKeySource(config: JwksSourceConfig): SigningKeySource {
  const { url, cooldown, clock } = config;
  const href = url.href;
  const timeoutMs = config.timeout * 1000;
  const closing = new AbortController();
  let keys: KeySet | undefined;
  let lastFetchAt = -Infinity;
  let lastFetchFailed = false;
  let lastError: unknown;
  let pending: Promise<void> | undefined;

  async function download(): Promise<JwksKey[]> {
    // One deadline for the whole download, locating included (discovery's metadata): no request waits on a
    // refresh longer than `timeout`, however its steps share it.
    const deadline = Date.now() + timeoutMs;
    const target = config.locate === undefined ? href : (await config.locate(deadline)).href;
    const left = deadline - Date.now();
    if (left <= 0) throw new RemoteFetchError('timeout');
    const answer = await fetchBounded(target, {
      headers: { Accept: 'application/jwk-set+json, application/json' },
      timeoutMs: left,
      maxBytes: MAX_JWKS_BYTES,
      signal: closing.signal,
    });
    const refused = (answered: string) =>
      notAKeySet(config.named ?? 'key.jwksUri', new URL(target), answered, answer.headers.get('content-type'));
    if (answer.status !== 200) throw refused(`HTTP ${answer.status}`);
    let usable: JwksKey[];
    try {
      usable = parseJwks(answer.text);
    } catch (err) {
      if (err instanceof WrongDocumentError) throw err;
      throw refused(
        (err as Error).message === NOT_JSON ? 'a document that is not JSON' : 'JSON without a "keys" array',
      );
    }
    // A set with nothing usable is a broken publication, not a revocation of every key: keep what we know.
    if (usable.length === 0) throw refused('a key set with no usable signing key');
    return usable;
  }

  /** Start a fetch now; the promise never rejects, its outcome lands in `keys` / `lastFetchFailed`. */
  function refetch(now: number): Promise<void> {
    lastFetchAt = now;
    const run = download().then(
      (usable) => {
        keys = indexKeys(carryOver(keys, usable), clock());
        lastFetchFailed = false;
        lastError = undefined;
        pending = undefined;
      },
      (err: unknown) => {
        lastFetchFailed = true;
        lastError = err;
        pending = undefined;
      },
    );
    pending = run;
    return run;
  }

  function coolingFor(now: number): number {
    return lastFetchAt + cooldown - now;
  }

  function unavailable(reason: string, loading = false): TokenAuthError {
    const cause = lastError;
    const retryAfter = Math.max(1, Math.ceil(coolingFor(clock())));
    const why = cause instanceof RemoteFetchError ? `jwks-${cause.failure}` : (noteOf(cause, 'reason') ?? reason);
    // `ready()` always says what failed and when it is tried again; a request's refusal only when the cause says.
    const fallback = loading ? `no keys loaded for ${href} (${why}); tried again in ${retryAfter} s` : undefined;
    return new TokenAuthError('verification_unavailable', {
      reason: why,
      retryAfter,
      cause,
      hint: noteOf(cause, 'hint') ?? fallback,
    });
  }

  /** After the latest fetch (or inside its cooldown), a key that is still missing: 401 if we know, 503 if not. */
  function missing(): TokenAuthError {
    if (closing.signal.aborted) return new TokenAuthError('verification_unavailable', { reason: 'jwks-closed' });
    if (lastFetchFailed || keys === undefined) return unavailable('jwks-fetch');
    return new TokenAuthError('invalid_token', { reason: 'kid-unknown' });
  }

  function afterFetch(header: JwsHeader, payload: Readonly<Record<string, unknown>>): KeyChoice {
    const found = keys === undefined ? undefined : keyFromSet(keys, header, payload, config.served);
    if (found === undefined) throw missing();
    return found;
  }

  return {
    kind: 'jws',
    algorithms: new Set(config.algorithms ?? JWKS_DEFAULT_ALGORITHMS),
    keyFor(header, payload) {
      const now = clock();
      if (keys !== undefined) {
        const found = keyFromSet(keys, header, payload, config.served);
        if (found !== undefined) {
          if (
            now - keys.fetchedAt >= JWKS_MAX_AGE &&
            pending === undefined &&
            coolingFor(now) <= 0 &&
            !closing.signal.aborted
          ) {
            void refetch(now);
          }
          return found;
        }
      }
      if (closing.signal.aborted) throw missing();
      if (pending !== undefined) return pending.then(() => afterFetch(header, payload));
      if (coolingFor(now) > 0) throw missing();
      return refetch(now).then(() => afterFetch(header, payload));
    },
    ready() {
      if (keys !== undefined) return Promise.resolve();
      if (closing.signal.aborted) return Promise.reject(missing());
      const now = clock();
      // The fetch under way, or a new one once the cooldown allows: ready() never adds a fetch the cooldown forbids.
      const run = pending ?? (coolingFor(now) > 0 ? undefined : refetch(now));
      if (run === undefined) return Promise.reject(unavailable('jwks-fetch', true));
      return run.then(() => {
        if (keys === undefined) throw unavailable('jwks-fetch', true);
      });
    },
    close() {
      closing.abort();
    },
  };
}
