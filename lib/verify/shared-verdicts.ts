// Shared verdicts for a fleet (`cache.shared`): a remote source's answers stored so a token costs one upstream call
// per fleet, not per instance.
import * as crypto from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import type { KeySource, RemoteClaims, RemoteClaimsSource } from '../keys/source';
import { isObject } from '../base/values';
import { optionError } from '../base/option-error';

/**
 * Verdicts of the upstream shared across a fleet (`cache.shared`, docs/fleet.md): a token costs one upstream call per
 * fleet, not one per instance. Only upstream mode has verdicts worth sharing (a local signature check costs
 * microseconds, a shared lookup a network round trip).
 */

/**
 * Where shared verdicts live. Both calls wait a bounded time and reject when the store is unreachable; the
 * caller then falls back to its own cache and the upstream. `key` is a hex SHA-256 of the token, never the token.
 */
export interface SharedVerdictStore {
  /** The value stored under `key`, or undefined. */
  getVerdict(key: string): Promise<string | undefined>;
  /** Store `value` under `key` for `ttl` seconds (more than zero). */
  setVerdict(key: string, value: string, ttl: number): Promise<void>;
}

/** `cache.shared` checked at `createTokenAuth`: a store with getVerdict/setVerdict, or undefined. */
export function resolveSharedVerdicts(cache: unknown): SharedVerdictStore | undefined {
  if (typeof cache !== 'object' || cache === null) return undefined;
  const shared = (cache as { shared?: unknown }).shared;
  if (shared === undefined) return undefined;
  const store = shared as Partial<SharedVerdictStore> | null;
  if (typeof store !== 'object' || store === null || typeof store.getVerdict !== 'function' || typeof store.setVerdict !== 'function') {
    optionError('option "cache.shared" must be a shared store (createRedisStore from express-verified-user/redis)');
  }
  return store as SharedVerdictStore;
}

/** What is stored: the upstream's payload (checked again locally when read), or its "invalid token" answer. */
type SharedVerdict = { ok: true; payload: Record<string, unknown> } | { ok: false; code: 'invalid_token' };

const hexDigest = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

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

/**
 * The upstream source with a fleet-wide verdict store in front: a stored verdict answers without calling the
 * upstream; a fresh answer is stored — a success until min(`cache.ttl`, `exp`), an "invalid token" for
 * `errorTtl`, an outage never. The payload of a stored success goes through the verifier's local checks (times,
 * issuer, audience, shape) exactly as an upstream answer does. A store that cannot be reached is skipped: the
 * upstream answers (fail open, since the upstream remains the authority).
 */
/** What the shared-verdict wrapper reads of the resolved options. */
export interface SharedVerdictConfig {
  sharedVerdicts: SharedVerdictStore | undefined;
  cache: { ttl: number; errorTtl: number } | false;
  clock: () => number;
}

export function withSharedVerdicts(source: KeySource, options: SharedVerdictConfig): KeySource {
  const store = options.sharedVerdicts;
  if (store === undefined) return source;
  if (source.kind !== 'remote') {
    optionError('option "cache.shared" applies to key.upstream and introspection only (local verification needs no shared verdicts)');
  }
  const cache = options.cache;
  const ttl = cache === false ? 0 : cache.ttl;
  const errorTtl = cache === false ? 0 : cache.errorTtl;
  // Awaited (the store bounds the wait) so that the next instance asked after this answer finds the verdict.
  const remember = async (key: string, verdict: SharedVerdict, life: number): Promise<void> => {
    if (!(life > 0)) return;
    await store.setVerdict(key, JSON.stringify(verdict), life).catch(() => undefined);
  };

  const shared: RemoteClaimsSource = {
    kind: 'remote',
    async claimsFor(token): Promise<RemoteClaims> {
      const key = hexDigest(token);
      let stored: string | undefined;
      try {
        stored = await store.getVerdict(key);
      } catch {
        stored = undefined; // unreachable: fall back to the upstream
      }
      const known = stored === undefined ? undefined : readVerdict(stored, source);
      if (known?.ok === true) return { payload: known.payload, size: stored!.length };
      if (known?.ok === false) throw new TokenAuthError('invalid_token', { reason: 'upstream-401-shared' });

      let answer: RemoteClaims;
      try {
        answer = await source.claimsFor(token);
      } catch (err) {
        if (err instanceof TokenAuthError && err.code === 'invalid_token') await remember(key, { ok: false, code: 'invalid_token' }, errorTtl);
        throw err;
      }
      const exp = answer.payload.exp;
      if (typeof exp === 'number') await remember(key, { ok: true, payload: answer.payload }, Math.floor(Math.min(ttl, exp - options.clock())));
      return answer;
    },
    close: () => source.close(),
    breakerStats: source.breakerStats,
    answerFault: source.answerFault,
  };
  return shared;
}
