// A Redis store's subject and session rules as each instance holds them (docs/fleet.md#subject-and-session-rules):
// loaded whole, page by page, beside the revoked jtis at each (re)connect, kept current by the same channel, this
// process's rule lifetime declared to the fleet, and rules Redis lost written back.
import { isObject } from '../base/values';
import { RULE_MARGIN } from '../verify/revocation-requests';
import { entryFrom, entryOf, ruleMember, RuleSet, type RuleEntry } from '../verify/rule-set';
import { luaScript, type BoundedCommands } from './bounded-commands';
import { writeRules, type RuleKeys } from './revoke-rules';

/** Raise the fleet's rule lifetime (KEYS[1]) to ARGV[1] when it is shorter; no expiry. */
const DECLARE = luaScript(`
local held = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tonumber(ARGV[1]) > held then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('PERSIST', KEYS[1])
return 1`);

/** Drop the rules past the fleet's lifetime (none while none was declared). ARGV: now, margin. */
const PRUNE_RULES = luaScript(`
local lifetime = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if lifetime > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[1]) - lifetime - tonumber(ARGV[2])))
end
return 1`);

/** An entry this long within its lifetime must be in Redis: clocks of a fleet may disagree by less. */
const LIVE_MARGIN = 10;
/**
 * Rules read per command while loading (ZSCAN's COUNT, a hint): a load of 100 000 rules in one reply outlasted the
 * store's `timeout` on a loaded machine, and was tried again and again; pages of this size each take milliseconds.
 */
const PAGE = 1000;
/** Most pages one load reads before it gives up and tries again later (a bound, far above maxRules / PAGE). */
const MAX_PAGES = 100_000;
/** Entries written back in one script when Redis lost some. */
const WRITE_BACK_BATCH = 200;

/** The rules one store holds in this process, and how they stay in step with Redis. */
export interface RedisRules {
  /** The rules held: what requests are checked against. */
  readonly set: RuleSet;
  /** A TokenAuth follows with this rule lifetime (seconds): the store keeps rules at least that long. */
  declare(lifetime: number): void;
  /** The longest lifetime this process's TokenAuths declared (0: none). */
  localLifetime(): number;
  /** The fleet's lifetime as Redis answered it (a write, a load): the store keeps rules that long too. */
  noteLifetime(lifetime: number): void;
  /** Entries this instance stored: refused here at once. */
  note(entries: readonly RuleEntry[]): void;
  /** A message of the channel: true when it was a rule (held now), false when it is none. */
  message(value: unknown): boolean;
  /**
   * Load every live rule (on the store's own connection, each page within the store's `timeout`); resolves with the
   * entries this instance held before the load and still must be in Redis, but that Redis no longer has. Rejects
   * when Redis does not answer.
   */
  load(commands: BoundedCommands, now: number): Promise<RuleEntry[]>;
  /** Write back entries Redis lost (best effort: the instance keeps refusing with them whatever happens). */
  writeBack(commands: BoundedCommands, missing: readonly RuleEntry[], now: number): void;
  /** Drop the entries past their lifetime here, and in Redis when some were; declare again if Redis has less. */
  sweep(commands: BoundedCommands, now: number): void;
}

/** The rules of one store under `keys`, bounded by `maxRules` when written. */
export function redisRules(keys: RuleKeys, maxRules: number): RedisRules {
  const set = new RuleSet();
  /** The fleet's lifetime as Redis last answered; this process's followers' longest. */
  let fleet = 0;
  let local = 0;
  const lifetime = () => Math.max(fleet, local);

  /** Make the fleet's lifetime at least this process's (best effort: retried at each sweep while Redis has less). */
  function declareToFleet(commands: BoundedCommands): void {
    if (local <= fleet) return;
    commands
      .script(DECLARE, [keys.lifetime], [String(local)])
      .then(() => {
        fleet = Math.max(fleet, local);
      })
      .catch(() => undefined);
  }

  return {
    set,
    declare(seconds) {
      local = Math.max(local, seconds);
    },
    localLifetime: () => local,
    noteLifetime(seconds) {
      if (seconds > fleet) fleet = seconds;
    },
    note(entries) {
      for (const entry of entries) set.note(entry);
    },
    message(value) {
      if (!isObject(value) || !('rule' in value)) return false;
      const entry = entryFrom(value.rule, value.before);
      if (entry !== undefined) set.note(entry);
      return true;
    },
    async load(commands, now) {
      // Entries held before the load was sent were written before it ran: each that is still live must be in it.
      const before = [...set.entries()];
      fleet = Math.max(fleet, Number(await commands.run(['GET', keys.lifetime])) || 0);
      const horizon = fleet > 0 ? now - fleet - RULE_MARGIN : -Infinity;
      const inRedis = new Set<string>();
      // ZSCAN returns every entry present from the first page to the last; what is written meanwhile is published.
      let cursor = '0';
      for (let page = 0; ; page++) {
        if (page === MAX_PAGES) throw new Error('the rules did not load within MAX_PAGES pages');
        const reply = await commands.run(['ZSCAN', keys.rules, cursor, 'COUNT', String(PAGE)]);
        const [next, found] = Array.isArray(reply) ? reply : [];
        const flat = Array.isArray(found) ? found.map(String) : [];
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const entry = entryOf(flat[i], Number(flat[i + 1]));
          if (entry === undefined || entry.before < horizon) continue;
          inRedis.add(flat[i]);
          set.note(entry);
        }
        cursor = String(next);
        if (cursor === '0' || next === undefined) break;
      }
      declareToFleet(commands);
      // Redis keeps an entry until before + the fleet's lifetime (+ margin): one that far from it must be there.
      const until = now + LIVE_MARGIN - fleet;
      return before.filter((entry) => (fleet === 0 || entry.before > until) && !inRedis.has(ruleMember(entry)));
    },
    writeBack(commands, missing, now) {
      for (let i = 0; i < missing.length; i += WRITE_BACK_BATCH) {
        const batch = missing.slice(i, i + WRITE_BACK_BATCH);
        writeRules(commands, keys, { maxRules, lifetime: local }, batch, now).catch(() => undefined);
      }
    },
    sweep(commands, now) {
      const held = lifetime();
      if (held > 0 && set.prune(now - held - RULE_MARGIN) > 0)
        commands.script(PRUNE_RULES, [keys.rules, keys.lifetime], [String(now), String(RULE_MARGIN)]).catch(() => {
          // a write no request waits for: the next sweep or rule write prunes again
        });
      declareToFleet(commands);
    },
  };
}
