// A fleet's shared state in the app's Redis: the revocation list (pub/sub), DPoP single use and shared verdicts,
// behind the small store interfaces that verify/ and dpop/ define.
import { positiveDuration, type Duration } from '../base/duration';
import { optionError } from '../base/option-error';
import { knownFields, positiveInteger, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import { TokenAuthError } from '../base/errors';
import type { ReplayStore } from '../dpop/replay';
import type { RevocationList, RevocationStats, RevocationStore } from '../verify/revocation';
import type { SharedVerdictStore } from '../verify/shared-verdicts';
import type { VerdictClaim, VerdictLockStore } from '../verify/single-flight';
import { boundedCommands } from './bounded-commands';
import { redisConnection, type RedisClientLike, type Subscriber } from './redis-client';
import { REVOKE_SCRIPT, revocationOf, revokeFailed, type RevocableClaims } from './revoke';

/**
 * `express-verified-user/redis` (docs/fleet.md): the state a fleet shares, in the app's own Redis. One store serves the
 * three seams the core defines — revocation (`revocation`), DPoP single use (`dpop.replay`) and upstream verdicts
 * (`cache.shared`). Keys, under `prefix`:
 *
 * - `{prefix}revoked`: a sorted set, member `jti`, score its token's `exp`; the channel of the same name carries
 *   each revocation to every instance.
 * - `{prefix}dpop:{id}`: one key per DPoP proof, set if absent, expiring with the proof's window.
 * - `{prefix}verdict:{<sha256 hex>}`: one key per token verdict, expiring with it; `…:lock` beside it, the
 *   token's single-flight lock (the braces are literal: a hash tag, so that both keys sit in one Cluster slot).
 */

export type { RedisClientLike } from './redis-client';

/** Options of `createRedisStore`. */
export interface RedisStoreOptions {
  /** Prefix of every key and channel (default `'evu:'`). */
  prefix?: string;
  /** Longest wait for one Redis command before it counts as unreachable (default 1 s). */
  timeout?: Duration;
  /**
   * Most of the store's commands waiting on the client at once (default 1 000), those it stopped waiting for
   * included: the client keeps them queued while Redis stalls. Beyond it a command fails at once without being
   * sent (DPoP → 503, shared verdicts skipped, `revoke()` rejects with reason `store-busy`).
   */
  maxPending?: number;
}

/** The shared store: every seam a fleet needs, plus revoking and closing. */
export interface RedisStore extends RevocationStore, ReplayStore, SharedVerdictStore, VerdictLockStore {
  /**
   * Revoke a token until its `exp`, given its verified claims (`revoke(auth.claims(req))`, any claims mode; a
   * TypeError when they hold no `jti`) or its `jti` and `exp` (seconds; beyond the year 9999, `Infinity` included,
   * held until then). Stored in Redis and published to every instance in one script (all or nothing), and refused
   * by this one at once once stored. Rejects with a `verification_unavailable` TokenAuthError (503) when Redis is too slow,
   * unreachable or busy: reason `store-busy` (nothing was revoked) or `revoke-outcome-unknown` (it may still take
   * effect). Revoking is idempotent: retry.
   */
  revoke(claims: RevocableClaims): Promise<void>;
  revoke(jti: string, exp: number): Promise<void>;
  /** Close the connection this store opened for pub/sub (never the app's client) and stop its timers. */
  close(): void;
}

const REDIS_STORE_OPTIONS: FieldList<RedisStoreOptions> = { prefix: true, timeout: true, maxPending: true };

// The live part of the list as a flat array of strings (member, score, …), whatever protocol the client speaks.
const LOAD = `return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES')`;

// Single flight, one round trip each. KEYS: verdict, lock (one slot). CLAIM ARGV: owner, lock ms; RELEASE ARGV:
// owner, then the verdict and its ms when there is one. The lock is deleted only by the owner that holds it.
const CLAIM = `
local v = redis.call('GET', KEYS[1])
if v then return {'verdict', v} end
if redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then return {'mine'} end
return {'busy'}`;
const RELEASE = `
if ARGV[2] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`;

/** How often the local list drops entries whose token has expired. */
const SWEEP_MS = 5000;
/** Wait between two tries to load the list while it cannot be loaded. */
const RETRY_MS = 250;

/**
 * Create the store on the app's Redis client (node-redis with `connect()` called, or ioredis as constructed). The
 * store never connects, quits or reconfigures that client; it works while it is still connecting or reconnecting.
 * Revocation opens one more connection (a `duplicate()` of the client) for pub/sub, when a TokenAuth first uses it.
 */
export function createRedisStore(client: RedisClientLike, opts: RedisStoreOptions = {}): RedisStore {
  const redis = redisConnection(client);
  if (!isObject(opts)) optionError('', 'createRedisStore expects an options object');
  knownFields(opts, REDIS_STORE_OPTIONS, '', 'createRedisStore');
  const prefix = opts.prefix ?? 'evu:';
  if (typeof prefix !== 'string') optionError('prefix', 'createRedisStore option "prefix" must be a string');
  // An empty hash tag first ("{}") would make Redis Cluster hash whole key names, parting a verdict from its lock.
  const tag = prefix.indexOf('{');
  if (tag !== -1 && prefix[tag + 1] === '}')
    optionError('prefix', 'createRedisStore option "prefix" must not start a hash tag with "{}"');
  const timeoutMs = positiveDuration(opts.timeout, 'timeout', 1, 'createRedisStore option "timeout"') * 1000;
  const maxPending = positiveInteger(opts.maxPending, 'maxPending', 1000, 'createRedisStore option "maxPending"');
  const listKey = `${prefix}revoked`;
  // The hash in braces is the key's Cluster hash tag: a verdict and its lock always share a slot, whatever the prefix.
  const verdictKey = (key: string) => `${prefix}verdict:{${key}}`;
  const millis = (seconds: number) => String(Math.max(1, Math.round(seconds * 1000)));
  const channel = `${prefix}revoked`;
  // Every command goes through this: bounded in time, and in number while Redis stalls.
  const command = boundedCommands(redis, timeoutMs, maxPending).run;

  // ---- revocation: a local copy of the list, loaded whole and kept current by pub/sub ----
  const revoked = new Map<string, number>();
  const followers = new Set<(err: TokenAuthError) => void>();
  let subscriber: Subscriber | undefined;
  let loaded = false;
  let available = false;
  let outageReported = false;
  let closed = false;
  let generation = 0;
  let sweeper: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;

  const now = () => Date.now() / 1000;
  const note = (jti: string, exp: number) => {
    if (!(exp > now())) return;
    const held = revoked.get(jti);
    if (held === undefined || held < exp) revoked.set(jti, exp);
  };

  function outage(): void {
    available = false;
    if (outageReported || closed) return;
    // Once per outage, not per request: the requests themselves are served from the list held.
    outageReported = true;
    const err = new TokenAuthError('verification_unavailable', { reason: 'store-unavailable', retryAfter: 1 });
    for (const report of followers) report(err);
  }

  /** After every (re)connect: subscribe, then load the whole list, so that nothing revoked meanwhile is missed. */
  async function resync(): Promise<void> {
    const attempt = ++generation;
    clearTimeout(retry);
    try {
      await subscriber?.subscribe();
      const reply = await command(['EVAL', LOAD, '1', listKey, String(Math.floor(now()))]);
      if (attempt !== generation || closed) return;
      const flat = Array.isArray(reply) ? reply.map(String) : [];
      for (let i = 0; i + 1 < flat.length; i += 2) note(flat[i], Number(flat[i + 1]));
      loaded = true;
      available = true;
      outageReported = false;
    } catch {
      if (attempt !== generation || closed) return;
      outage();
      retry = setTimeout(() => void resync(), RETRY_MS);
      retry.unref();
    }
  }

  function sweep(): void {
    const t = now();
    for (const [jti, exp] of revoked) if (!(exp > t)) revoked.delete(jti);
  }

  function start(): void {
    if (subscriber !== undefined || closed) return;
    subscriber = redis.subscriber(channel, {
      message(text) {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return;
        }
        if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'number')
          note(value[0], value[1]);
      },
      ready: () => void resync(),
      down: () => {
        generation++;
        clearTimeout(retry);
        outage();
      },
    });
    sweeper = setInterval(sweep, SWEEP_MS);
    sweeper.unref();
  }

  const list: Omit<RevocationList, 'unfollow'> = {
    isRevoked(jti, at) {
      if (!loaded) return undefined;
      const exp = revoked.get(jti);
      return exp !== undefined && exp > at;
    },
    stats(): RevocationStats {
      sweep();
      return { loaded, available, size: revoked.size };
    },
  };

  return {
    follow(report) {
      followers.add(report);
      start();
      return { ...list, unfollow: () => void followers.delete(report) };
    },

    async revoke(target: RevocableClaims | string, maybeExp?: number) {
      const { jti, exp } = revocationOf(target, maybeExp);
      const t = Math.floor(now());
      if (!(exp > t)) return; // already expired: nothing left to refuse
      try {
        await command([
          'EVAL',
          REVOKE_SCRIPT,
          '1',
          listKey,
          jti,
          String(exp),
          String(t),
          channel,
          JSON.stringify([jti, exp]),
        ]);
      } catch (err) {
        // The list changes on success only: a command that runs later publishes, and every instance notes it then.
        throw revokeFailed(err);
      }
      note(jti, exp);
    },

    async claimOnce(id, expiresAt) {
      // Held through expiresAt inclusive (the binding step adds the clock tolerance to it): gone only after.
      const ms = Math.max(1, Math.floor(expiresAt * 1000 - Date.now()) + 1);
      const reply = await command(['SET', `${prefix}dpop:${id}`, '1', 'PX', String(ms), 'NX']);
      return reply !== null && reply !== undefined;
    },

    async getVerdict(key) {
      // A shared verdict is only worth a bounded wait while Redis is up; during an outage the upstream answers.
      if (!redis.ready()) throw new Error('redis not ready');
      const reply = await command(['GET', verdictKey(key)]);
      return reply === null || reply === undefined ? undefined : String(reply);
    },

    async setVerdict(key, value, ttl) {
      if (!redis.ready()) return;
      await command(['SET', verdictKey(key), value, 'PX', millis(ttl)]);
    },

    async claimVerdict(key, owner, lockTtl): Promise<VerdictClaim> {
      if (!redis.ready()) throw new Error('redis not ready');
      const reply = await command([
        'EVAL',
        CLAIM,
        '2',
        verdictKey(key),
        `${verdictKey(key)}:lock`,
        owner,
        millis(lockTtl),
      ]);
      const [state, value] = Array.isArray(reply) ? reply.map(String) : [];
      if (state === 'verdict' && value !== undefined) return { state, value };
      if (state === 'mine' || state === 'busy') return { state };
      throw new Error('unexpected reply');
    },

    async releaseVerdict(key, owner, verdict) {
      const kept = verdict === undefined ? [] : [verdict.value, millis(verdict.ttl)];
      await command(['EVAL', RELEASE, '2', verdictKey(key), `${verdictKey(key)}:lock`, owner, ...kept]);
    },

    close() {
      closed = true;
      generation++;
      clearTimeout(retry);
      clearInterval(sweeper);
      subscriber?.close();
      followers.clear();
    },
  };
}
