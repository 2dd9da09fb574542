// A Redis store's revocations as each instance holds them — revoked jtis (jti-list.ts) and subject and session rules
// (rule-list.ts) — loaded whole, on a connection of the store's own, after every (re)connect of its pub/sub
// connection, and kept current by pub/sub; and what a load tells of Redis: a list that lost revocations, an
// eviction policy that can drop it.
import { TokenAuthError } from '../base/errors';
import type { FollowOptions, RevocationList, RevocationStats } from '../verify/revocation';
import { boundedCommands, luaScript, type BoundedCommands } from './bounded-commands';
import { redisJtis } from './jti-list';
import type { OwnConnection, RedisConnection, Subscriber } from './redis-client';
import type { RedisRules } from './rule-list';

/** What the list needs of its store. */
export interface RevocationListConfig {
  redis: RedisConnection;
  /** The sorted set, and the channel of the same name. */
  listKey: string;
  /** Any key of the DPoP proof ids, so that a store used for DPoP alone reads the policy of their node. */
  replayKey: string;
  timeoutMs: number;
  /** The store's subject and session rules, loaded and kept current beside the jtis. */
  rules: RedisRules;
}

/** The list, its followers and the reports they get. */
export interface RedisRevocationList {
  /** Start keeping the list (the first follower starts it); `report` gets its outages and warnings. */
  follow(report: (err: TokenAuthError) => void, options?: FollowOptions): RevocationList;
  /** Report warnings about Redis (its eviction policy) to `report`, without keeping the list. */
  watch(report: (err: TokenAuthError) => void): () => void;
  /** A revocation this instance stored: refused here at once. */
  note(jti: string, exp: number): void;
  /** Whether a TokenAuth without a rule lifetime (no `maxLifetime`) follows the list now. */
  unboundedFollower(): boolean;
  close(): void;
}

/** Redis's `maxmemory-policy` on the node of KEYS[1], or '' where INFO is refused. */
const POLICY = luaScript(
  `
local memory = redis.pcall('INFO', 'memory')
if type(memory) ~= 'string' then return '' end
return string.match(memory, 'maxmemory_policy:([%w%-]+)') or ''`,
  true,
);

/** How often the local list drops entries whose token has expired, and rules past their lifetime. */
const SWEEP_MS = 5000;
/** Wait between two tries to load the list while it cannot be loaded. */
const RETRY_MS = 250;
/** Wait before loading again after Redis lost revocations, or while it cannot vouch for the list (allkeys-*). */
const RECHECK_MS = 5000;

/** The store's own commands: the loads, reports and write-backs of the list, which app commands never delay. */
const OWN_BOUNDS = { maxPending: 16, maxPendingBytes: 1024 * 1024 };

const unavailable = (reason: string, hint?: string) =>
  new TokenAuthError('verification_unavailable', { reason, retryAfter: 1, hint });

/** Who hears the list's reports: a TokenAuth (with its rule lifetime, if any), or a watcher of the policy only. */
interface Follower {
  readonly follows: boolean;
  readonly lifetime: number | undefined;
  warned: boolean;
}

/** The list of one store. */
export function redisRevocationList(config: RevocationListConfig): RedisRevocationList {
  const { redis, listKey, replayKey, rules } = config;
  const jtis = redisJtis(listKey);
  const followers = new Map<(err: TokenAuthError) => void, Follower>();
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
    if (!closed) for (const follower of followers.keys()) follower(err);
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

  /** Rules held while a TokenAuth without `maxLifetime` follows: told once to each such follower. */
  function warnUnbounded(): void {
    if (rules.set.size === 0 || closed) return;
    for (const [hear, follower] of followers) {
      if (!follower.follows || follower.lifetime !== undefined || follower.warned) continue;
      follower.warned = true;
      hear(
        unavailable(
          'revocation-rules-unbounded',
          'the store holds subject or session rules and this TokenAuth has no option "maxLifetime": it applies them while they last, but Redis may drop a rule while this TokenAuth still accepts an older, longer-lived token; set maxLifetime (docs/fleet.md)',
        ),
      );
    }
  }

  function outage(): void {
    available = false;
    if (outageReported || closed) return;
    // Once per outage, not per request: the requests themselves are served from the list held.
    outageReported = true;
    report(unavailable('store-unavailable'));
  }

  /** Revocations Redis lost: reported once, kept here, and written back so that instances that start later get them. */
  function lost(hint: string): void {
    available = false;
    if (!lossReported) report(unavailable('revocation-set-missing', hint));
    lossReported = true;
  }

  function later(ms: number): void {
    retry = setTimeout(() => void resync(), ms);
    retry.unref();
  }

  /** After every (re)connect: subscribe, then load the whole list, so that nothing revoked meanwhile is missed. */
  async function resync(): Promise<void> {
    const attempt = ++generation;
    clearTimeout(retry);
    let loads: [Awaited<ReturnType<typeof jtis.load>>, Awaited<ReturnType<typeof rules.load>>];
    try {
      await subscriber?.subscribe();
      const commands = ownCommands();
      loads = await Promise.all([jtis.load(commands), rules.load(commands, now())]);
    } catch {
      if (attempt !== generation || closed) return;
      outage();
      later(RETRY_MS);
      return;
    }
    if (attempt !== generation || closed) return;
    const [{ missing, policy, evicted }, missingRules] = loads;
    warnUnbounded();
    if (missing.length > 0 || missingRules.length > 0) {
      const what =
        missingRules.length === 0
          ? `${missing.length} revocations`
          : `${missing.length} revocations and ${missingRules.length} rule entries`;
      lost(`${what} this instance holds are gone from Redis; written back`);
      jtis.writeBack(ownCommands(), missing);
      rules.writeBack(ownCommands(), missingRules, now());
      later(RECHECK_MS); // written back behind this load, on the same connection: the next load finds them
      return;
    }
    // Under allkeys-* Redis may have evicted the list whole, and an empty answer proves nothing: not loaded.
    if (!loaded && policy.startsWith('allkeys-') && Number(evicted) > 0) {
      lost(
        `Redis evicted ${evicted} keys under maxmemory-policy ${policy}: the revocation list may be incomplete; set noeviction, revoke again what must stay revoked, then CONFIG RESETSTAT`,
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
    jtis.sweep(ownCommands());
    rules.sweep(ownCommands(), now());
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
        if (!jtis.message(value) && rules.message(value)) warnUnbounded();
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

  const stats = (): RevocationStats => ({ loaded, available, size: jtis.size(), rules: rules.set.size });

  return {
    follow(hear, options = {}) {
      const lifetime = options.ruleLifetime;
      followers.set(hear, { follows: true, lifetime, warned: false });
      if (lifetime !== undefined) rules.declare(lifetime);
      start();
      if (loaded) {
        warnUnbounded();
        rules.sweep(ownCommands(), now()); // declares this lifetime to the fleet now, not at the next sweep
      }
      // A lifetime is the rules' rule: each follower matches with its own (Infinity: while the store holds them).
      const ruleLifetime = lifetime ?? Infinity;
      return {
        isRevoked: (jti, at) => (loaded ? jtis.isRevoked(jti, at) : undefined),
        ruleRefusal: (claims, at) => rules.set.refusal(claims, at, ruleLifetime),
        stats,
        unfollow: () => void followers.delete(hear),
      };
    },
    watch(hear) {
      followers.set(hear, { follows: false, lifetime: undefined, warned: false });
      ownCommands();
      return () => void followers.delete(hear);
    },
    note: (jti, exp) => jtis.note(jti, exp),
    unboundedFollower() {
      for (const follower of followers.values()) if (follower.follows && follower.lifetime === undefined) return true;
      return false;
    },
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
