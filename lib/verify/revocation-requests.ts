// What callers ask of a revocation store — `revoke()` by `jti`, `revokeSubject`, `revokeSession` — with their
// arguments checked the same way for every store, the bounds rules share, and what a store answers when it is full.
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { positiveInteger } from '../base/option-checks';
import { isObject } from '../base/values';
import type { RuleEntry } from './rule-set';

/** Rule entries a store holds at most unless told otherwise (`maxRules`). */
export const DEFAULT_MAX_RULES = 100_000;
/** Longest `iss`, `sub` or `sid` a rule names (characters): OpenID Connect bounds `sub` at 255. */
export const MAX_RULE_VALUE = 256;
/** How far ahead of now a rule's `before` may lie (seconds): a transmitter's clock, a little ahead. */
export const MAX_FUTURE_BEFORE = 300;
/** How long a store keeps a rule past its lifetime (seconds): the clocks of a fleet may disagree by less. */
export const RULE_MARGIN = 10;
/** The longest `Retry-After` a full store answers (seconds), whatever frees room later. */
const MAX_RETRY_AFTER = 300;

/** A TypeError naming the store whose method was misused. */
const misuse = (owner: string, message: string) => new TypeError(`${owner}: ${message}`);

/**
 * The latest `exp` a revocation is held until: 9999-12-31T23:59:59Z. A later `exp` (a token that claims to live
 * longer, `Number.MAX_VALUE` or `Infinity` for "forever") is held until then: an entry Redis can still expire, and
 * an integer that Lua and `EXPIREAT` handle exactly (`1e17` made the script fail after its write).
 */
export const LATEST_REVOCATION = 253_402_300_799;

/** What `revoke(claims)` needs of a token's claims: its `exp`, and a `jti` (checked when called). */
export interface RevocableClaims {
  readonly jti?: unknown;
  readonly exp: number;
}

/**
 * The `jti` and `exp` (whole seconds, at most LATEST_REVOCATION) of a revocation, from `revoke(claims)` or
 * `revoke(jti, exp)`. A TypeError for a missing or empty `jti` and for an `exp` that is not a number (NaN
 * included); a fractional `exp` is rounded up.
 */
export function revocationOf(target: unknown, maybeExp: unknown, owner: string): { jti: string; exp: number } {
  let jti: unknown = target;
  let exp: unknown = maybeExp;
  if (typeof target === 'object' && target !== null && maybeExp === undefined) {
    ({ jti, exp } = target as { jti?: unknown; exp?: unknown });
    if (typeof jti !== 'string' || jti === '') {
      throw misuse(
        owner,
        "revoke(claims) needs claims with a string jti: this token has none, so it cannot be revoked by jti (require one with requiredClaims: ['jti'], or refuse such tokens with isRevoked)",
      );
    }
  }
  if (typeof jti !== 'string' || jti === '') throw misuse(owner, 'revoke(jti, exp) needs a non-empty jti');
  if (typeof exp !== 'number' || Number.isNaN(exp))
    throw misuse(owner, "revoke(jti, exp) needs exp, the token's expiry in seconds since the epoch");
  return { jti, exp: exp > LATEST_REVOCATION ? LATEST_REVOCATION : Math.ceil(exp) };
}

/** A non-empty string of at most MAX_RULE_VALUE characters, or a TypeError naming it. */
function ruleValue(value: unknown, call: string, name: string, owner: string): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_RULE_VALUE)
    throw misuse(owner, `${call} needs ${name}, a non-empty string of at most ${MAX_RULE_VALUE} characters`);
  return value;
}

/** The target object with nothing but `fields`, or a TypeError. */
function targetOf(target: unknown, call: string, fields: readonly string[], owner: string): Record<string, unknown> {
  if (!isObject(target)) throw misuse(owner, `${call} needs an object`);
  const extra = Object.keys(target).find((name) => !fields.includes(name));
  if (extra !== undefined)
    throw misuse(
      owner,
      `${call} takes no field "${extra}"${extra === 'sid' ? ': a session is revoked with revokeSession' : ''}`,
    );
  return target;
}

/**
 * `before` in seconds since the epoch: a number (a JWT NumericDate) or a Date, now when absent. A TypeError when it is
 * neither, negative, or more than MAX_FUTURE_BEFORE ahead of `now` (a rule that far ahead would refuse tokens not yet
 * issued, and outlive its purpose).
 */
function beforeOf(options: unknown, now: number, call: string, owner: string): number {
  if (options === undefined) return now;
  if (!isObject(options)) throw misuse(owner, `${call}'s second argument must be { before }`);
  const extra = Object.keys(options).find((name) => name !== 'before');
  if (extra !== undefined) throw misuse(owner, `${call} takes no option "${extra}"`);
  const { before } = options;
  if (before === undefined) return now;
  const seconds = before instanceof Date ? before.getTime() / 1000 : before;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0)
    throw misuse(owner, `${call} needs before in seconds since the epoch (a JWT NumericDate) or a Date`);
  if (seconds > now + MAX_FUTURE_BEFORE)
    throw misuse(owner, `${call}: before lies more than ${MAX_FUTURE_BEFORE} s after now`);
  return seconds;
}

/** The entry of `revokeSubject({ iss, sub }, { before })`; a TypeError for anything else. */
export function subjectEntries(subject: unknown, options: unknown, now: number, owner: string): RuleEntry[] {
  const call = 'revokeSubject({ iss, sub }, { before })';
  const target = targetOf(subject, call, ['iss', 'sub'], owner);
  const iss = ruleValue(target.iss, call, 'iss', owner);
  const sub = ruleValue(target.sub, call, 'sub', owner);
  return [{ kind: 's', iss, key: sub, before: beforeOf(options, now, 'revokeSubject', owner) }];
}

/** The entries of `revokeSession({ iss, sid, sub? }, { before })`: its `sid`, and its `sub` when given. */
export function sessionEntries(session: unknown, options: unknown, now: number, owner: string): RuleEntry[] {
  const call = 'revokeSession({ iss, sid, sub? }, { before })';
  const target = targetOf(session, call, ['iss', 'sid', 'sub'], owner);
  const iss = ruleValue(target.iss, call, 'iss', owner);
  const sid = ruleValue(target.sid, call, 'sid', owner);
  const before = beforeOf(options, now, 'revokeSession', owner);
  const entries: RuleEntry[] = [{ kind: 'x', iss, key: sid, before }];
  if (target.sub !== undefined)
    entries.push({ kind: 'n', iss, key: ruleValue(target.sub, call, 'sub', owner), before });
  return entries;
}

/**
 * A store's `revokeSubject` and `revokeSession`: the arguments checked at `clock()` (a rejection with a TypeError),
 * then the rule's entries handed to `store` with that time.
 */
export function ruleMethods(
  store: (entries: RuleEntry[], now: number) => Promise<void>,
  clock: () => number,
  owner: string,
): {
  revokeSubject(subject: unknown, options?: unknown): Promise<void>;
  revokeSession(session: unknown, options?: unknown): Promise<void>;
} {
  return {
    async revokeSubject(subject, options) {
      const now = clock();
      await store(subjectEntries(subject, options, now, owner), now);
    },
    async revokeSession(session, options) {
      const now = clock();
      await store(sessionEntries(session, options, now, owner), now);
    },
  };
}

/** `maxRules` of a store's options: a positive integer, DEFAULT_MAX_RULES when absent. */
export function resolveMaxRules(value: unknown, owner: string): number {
  return positiveInteger(value, 'maxRules', DEFAULT_MAX_RULES, `${owner} option "maxRules"`);
}

/**
 * What a full store rejects a rule with: a `verification_unavailable` TokenAuthError (503), reason
 * `revocation-store-full`, `Retry-After` the seconds until its earliest rule leaves (1 to MAX_RETRY_AFTER; the
 * longest when no TokenAuth has told the store how long rules last).
 */
export function rulesFull(earliest: number | undefined, lifetime: number, now: number): TokenAuthError {
  const frees = earliest === undefined || lifetime <= 0 ? MAX_RETRY_AFTER : earliest + lifetime + RULE_MARGIN - now;
  const retryAfter = Math.min(MAX_RETRY_AFTER, Math.max(1, Math.ceil(frees)));
  return new TokenAuthError('verification_unavailable', { reason: 'revocation-store-full', retryAfter });
}

/**
 * The OptionError for rules without a lifetime: a TokenAuth without `maxLifetime` cannot tell how long a rule must
 * last (its tokens may live any time), so a store that holds rules refuses to be followed by one, and refuses rules
 * while one follows it.
 */
export function rulesNeedMaxLifetime(why: string): never {
  optionError(
    'maxLifetime',
    `option "maxLifetime" is required with subject and session rules (${why}): a rule lasts until its before + maxLifetime + clockTolerance, and without it a token could outlive every rule (docs/fleet.md)`,
  );
}
