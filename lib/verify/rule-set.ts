// The subject and session rules one process holds (docs/fleet.md#subject-and-session-rules): three maps by issuer,
// matched per request in a few Map lookups (none while no rule is held), dropped once past their lifetime.

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
 * The rules held, by kind, then issuer, then key → the latest `before` written for that key (a later `before` refuses
 * more and lasts longer, so it stands for every earlier one). Strings are the claims' own: a lookup hashes nothing new.
 */
export class RuleSet {
  private readonly byKind: Record<RuleKind, Map<string, Map<string, number>>> = {
    s: new Map(),
    x: new Map(),
    n: new Map(),
  };
  private count = 0;

  /** Entries held (a session rule with `sub` counts two). */
  get size(): number {
    return this.count;
  }

  /** Hold an entry; true when it is new or moves its key's `before` later. */
  note(entry: RuleEntry): boolean {
    const byIssuer = this.byKind[entry.kind];
    let keys = byIssuer.get(entry.iss);
    if (keys === undefined) {
      keys = new Map();
      byIssuer.set(entry.iss, keys);
    }
    const held = keys.get(entry.key);
    if (held !== undefined && held >= entry.before) return false;
    if (held === undefined) this.count++;
    keys.set(entry.key, entry.before);
    return true;
  }

  /** The `before` held for an entry's key, if any. */
  before(entry: Pick<RuleEntry, 'kind' | 'iss' | 'key'>): number | undefined {
    return this.byKind[entry.kind].get(entry.iss)?.get(entry.key);
  }

  /**
   * Why a token's claims are refused at `now`, or undefined: by a subject rule of its `iss` and `sub` that its `iat`
   * does not postdate; by a session rule naming its `sid`; or, for a token without a string `sid`, by a session
   * rule of its `sub`. Only rules whose `before` + `lifetime` (the TokenAuth's `maxLifetime` + `clockTolerance`) has
   * not passed count. A token without `iat` is refused by the rules that compare it.
   */
  refusal(claims: Readonly<Record<string, unknown>>, now: number, lifetime: number): RuleRefusal | undefined {
    if (this.count === 0) return undefined;
    const iss = claims.iss;
    if (typeof iss !== 'string') return undefined;
    const sub = claims.sub;
    const iat = claims.iat as number | undefined;
    const from = now - lifetime;
    if (typeof sub === 'string') {
      const before = this.byKind.s.get(iss)?.get(sub);
      // `!(iat > before)`: also true for a token without iat.
      if (before !== undefined && before >= from && !(iat! > before)) return 'subject-revoked';
    }
    const sid = claims.sid;
    if (typeof sid === 'string') {
      const before = this.byKind.x.get(iss)?.get(sid);
      if (before !== undefined && before >= from) return 'session-revoked';
    } else if (typeof sub === 'string') {
      const before = this.byKind.n.get(iss)?.get(sub);
      if (before !== undefined && before >= from && !(iat! > before)) return 'session-revoked';
    }
    return undefined;
  }

  /** Drop every entry whose `before` is earlier than `horizon`; how many left. */
  prune(horizon: number): number {
    let dropped = 0;
    for (const byIssuer of Object.values(this.byKind)) {
      for (const [iss, keys] of byIssuer) {
        for (const [key, before] of keys) {
          if (before >= horizon) continue;
          keys.delete(key);
          dropped++;
        }
        if (keys.size === 0) byIssuer.delete(iss);
      }
    }
    this.count -= dropped;
    return dropped;
  }

  /** The earliest `before` held, or undefined when none is. */
  earliest(): number | undefined {
    let first: number | undefined;
    for (const byIssuer of Object.values(this.byKind))
      for (const keys of byIssuer.values())
        for (const before of keys.values()) if (first === undefined || before < first) first = before;
    return first;
  }

  /** Every entry held. */
  *entries(): IterableIterator<RuleEntry> {
    for (const kind of KINDS)
      for (const [iss, keys] of this.byKind[kind]) for (const [key, before] of keys) yield { kind, iss, key, before };
  }
}
