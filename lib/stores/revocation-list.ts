// A Redis store's revocation list as each instance holds it: loaded whole, on a connection of the store's own, after
// every (re)connect of its pub/sub connection, and kept current by pub/sub; and what a load tells of Redis: a list
// that lost revocations this instance holds, an eviction policy that can drop it.
import { TokenAuthError } from '../base/errors';
import { REVOCATION_GRACE, type RevocationList, type RevocationStats } from '../verify/revocation';
import { boundedCommands, luaScript, type BoundedCommands } from './bounded-commands';
import type { OwnConnection, RedisConnection, Subscriber } from './redis-client';
import { REVOKE_SCRIPT, revocationArgs } from './revoke';

/** What the list needs of its store. */
export interface RevocationListConfig {
  redis: RedisConnection;
  /** The sorted set, and the channel of the same name. */
  listKey: string;
  /** Any key of the DPoP proof ids, so that a store used for DPoP alone reads the policy of their node. */
  replayKey: string;
  timeoutMs: number;
}

/** The list, its followers and the reports they get. */
export interface RedisRevocationList {
  /** Start keeping the list (the first follower starts it); `report` gets its outages and warnings. */
  follow(report: (err: TokenAuthError) => void): RevocationList;
  /** Report warnings about Redis (its eviction policy) to `report`, without keeping the list. */
  watch(report: (err: TokenAuthError) => void): () => void;
  /** A revocation this instance stored: refused here at once. */
  note(jti: string, exp: number): void;
  close(): void;
}

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

/** Redis's `maxmemory-policy` on the node of KEYS[1], or '' where INFO is refused. */
const POLICY = luaScript(
  `
local memory = redis.pcall('INFO', 'memory')
if type(memory) ~= 'string' then return '' end
return string.match(memory, 'maxmemory_policy:([%w%-]+)') or ''`,
  true,
);

/** How often the local list drops entries whose token has expired. */
const SWEEP_MS = 5000;
/** Wait between two tries to load the list while it cannot be loaded. */
const RETRY_MS = 250;
/** Wait before loading again after Redis lost revocations, or while it cannot vouch for the list (allkeys-*). */
const RECHECK_MS = 5000;
/** An entry this long before its `exp` must be in Redis: clocks of a fleet may disagree by less. */
const LIVE_MARGIN = 10;
/** Revocations written back in one script when Redis lost some. */
const WRITE_BACK_BATCH = 200;

/** The store's own commands: the loads, reports and write-backs of the list, which app commands never delay. */
const OWN_BOUNDS = { maxPending: 16, maxPendingBytes: 1024 * 1024 };

const unavailable = (reason: string, hint?: string) =>
  new TokenAuthError('verification_unavailable', { reason, retryAfter: 1, hint });

/** The list of one store. */
export function redisRevocationList(config: RevocationListConfig): RedisRevocationList {
  const { redis, listKey, replayKey } = config;
  const revoked = new Map<string, number>();
  const followers = new Set<(err: TokenAuthError) => void>();
  let own: { connection: OwnConnection; commands: BoundedCommands } | undefined;
  let subscriber: Subscriber | undefined;
  let loaded = false;
  let available = false;
  let outageReported = false;
  let lossReported = false;
  let closed = false;
  let generation = 0;
  let sweeper: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;

  const now = () => Date.now() / 1000;
  const report = (err: TokenAuthError) => {
    if (!closed) for (const follower of followers) follower(err);
  };
  /** Seconds before which an entry's `exp` leaves: a token is accepted up to its `exp` + `clockTolerance`. */
  const horizon = () => Math.floor(now()) - REVOCATION_GRACE;
  const note = (jti: string, exp: number) => {
    if (!(exp > horizon())) return;
    const held = revoked.get(jti);
    if (held === undefined || held < exp) revoked.set(jti, exp);
  };

  /** The connection of the store's own, opened once; at each (re)connect it reads the eviction policy. */
  function ownCommands(): BoundedCommands {
    if (own === undefined) {
      const connection = redis.own(() => void checkPolicy());
      own = { connection, commands: boundedCommands(connection, { timeoutMs: config.timeoutMs, ...OWN_BOUNDS }) };
    }
    return own.commands;
  }

  /** Any policy but `noeviction` lets Redis drop proof ids and verdicts, and under `allkeys-*` the list itself. */
  async function checkPolicy(): Promise<void> {
    let policy: unknown;
    try {
      policy = await ownCommands().script(POLICY, [subscriber === undefined ? replayKey : listKey], []);
    } catch {
      return; // unreadable: say nothing
    }
    if (typeof policy !== 'string' || policy === '' || policy === 'noeviction') return;
    report(
      unavailable(
        'store-eviction-policy',
        `Redis maxmemory-policy is ${policy}: it may evict DPoP proof ids (a proof could be replayed) and, under allkeys-*, the revocation list; set it to noeviction (docs/fleet.md)`,
      ),
    );
  }

  function outage(): void {
    available = false;
    if (outageReported || closed) return;
    // Once per outage, not per request: the requests themselves are served from the list held.
    outageReported = true;
    report(unavailable('store-unavailable'));
  }

  /** Revocations Redis lost: reported once, kept here, and written back so that instances that start later get them. */
  function lost(hint: string, missing: Array<[string, number]>): void {
    available = false;
    if (!lossReported) report(unavailable('revocation-set-missing', hint));
    lossReported = true;
    const commands = ownCommands();
    for (let i = 0; i < missing.length; i += WRITE_BACK_BATCH) {
      const args = revocationArgs(missing.slice(i, i + WRITE_BACK_BATCH));
      commands.script(REVOKE_SCRIPT, [listKey], [String(horizon()), listKey, ...args]).catch(() => undefined);
    }
  }

  function later(ms: number): void {
    retry = setTimeout(() => void resync(), ms);
    retry.unref();
  }

  /** After every (re)connect: subscribe, then load the whole list, so that nothing revoked meanwhile is missed. */
  async function resync(): Promise<void> {
    const attempt = ++generation;
    clearTimeout(retry);
    let reply: unknown;
    // Entries held before the load was sent were written before it ran: each must be in its answer.
    let before: Array<[string, number]> = [];
    try {
      await subscriber?.subscribe();
      before = [...revoked];
      reply = await ownCommands().script(LOAD, [listKey], [String(horizon())]);
    } catch {
      if (attempt !== generation || closed) return;
      outage();
      later(RETRY_MS);
      return;
    }
    if (attempt !== generation || closed) return;
    const [live, policy, evicted] = Array.isArray(reply) ? reply : [];
    const flat = Array.isArray(live) ? live.map(String) : [];
    const inRedis = new Set<string>();
    for (let i = 0; i + 1 < flat.length; i += 2) {
      inRedis.add(flat[i]);
      note(flat[i], Number(flat[i + 1]));
    }
    const soon = now() + LIVE_MARGIN;
    const missing = before.filter(([jti, exp]) => exp > soon && !inRedis.has(jti));
    if (missing.length > 0) {
      lost(`${missing.length} revocations this instance holds are gone from Redis; written back`, missing);
      later(RECHECK_MS); // written back behind this load, on the same connection: the next load finds them
      return;
    }
    // Under allkeys-* Redis may have evicted the list whole, and an empty answer proves nothing: not loaded.
    if (!loaded && String(policy).startsWith('allkeys-') && Number(evicted) > 0) {
      lost(
        `Redis evicted ${String(evicted)} keys under maxmemory-policy ${String(policy)}: the revocation list may be incomplete; set noeviction, revoke again what must stay revoked, then CONFIG RESETSTAT`,
        [],
      );
      later(RECHECK_MS);
      return;
    }
    loaded = true;
    available = true;
    outageReported = false;
    lossReported = false;
  }

  function sweep(): void {
    const t = horizon();
    let dropped = false;
    for (const [jti, exp] of revoked) {
      if (exp > t) continue;
      revoked.delete(jti);
      dropped = true;
    }
    // The set has no expiry: what has left here leaves Redis too (a write no request waits for).
    if (dropped)
      ownCommands()
        .run(['ZREMRANGEBYSCORE', listKey, '-inf', String(t)])
        .catch(() => undefined);
  }

  function start(): void {
    if (subscriber !== undefined || closed) return;
    ownCommands();
    subscriber = redis.subscriber(listKey, {
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
      const t = horizon();
      for (const [jti, exp] of revoked) if (!(exp > t)) revoked.delete(jti);
      return { loaded, available, size: revoked.size };
    },
  };

  return {
    follow(follower) {
      followers.add(follower);
      start();
      return { ...list, unfollow: () => void followers.delete(follower) };
    },
    watch(follower) {
      followers.add(follower);
      ownCommands();
      return () => void followers.delete(follower);
    },
    note,
    close() {
      closed = true;
      generation++;
      clearTimeout(retry);
      clearInterval(sweeper);
      subscriber?.close();
      own?.connection.close();
      followers.clear();
    },
  };
}
