// A Redis store's revoked `jti`s as each instance holds them: loaded whole at each (re)connect with what the load
// tells of Redis (its eviction policy, keys it evicted), kept current by the revocation channel, dropped past their
// token's `exp`, and revocations Redis lost written back.
import { REVOCATION_GRACE } from '../verify/revocation';
import { luaScript, type BoundedCommands } from './bounded-commands';
import { REVOKE_SCRIPT, revocationArgs } from './revoke';

/**
 * The live part of the list as a flat array (member, score, …), then Redis's `maxmemory-policy` and `evicted_keys`
 * ('' where INFO is refused). Read only, so it runs while writes are paused (a manual failover).
 */
const LOAD = luaScript(
  `
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES')
local policy, evicted = '', ''
local memory = redis.pcall('INFO', 'memory')
if type(memory) == 'string' then policy = string.match(memory, 'maxmemory_policy:([%w%-]+)') or '' end
local stats = redis.pcall('INFO', 'stats')
if type(stats) == 'string' then evicted = string.match(stats, 'evicted_keys:(%d+)') or '' end
return {live, policy, evicted}`,
  true,
);

/** An entry this long before its `exp` must be in Redis: clocks of a fleet may disagree by less. */
const LIVE_MARGIN = 10;
/** Revocations written back in one script when Redis lost some. */
const WRITE_BACK_BATCH = 200;

/** What one load found. */
export interface JtiLoad {
  /** Revocations this instance held before the load, still live, that Redis no longer has. */
  missing: Array<[jti: string, exp: number]>;
  /** Redis's `maxmemory-policy` and `evicted_keys` ('' where INFO is refused). */
  policy: string;
  evicted: string;
}

/** The revoked `jti`s one store holds in this process. */
export interface RedisJtis {
  /** Whether `jti` is revoked at `at` (its token's `exp` later). */
  isRevoked(jti: string, at: number): boolean;
  /** A revocation stored (here or by another instance): refused here at once. */
  note(jti: string, exp: number): void;
  /** A message of the channel: true when it was a revocation (held now). */
  message(value: unknown): boolean;
  /** Load the live list on the store's own connection; rejects when Redis does not answer. */
  load(commands: BoundedCommands): Promise<JtiLoad>;
  /** Write back revocations Redis lost (best effort: this instance keeps refusing them). */
  writeBack(commands: BoundedCommands, missing: ReadonlyArray<[string, number]>): void;
  /** Drop the entries past their token's `exp` + REVOCATION_GRACE here, and in Redis when some were. */
  sweep(commands: BoundedCommands): void;
  /** Entries held now (those past their time dropped first). */
  size(): number;
}

/** The revoked `jti`s under `listKey` (a sorted set, and a channel of the same name). */
export function redisJtis(listKey: string): RedisJtis {
  const revoked = new Map<string, number>();
  const now = () => Date.now() / 1000;
  /** Seconds before which an entry's `exp` leaves: a token is accepted up to its `exp` + `clockTolerance`. */
  const horizon = () => Math.floor(now()) - REVOCATION_GRACE;
  const note = (jti: string, exp: number) => {
    if (!(exp > horizon())) return;
    const held = revoked.get(jti);
    if (held === undefined || held < exp) revoked.set(jti, exp);
  };
  const drop = (t: number) => {
    let dropped = false;
    for (const [jti, exp] of revoked) {
      if (exp > t) continue;
      revoked.delete(jti);
      dropped = true;
    }
    return dropped;
  };

  return {
    isRevoked(jti, at) {
      const exp = revoked.get(jti);
      return exp !== undefined && exp > at;
    },
    note,
    message(value) {
      if (!Array.isArray(value)) return false;
      if (typeof value[0] === 'string' && typeof value[1] === 'number') note(value[0], value[1]);
      return true;
    },
    async load(commands) {
      // Entries held before the load was sent were written before it ran: each must be in its answer.
      const before = [...revoked];
      const reply = await commands.script(LOAD, [listKey], [String(horizon())]);
      const [live, policy, evicted] = Array.isArray(reply) ? reply : [];
      const flat = Array.isArray(live) ? live.map(String) : [];
      const inRedis = new Set<string>();
      for (let i = 0; i + 1 < flat.length; i += 2) {
        inRedis.add(flat[i]);
        note(flat[i], Number(flat[i + 1]));
      }
      const soon = now() + LIVE_MARGIN;
      const missing = before.filter(([jti, exp]) => exp > soon && !inRedis.has(jti));
      return { missing, policy: String(policy), evicted: String(evicted) };
    },
    writeBack(commands, missing) {
      for (let i = 0; i < missing.length; i += WRITE_BACK_BATCH) {
        const args = revocationArgs(missing.slice(i, i + WRITE_BACK_BATCH));
        commands.script(REVOKE_SCRIPT, [listKey], [String(horizon()), listKey, ...args]).catch(() => undefined);
      }
    },
    sweep(commands) {
      const t = horizon();
      // The set has no expiry: what has left here leaves Redis too (a write no request waits for).
      if (drop(t))
        commands.run(['ZREMRANGEBYSCORE', listKey, '-inf', String(t)]).catch(() => {
          // the next sweep or revocation drops them
        });
    },
    size() {
      drop(horizon());
      return revoked.size;
    },
  };
}
