// The revocation store of one process without Redis (`createMemoryRevocationStore`): revoked `jti`s and subject and
// session rules, with the rules and bounds of the Redis store (docs/fleet.md#subject-and-session-rules).
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import {
  REVOCATION_GRACE,
  type RevocationList,
  type RevocationRules,
  type RevocationStats,
  type RevocationStore,
} from './revocation';
import {
  resolveMaxRules,
  revocationOf,
  RULE_MARGIN,
  rulesFull,
  ruleMethods,
  rulesNeedMaxLifetime,
  type RevocableClaims,
} from './revocation-requests';
import { RuleSet, type RuleEntry } from './rule-set';

/** Options of `createMemoryRevocationStore`. */
export interface MemoryRevocationStoreOptions {
  /**
   * Most subject and session rule entries held (default 100 000; a session rule with `sub` takes two). A rule that
   * would pass it is rejected (reason `revocation-store-full`), never stored by dropping another.
   */
  maxRules?: number;
  /** Current time in seconds (default: the system clock). */
  clock?: () => number;
}

/** A revocation store for one process: `revocation: store`, then `revoke()`, `revokeSubject()`, `revokeSession()`. */
export interface MemoryRevocationStore extends RevocationStore, RevocationRules {
  /**
   * Revoke a token until its `exp` + 300 s, given its verified claims (a TypeError when they hold no `jti`) or its
   * `jti` and `exp` (seconds), as the Redis store's `revoke()` does; resolves once every follower refuses it.
   */
  revoke(claims: RevocableClaims): Promise<void>;
  revoke(jti: string, exp: number): Promise<void>;
  /** Whether `revokeSubject` or `revokeSession` was called on this store. */
  rulesWritten(): boolean;
}

const OPTIONS: FieldList<MemoryRevocationStoreOptions> = { maxRules: true, clock: true };
const OWNER = 'createMemoryRevocationStore';
/** Seconds between two sweeps of what has expired (at a write, never per request). */
const SWEEP_EVERY = 5;

/**
 * Create the store of one process. Every TokenAuth that follows it (`revocation: store`) refuses what it holds at
 * once; rules need `maxLifetime` on each of them, as with Redis. A rule lasts until its `before` + the longest
 * `maxLifetime` + `clockTolerance` of the TokenAuths that followed it (kept while none has).
 */
export function createMemoryRevocationStore(opts: MemoryRevocationStoreOptions = {}): MemoryRevocationStore {
  if (!isObject(opts)) optionError('', 'createMemoryRevocationStore expects an options object');
  knownFields(opts, OPTIONS, '', OWNER);
  const maxRules = resolveMaxRules(opts.maxRules, OWNER);
  if (opts.clock !== undefined && typeof opts.clock !== 'function')
    optionError('clock', 'createMemoryRevocationStore option "clock" must be a function returning seconds');
  const clock: () => number = (opts.clock as (() => number) | undefined) ?? (() => Date.now() / 1000);
  const revoked = new Map<string, number>();
  const rules = new RuleSet();
  /** The longest rule lifetime a follower declared (0: none yet, and rules are kept). */
  let lifetime = 0;
  /** Followers without a rule lifetime (no `maxLifetime`), now. */
  let unbounded = 0;
  let written = false;
  let sweptAt = -Infinity;

  function sweep(now: number, always = false): void {
    if (!always && now - sweptAt < SWEEP_EVERY) return;
    sweptAt = now;
    const horizon = Math.floor(now) - REVOCATION_GRACE;
    for (const [jti, exp] of revoked) if (!(exp > horizon)) revoked.delete(jti);
    if (lifetime > 0) rules.prune(now - lifetime - RULE_MARGIN);
  }

  /** Hold a rule's entries, all or none: none when they would make more than maxRules. */
  async function revokeBy(entries: RuleEntry[], now: number): Promise<void> {
    if (unbounded > 0) rulesNeedMaxLifetime('a TokenAuth without it follows this store');
    written = true;
    sweep(now);
    const live = lifetime > 0 ? entries.filter((entry) => entry.before >= now - lifetime - RULE_MARGIN) : entries;
    const fresh = () => live.filter((entry) => rules.before(entry) === undefined).length;
    if (rules.size + fresh() > maxRules) {
      sweep(now, true);
      if (rules.size + fresh() > maxRules) throw rulesFull(rules.earliest(), lifetime, now);
    }
    for (const entry of live) rules.note(entry);
  }

  const stats = (): RevocationStats => {
    sweep(clock(), true);
    return { loaded: true, available: true, size: revoked.size, rules: rules.size };
  };

  return {
    follow(_report, options = {}) {
      const own = options.ruleLifetime;
      if (own === undefined) unbounded++;
      else lifetime = Math.max(lifetime, own);
      const ruleLifetime = own ?? Infinity;
      let following = true;
      const list: RevocationList = {
        isRevoked(jti, at) {
          const exp = revoked.get(jti);
          return exp !== undefined && exp > at;
        },
        ruleRefusal: (claims, at) => rules.refusal(claims, at, ruleLifetime),
        stats,
        unfollow() {
          if (following && own === undefined) unbounded--;
          following = false;
        },
      };
      return list;
    },
    rulesWritten: () => written,

    async revoke(target: RevocableClaims | string, maybeExp?: number) {
      const { jti, exp } = revocationOf(target, maybeExp, OWNER);
      const now = clock();
      // Expired longer ago than any clockTolerance covers: nothing left to refuse.
      if (!(exp > Math.floor(now) - REVOCATION_GRACE)) return;
      const held = revoked.get(jti);
      if (held === undefined || held < exp) revoked.set(jti, exp);
      sweep(now);
    },

    ...ruleMethods(revokeBy, clock, OWNER),
  };
}
