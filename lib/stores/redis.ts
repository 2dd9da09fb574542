// A fleet's shared state in the app's Redis: the revocation list and its subject and session rules (pub/sub), DPoP
// single use and shared verdicts, behind the small store interfaces that verify/ and dpop/ define.
import { positiveDuration, type Duration } from '../base/duration';
import { optionError } from '../base/option-error';
import { knownFields, positiveInteger, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { ReplayStore } from '../dpop/replay';
import { REVOCATION_GRACE, type RevocationRules, type RevocationStore } from '../verify/revocation';
import { resolveMaxRules, ruleMethods, rulesNeedMaxLifetime } from '../verify/revocation-requests';
import type { RuleEntry } from '../verify/rule-set';
import type { SharedVerdictStore } from '../verify/shared-verdicts';
import type { VerdictClaim, VerdictLockStore } from '../verify/single-flight';
import { boundedCommands, luaScript } from './bounded-commands';
import { redisConnection, type RedisClientLike } from './redis-client';
import { redisReplay, resolveRedisReplay, type RedisReplayOptions } from './replay';
import { redisRevocationList } from './revocation-list';
import { REVOKE_SCRIPT, revocationArgs, revocationOf, revokeFailed, type RevocableClaims } from './revoke';
import { ruleKeys, writeRules } from './revoke-rules';
import { redisRules } from './rule-list';
import type { ReceiverState } from '../events/state';
import { redisReceiverState } from './receiver-state';

/**
 * `express-verified-user/redis` (docs/fleet.md): the state a fleet shares, in the app's own Redis. One store serves the
 * three seams the core defines — revocation (`revocation`), DPoP single use (`dpop.replay`) and upstream verdicts
 * (`cache.shared`). Keys, under `prefix`:
 *
 * - `{prefix}revoked`: a sorted set, member `jti`, score its token's `exp`, with no expiry of its own; the channel of
 *   the same name carries each revocation, and each rule, to every instance.
 * - `{prefix}rules:{<prefix>rules}`: the subject and session rules, a sorted set, member `[kind, iss, key]`, score its
 *   `before`; `…:lifetime` beside it, the longest rule lifetime a TokenAuth declared (one Cluster slot).
 * - `{prefix}dpop:{<prefix>dpop}:key:<jkt>`: the proof ids of one proof key (a sorted set, id → expiry), with
 *   `…:count` and `…:seconds` counting them all: one Cluster slot, so that one script claims and counts.
 * - `{prefix}verdict:{<sha256 hex>}`: one key per token verdict, expiring with it; `…:lock` beside it, the
 *   token's single-flight lock (the braces are literal: a hash tag, so that both keys sit in one Cluster slot).
 * - `{prefix}events:…`: the security event receiver's state (stores/receiver-state.ts), each key expiring.
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
  /**
   * Most bytes of those commands (their arguments; default 4 MiB): a shared verdict may carry 256 KiB, so a count
   * alone let 1 000 of them hold 250 MiB while Redis stalled. Beyond it, as beyond `maxPending`.
   */
  maxPendingBytes?: number;
  /** The DPoP proof ids the fleet holds in Redis: `max` in all (default 100 000), `maxPerKey` per proof key. */
  replay?: RedisReplayOptions;
  /**
   * Most subject and session rule entries the fleet holds in Redis (default 100 000; a session rule with `sub` takes
   * two). A rule that would pass it is rejected (reason `revocation-store-full`), never stored by dropping another.
   * Give every process that writes rules the same value.
   */
  maxRules?: number;
}

/** The shared store: every seam a fleet needs, plus revoking and closing. */
export interface RedisStore
  extends RevocationStore, RevocationRules, ReplayStore, SharedVerdictStore, VerdictLockStore {
  claimOnce(id: string, expiresAt: number, jkt?: string): Promise<boolean>;
  /** Report warnings about Redis (an eviction policy other than `noeviction`) to `report`; returns the undo. */
  watch(report: Parameters<RevocationStore['follow']>[0]): () => void;
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
  /** Whether `revokeSubject` or `revokeSession` was called on this store object. */
  rulesWritten(): boolean;
  /**
   * The security event receiver's state for the fleet (`auth.securityEvents()`, docs/continuous-access.md): SET
   * `jti`s seen, the lease of the one instance that polls and manages a stream, a stream's verification.
   */
  receiverState(): ReceiverState;
  /** Close the connections this store opened (pub/sub, its own commands; never the app's client), stop its timers. */
  close(): void;
}

const REDIS_STORE_OPTIONS: FieldList<RedisStoreOptions> = {
  prefix: true,
  timeout: true,
  maxPending: true,
  maxPendingBytes: true,
  replay: true,
  maxRules: true,
};

const OWNER = 'express-verified-user/redis';

// Single flight, one round trip each. KEYS: verdict, lock (one slot). CLAIM ARGV: owner, lock ms; RELEASE ARGV:
// owner, then the verdict and its ms when there is one. The lock is deleted only by the owner that holds it.
const CLAIM = luaScript(`
local v = redis.call('GET', KEYS[1])
if v then return {'verdict', v} end
if redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then return {'mine'} end
return {'busy'}`);
const RELEASE = luaScript(`
if ARGV[2] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`);

/**
 * Create the store on the app's Redis client (node-redis with `connect()` called, or ioredis as constructed). The
 * store never connects, quits or reconfigures that client; it works while it is still connecting or reconnecting.
 * Revocation opens two more connections (`duplicate()`s of the client), for pub/sub and for loading the list, when
 * a TokenAuth first uses it; DPoP alone opens the second, to read Redis's eviction policy.
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
  const maxPendingBytes = positiveInteger(
    opts.maxPendingBytes,
    'maxPendingBytes',
    4 * 1024 * 1024,
    'createRedisStore option "maxPendingBytes"',
  );
  const replayBounds = resolveRedisReplay(opts.replay);
  const maxRules = resolveMaxRules(opts.maxRules, 'createRedisStore');
  const listKey = `${prefix}revoked`;
  const keysOfRules = ruleKeys(prefix, listKey);
  // The hash in braces is the key's Cluster hash tag: a verdict and its lock always share a slot, whatever the prefix.
  const verdictKey = (key: string) => `${prefix}verdict:{${key}}`;
  const millis = (seconds: number) => String(Math.max(1, Math.round(seconds * 1000)));
  const now = () => Date.now() / 1000;
  // Every command on the app's client goes through this: bounded in time, and in number and bytes while Redis stalls.
  const commands = boundedCommands(redis, { timeoutMs, maxPending, maxPendingBytes });
  const command = commands.run;
  const replay = redisReplay(commands, prefix, replayBounds);
  const rules = redisRules(keysOfRules, maxRules);
  const list = redisRevocationList({
    redis,
    listKey,
    replayKey: `${prefix}dpop:{${prefix}dpop}:count`,
    timeoutMs,
    rules,
  });
  let written = false;

  /** Store a rule's entries (all or nothing) and refuse them here at once; reject as the contract says. */
  async function revokeBy(entries: RuleEntry[], t: number): Promise<void> {
    if (list.unboundedFollower()) rulesNeedMaxLifetime('a TokenAuth without it follows this store');
    written = true;
    const answer = await writeRules(commands, keysOfRules, { maxRules, lifetime: rules.localLifetime() }, entries, t);
    rules.noteLifetime(answer.lifetime);
    if (answer.state === 'full') throw answer.error;
    rules.note(entries);
  }
  const receiverState = redisReceiverState(commands, prefix);

  return {
    follow: (report, options) => list.follow(report, options),
    rulesWritten: () => written,
    watch: (report) => list.watch(report),

    async revoke(target: RevocableClaims | string, maybeExp?: number) {
      const { jti, exp } = revocationOf(target, maybeExp);
      // Expired longer ago than any clockTolerance covers: nothing left to refuse.
      const horizon = Math.floor(now()) - REVOCATION_GRACE;
      if (!(exp > horizon)) return;
      try {
        await commands.script(REVOKE_SCRIPT, [listKey], [String(horizon), listKey, ...revocationArgs([[jti, exp]])]);
      } catch (err) {
        // The list changes on success only: a command that runs later publishes, and every instance notes it then.
        throw revokeFailed(err);
      }
      list.note(jti, exp);
    },

    ...ruleMethods(revokeBy, now, OWNER),

    claimOnce: (id, expiresAt, jkt) => replay.claimOnce(id, expiresAt, jkt),

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
      const reply = await commands.script(
        CLAIM,
        [verdictKey(key), `${verdictKey(key)}:lock`],
        [owner, millis(lockTtl)],
      );
      const [state, value] = Array.isArray(reply) ? reply.map(String) : [];
      if (state === 'verdict' && value !== undefined) return { state, value };
      if (state === 'mine' || state === 'busy') return { state };
      throw new Error('unexpected reply');
    },

    async releaseVerdict(key, owner, verdict) {
      const kept = verdict === undefined ? [] : [verdict.value, millis(verdict.ttl)];
      await commands.script(RELEASE, [verdictKey(key), `${verdictKey(key)}:lock`], [owner, ...kept]);
    },

    receiverState: () => receiverState,

    close() {
      list.close();
    },
  };
}
