// A fleet's shared state in the app's Redis: the revocation list (pub/sub), DPoP single use and shared verdicts,
// behind the small store interfaces that verify/ and dpop/ define.
import { parseDuration, type Duration } from '../base/duration';
import { TokenAuthError } from '../base/errors';
import type { ReplayStore } from '../dpop/replay';
import type { RevocationList, RevocationStats, RevocationStore } from '../verify/revocation';
import type { SharedVerdictStore } from '../verify/shared-verdicts';
import { redisConnection, type RedisClientLike, type Subscriber } from './redis-client';

/**
 * `express-verified-user/redis` (docs/fleet.md): the state a fleet shares, in the app's own Redis. One store serves the
 * three seams the core defines — revocation (`revocation`), DPoP single use (`dpop.replay`) and upstream verdicts
 * (`cache.shared`). Keys, under `prefix`:
 *
 * - `{prefix}revoked`: a sorted set, member `jti`, score its token's `exp`; the channel of the same name carries
 *   each revocation to every instance.
 * - `{prefix}dpop:{id}`: one key per DPoP proof, set if absent, expiring with the proof's window.
 * - `{prefix}verdict:{sha256 hex}`: one key per token verdict, expiring with it.
 */

export type { RedisClientLike } from './redis-client';

/** Options of `createRedisStore`. */
export interface RedisStoreOptions {
  /** Prefix of every key and channel (default `'evu:'`). */
  prefix?: string;
  /** Longest wait for one Redis command before it counts as unreachable (default 1 s). */
  timeout?: Duration;
}

/** The shared store: every seam a fleet needs, plus revoking and closing. */
export interface RedisStore extends RevocationStore, ReplayStore, SharedVerdictStore {
  /**
   * Revoke a token by its `jti` until its `exp` (seconds): stored in Redis, published to every instance, and
   * refused by this one at once. Rejects when Redis cannot be reached (nothing was revoked then).
   */
  revoke(jti: string, exp: number): Promise<void>;
  /** Close the connection this store opened for pub/sub (never the app's client) and stop its timers. */
  close(): void;
}

// Stores the revocation, drops what has expired, keeps the key alive as long as its last entry, and publishes it,
// in one round trip. ARGV: jti, exp, now, channel, message.
const REVOKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
if (not old) or tonumber(old) < tonumber(ARGV[2]) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('EXPIREAT', KEYS[1], math.ceil(tonumber(last[2])) + 1)
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;

// The live part of the list as a flat array of strings (member, score, …), whatever protocol the client speaks.
const LOAD = `return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES')`;

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
  const prefix = opts.prefix ?? 'evu:';
  if (typeof prefix !== 'string') throw new TypeError('express-verified-user/redis: option "prefix" must be a string');
  const timeoutMs = (opts.timeout === undefined ? 1 : parseDuration(opts.timeout, 'timeout')) * 1000;
  if (!(timeoutMs > 0)) throw new TypeError('express-verified-user/redis: option "timeout" must be more than zero');
  const listKey = `${prefix}revoked`;
  const channel = `${prefix}revoked`;

  /** One command, bounded in time: a queued command that outlasts the timeout counts as unreachable. */
  function command(args: string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('redis command timed out')), timeoutMs);
      redis.command(args).then(
        (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error('redis command failed'));
        },
      );
    });
  }

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
        if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'number') note(value[0], value[1]);
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

    async revoke(jti, exp) {
      if (typeof jti !== 'string' || jti === '') throw new TypeError('express-verified-user/redis: revoke(jti, exp) needs a non-empty jti');
      if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new TypeError('express-verified-user/redis: revoke(jti, exp) needs exp in seconds');
      const t = Math.floor(now());
      if (!(exp > t)) return; // already expired: nothing left to refuse
      await command(['EVAL', REVOKE, '1', listKey, jti, String(exp), String(t), channel, JSON.stringify([jti, exp])]);
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
      const reply = await command(['GET', `${prefix}verdict:${key}`]);
      return reply === null || reply === undefined ? undefined : String(reply);
    },

    async setVerdict(key, value, ttl) {
      if (!redis.ready()) return;
      await command(['SET', `${prefix}verdict:${key}`, value, 'PX', String(Math.max(1, Math.round(ttl * 1000)))]);
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
