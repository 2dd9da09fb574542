// The revocation seam: a store a fleet shares (`revocation` option) followed into a local set, checked per request:
// revoked `jti`s, and the rules that refuse a subject's or a session's tokens.
import type { VerifiedClaims } from '../token/claims';
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import type { RuleRefusal } from './rule-set';
import { rulesNeedMaxLifetime } from './revocation-requests';

/**
 * Revocation by `jti` shared across a fleet (docs/fleet.md), the seam between the request pipeline and a store such as
 * `express-verified-user/redis`. The store keeps a local copy of the list, so a request costs one in-process
 * lookup and no network call.
 */

/**
 * How long past its token's `exp` a store keeps a revocation (seconds): a TokenAuth accepts a token until `exp` +
 * `clockTolerance`, so the revocation must outlive `exp` by as much. Covers a `clockTolerance` up to this.
 */
export const REVOCATION_GRACE = 300;

/** What a revocation list tells about itself, for `stats()`. */
export interface RevocationStats {
  /** Whether the whole list has been loaded at least once (requests get 503 until then). */
  loaded: boolean;
  /** Whether the store is reachable now; false while it serves the last list it held. */
  available: boolean;
  /** Revoked `jti`s held locally (entries leave REVOCATION_GRACE after their token's `exp`). */
  size: number;
  /**
   * Subject and session rule entries held locally (a session rule with `sub` counts two), for a store that holds
   * rules (docs/fleet.md#subject-and-session-rules).
   */
  rules?: number;
}

/** The local view of a revocation list, kept up to date by its store. */
export interface RevocationList {
  /**
   * Whether `jti` is revoked at `now` (seconds: true while its token's `exp` is later), answered from memory.
   * Undefined while the list has never been loaded: the caller then cannot decide and answers 503. A store keeps
   * each entry REVOCATION_GRACE past its `exp`, so that `now` may lie that far back.
   */
  isRevoked(jti: string, now: number): boolean | undefined;
  /**
   * Optional, for a store that holds subject and session rules: why these claims are refused at `now` (seconds), or
   * undefined. Asked only once the list has loaded; answered from memory.
   */
  ruleRefusal?(claims: Readonly<Record<string, unknown>>, now: number): RuleRefusal | undefined;
  stats(): RevocationStats;
  /** Stop reporting to this follower. */
  unfollow(): void;
}

/**
 * A shared revocation list. `follow(report)` starts keeping the local copy (the first follower starts it) and
 * hands `report` each outage of the store once, as a `verification_unavailable` error with reason
 * `store-unavailable`, for `onError`.
 */
export interface RevocationStore {
  follow(report: (err: TokenAuthError) => void, options?: FollowOptions): RevocationList;
  /**
   * Optional: whether subject or session rules were written through this store object (in this process). A
   * TokenAuth without `maxLifetime` then cannot follow it (an OptionError at `createTokenAuth`).
   */
  rulesWritten?(): boolean;
}

/** What a TokenAuth tells the store it follows. */
export interface FollowOptions {
  /**
   * How long a rule must last for this TokenAuth (seconds): its `maxLifetime` + `clockTolerance`, past which no token
   * issued at or before the rule's `before` is still accepted. Undefined without `maxLifetime`.
   */
  ruleLifetime?: number;
}

/** Who the rules refuse: a user (`sub`) of an issuer (`iss`, the issuer of the user's tokens). */
export interface SubjectTarget {
  iss: string;
  sub: string;
}

/** A session (`sid`, as the tokens' `sid` claim names it) of an issuer, and optionally its user (`sub`). */
export interface SessionTarget {
  iss: string;
  sid: string;
  sub?: string;
}

/** When a rule starts: `before` in seconds since the epoch (a JWT NumericDate) or a Date; now when absent. */
export interface RuleOptions {
  before?: number | Date;
}

/**
 * Subject and session rules (docs/fleet.md#subject-and-session-rules), offered by `createRedisStore` and
 * `createMemoryRevocationStore` beside `revoke()` by `jti`. Each promise resolves once the rule is stored where every
 * follower will see it (every instance, for Redis), and rejects when it is not: with a `verification_unavailable`
 * TokenAuthError whose reason is `revocation-store-full` (`retryAfter` set) when the store holds `maxRules` entries,
 * another reason (`store-busy`, `revoke-outcome-unknown`) when Redis is out of reach; with a TypeError for bad
 * arguments; with an OptionError (option `maxLifetime`) while a TokenAuth without `maxLifetime` follows the store.
 */
export interface RevocationRules {
  /** Refuse the tokens of `sub` at `iss` whose `iat` is at or before `before` (and those without `iat`). */
  revokeSubject(subject: SubjectTarget, options?: RuleOptions): Promise<void>;
  /**
   * Refuse the tokens whose `sid` claim names this session; with `sub`, also that subject's tokens that carry no
   * `sid` and whose `iat` is at or before `before`.
   */
  revokeSession(session: SessionTarget, options?: RuleOptions): Promise<void>;
}

/**
 * `revocation` checked at `createTokenAuth`: a store with `follow`, or undefined. A store that rules were written
 * through needs `maxLifetime` (an OptionError otherwise).
 */
export function resolveRevocation(value: unknown, maxLifetime: unknown): RevocationStore | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || typeof (value as RevocationStore).follow !== 'function') {
    optionError(
      'revocation',
      'option "revocation" must be a revocation store (createRedisStore from express-verified-user/redis)',
    );
  }
  const store = value as RevocationStore;
  if (maxLifetime === undefined && store.rulesWritten?.() === true)
    rulesNeedMaxLifetime('option "revocation" names a store that holds them');
  return store;
}

/**
 * The check a request runs after the cache, before `isRevoked` and scopes: a revoked `jti` → 401 `invalid_token`
 * (reason `revoked`); a list never loaded → 503. A token without a string `jti` cannot be named in the list, so it
 * passes that part (only `isRevoked` can refuse it). A revocation holds as long as the token's `exp` is accepted:
 * until `exp` + `clockTolerance` by this clock (at most REVOCATION_GRACE past `exp`). Then the store's subject and
 * session rules, if it holds any: 401 `invalid_token`, reason `subject-revoked` or `session-revoked`.
 */
export function checkRevocation(
  list: RevocationList,
  claims: VerifiedClaims,
  now: number,
  clockTolerance: number,
): void {
  const at = now - Math.min(clockTolerance, REVOCATION_GRACE);
  const jti = (claims as { jti?: unknown }).jti;
  // Without a jti nothing is looked up, but a list never loaded still means the answer is unknown (no jti is ever '').
  const revoked = list.isRevoked(typeof jti === 'string' ? jti : '', at);
  if (revoked === undefined) throw notLoaded();
  if (revoked) throw new TokenAuthError('invalid_token', { reason: 'revoked' });
  if (list.ruleRefusal === undefined) return;
  const refusal = list.ruleRefusal(claims, now);
  if (refusal === 'subject-revoked') throw new TokenAuthError('invalid_token', { reason: 'subject-revoked' });
  if (refusal === 'session-revoked') throw new TokenAuthError('invalid_token', { reason: 'session-revoked' });
}

function notLoaded(): TokenAuthError {
  return new TokenAuthError('verification_unavailable', { reason: 'revocation-not-loaded', retryAfter: 1 });
}
