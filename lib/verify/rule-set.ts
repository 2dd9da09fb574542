// The subject and session rules one process holds (docs/fleet.md#subject-and-session-rules): maps by issuer, then
// user or session, matched per request in two or three Map lookups (none while no rule is held), dropped once past
// their lifetime.

/**
 * The three kinds of entry a rule is stored as. `s`: a subject rule, keyed by `sub`. `x`: a session rule, keyed by
 * `sid`. `n`: the part of a session rule given a `sub` that refuses that subject's tokens without `sid`, keyed by
 * `sub`. A session rule with `sub` is two entries (`x` and `n`); every other rule is one.
 */
export type RuleKind = 's' | 'x' | 'n';

/** One entry: its kind, the issuer of the tokens it refuses, its key (`sub` or `sid`) and its `before`. */
export interface RuleEntry {
  readonly kind: RuleKind;
  readonly iss: string;
  readonly key: string;
  /** Seconds since the epoch: `s` and `n` refuse tokens whose `iat` is at or before it (or that have none). */
  readonly before: number;
}

/** The refusal reason of each kind of entry. */
export type RuleRefusal = 'subject-revoked' | 'session-revoked';

const KINDS: readonly RuleKind[] = ['s', 'x', 'n'];

/** How an entry is named in Redis and on its channel: a JSON array `[kind, iss, key]`. */
export function ruleMember(entry: Pick<RuleEntry, 'kind' | 'iss' | 'key'>): string {
  return JSON.stringify([entry.kind, entry.iss, entry.key]);
}

/** An entry read back from its member and `before`; undefined for anything else (never trusted to be well formed). */
export function entryOf(member: string, before: unknown): RuleEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(member);
  } catch {
    return undefined;
  }
  return entryFrom(value, before);
}

/** An entry from a parsed `[kind, iss, key]` and its `before`; undefined for anything else. */
export function entryFrom(value: unknown, before: unknown): RuleEntry | undefined {
  if (!Array.isArray(value) || value.length !== 3 || typeof before !== 'number' || !Number.isFinite(before))
    return undefined;
  const [kind, iss, key] = value as unknown[];
  if (!KINDS.includes(kind as RuleKind) || typeof iss !== 'string' || typeof key !== 'string') return undefined;
  return { kind: kind as RuleKind, iss, key, before };
}

/**
 * A copy of `text` that holds nothing else. A string read from JSON (a SET, a logout token, a message) may be a slice
 * of the whole text it came from, which would then stay in memory as long as the rule: 64 KiB per rule for a rule
 * read from a large SET. Exact for every string (lone surrogates too); rules are written rarely, never per request.
 */
function ownString(text: string): string {
  // eslint-disable-next-line no-control-regex -- Latin-1 is every code unit below U+0100
  return /^[\u0000-\u00ff]*$/.test(text)
    ? Buffer.from(text, 'latin1').toString('latin1')
    : Buffer.from(text, 'utf16le').toString('utf16le');
}

/** The rules of one user of an issuer: the `before` of its subject rule and of its session rules' sub, or -Infinity. */
class UserRules {
  s = -Infinity;
  n = -Infinity;
}

/**
 * The rules of one issuer: by `sub` (subject rules, and session rules given a `sub`), and by `sid`; each map made when
 * its first entry comes (a flood of rules, each of another issuer, costs one map per rule, not two).
 */
interface IssuerRules {
  bySub: Map<string, UserRules> | undefined;
  bySid: Map<string, number> | undefined;
}

/**
 * The rules held: by issuer, then `sub` or `sid` → the latest `before` written for that entry (a later `before`
 * refuses more and lasts longer, so it stands for every earlier one). One lookup finds a token's issuer, one its
 * user (both of its user's kinds at once), one its session: strings are the claims' own, so no new one is hashed.
 */
export class RuleSet {
  private readonly byIssuer = new Map<string, IssuerRules>();
  private count = 0;

  /** Entries held (a session rule with `sub` counts two). */
  get size(): number {
    return this.count;
  }

  /** Hold an entry; true when it is new or moves its `before` later. */
  note(entry: RuleEntry): boolean {
    let rules = this.byIssuer.get(entry.iss);
    if (rules === undefined) {
      rules = { bySub: undefined, bySid: undefined };
      this.byIssuer.set(ownString(entry.iss), rules);
    }
    if (entry.kind === 'x') {
      rules.bySid ??= new Map();
      const held = rules.bySid.get(entry.key);
      if (held !== undefined && held >= entry.before) return false;
      if (held !== undefined) rules.bySid.set(entry.key, entry.before);
      else {
        this.count++;
        rules.bySid.set(ownString(entry.key), entry.before);
      }
      return true;
    }
    rules.bySub ??= new Map();
    let user = rules.bySub.get(entry.key);
    if (user === undefined) {
      user = new UserRules();
      rules.bySub.set(ownString(entry.key), user);
    }
    const held = user[entry.kind];
    if (held >= entry.before) return false;
    if (held === -Infinity) this.count++;
    user[entry.kind] = entry.before;
    return true;
  }

  /** The `before` held for an entry's key, if any. */
  before(entry: Pick<RuleEntry, 'kind' | 'iss' | 'key'>): number | undefined {
    const rules = this.byIssuer.get(entry.iss);
    if (entry.kind === 'x') return rules?.bySid?.get(entry.key);
    const held = rules?.bySub?.get(entry.key)?.[entry.kind];
    return held === undefined || held === -Infinity ? undefined : held;
  }

  /**
   * Why a token's claims are refused at `now`, or undefined: by a subject rule of its `iss` and `sub` that its `iat`
   * does not postdate; by a session rule naming its `sid` (or, for an array, any string in it); or, for a token without a string `sid`, by a session
   * rule of its `sub` that its `iat` does not postdate. Only rules whose `before` + `lifetime` (the TokenAuth's
   * `maxLifetime` + `clockTolerance`) has not passed count. A token without `iat` is refused by the rules that
   * compare it.
   */
  refusal(claims: Readonly<Record<string, unknown>>, now: number, lifetime: number): RuleRefusal | undefined {
    if (this.count === 0) return undefined;
    const iss = claims.iss;
    if (typeof iss !== 'string') return undefined;
    const rules = this.byIssuer.get(iss);
    if (rules === undefined) return undefined;
    const from = now - lifetime;
    const sid = claims.sid;
    const sub = claims.sub;
    if (typeof sub === 'string' && rules.bySub !== undefined) {
      const user = rules.bySub.get(sub);
      if (user !== undefined) {
        // `!(iat > before)`: also true for a token without iat. An absent rule's -Infinity is never >= from.
        const iat = claims.iat as number;
        if (user.s >= from && !(iat > user.s)) return 'subject-revoked';
        if (typeof sid !== 'string' && user.n >= from && !(iat > user.n)) return 'session-revoked';
      }
    }
    if (rules.bySid === undefined) return undefined;
    if (typeof sid === 'string') {
      const before = rules.bySid.get(sid);
      if (before !== undefined && before >= from) return 'session-revoked';
    } else if (Array.isArray(sid)) {
      // An issuer's token naming several sessions (not OIDC's form, a string): refused when any of them is revoked.
      for (let i = 0; i < sid.length; i++) {
        const before = typeof sid[i] === 'string' ? rules.bySid.get(sid[i] as string) : undefined;
        if (before !== undefined && before >= from) return 'session-revoked';
      }
    }
    return undefined;
  }

  /** Drop every entry whose `before` is earlier than `horizon`; how many left. */
  prune(horizon: number): number {
    let dropped = 0;
    for (const [iss, rules] of this.byIssuer) {
      const { bySub, bySid } = rules;
      for (const [sid, before] of bySid ?? []) {
        if (before >= horizon) continue;
        bySid!.delete(sid);
        dropped++;
      }
      for (const [sub, user] of bySub ?? []) {
        for (const kind of ['s', 'n'] as const) {
          if (user[kind] === -Infinity || user[kind] >= horizon) continue;
          user[kind] = -Infinity;
          dropped++;
        }
        if (user.s === -Infinity && user.n === -Infinity) bySub!.delete(sub);
      }
      if (bySub?.size === 0) rules.bySub = undefined;
      if (bySid?.size === 0) rules.bySid = undefined;
      if (rules.bySub === undefined && rules.bySid === undefined) this.byIssuer.delete(iss);
    }
    this.count -= dropped;
    return dropped;
  }

  /** The earliest `before` held, or undefined when none is. */
  earliest(): number | undefined {
    let first: number | undefined;
    for (const entry of this.entries()) if (first === undefined || entry.before < first) first = entry.before;
    return first;
  }

  /** Every entry held. */
  *entries(): IterableIterator<RuleEntry> {
    for (const [iss, rules] of this.byIssuer) {
      for (const [key, user] of rules.bySub ?? []) {
        if (user.s !== -Infinity) yield { kind: 's', iss, key, before: user.s };
        if (user.n !== -Infinity) yield { kind: 'n', iss, key, before: user.n };
      }
      for (const [key, before] of rules.bySid ?? []) yield { kind: 'x', iss, key, before };
    }
  }
}
