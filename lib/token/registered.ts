// The registered claims every token meets (RFC 7519): exp, nbf, iat with tolerance, issuer and audience, and the types
// of iss, sub, aud and jti when present; the types that say so (RegisteredClaims, JwtClaims).
import { TokenAuthError } from '../base/errors';
import { isStringArray } from '../base/values';
import type { IssuerRule } from './issuer';

/**
 * What every claims mode guarantees, and so the type of `req.auth`: an integer `exp`; `iat` and `nbf` numbers, `iss`
 * and `jti` strings, `aud` a string or an array of strings when present (RFC 7519 §4.1); `sub` a string when present,
 * or null in Shape B. Every other claim is `unknown` until the app narrows it.
 */
export interface RegisteredClaims {
  exp: number;
  iat?: number;
  nbf?: number;
  iss?: string;
  aud?: string | string[];
  jti?: string;
  sub?: string | null;
  [claim: string]: unknown;
}

/**
 * What `claims: 'jwt'` guarantees: the registered claims, as RFC 7519 types them, each checked when present (a token
 * whose `sub` is not a string is refused, reason `jwt:sub`). Every other claim is `unknown` until the app narrows it.
 */
export interface JwtClaims extends RegisteredClaims {
  sub?: string;
}

/** The RFC 7519 registered-claim rules of one TokenAuth, resolved from its options. */
export interface RegisteredClaimRules {
  /** Accepted issuers (exact, or templates with the `tenants` rule: token/issuer.ts), or false when unchecked on purpose. */
  issuer: IssuerRule | false;
  /** Accepted audiences, or false when the audience is explicitly unchecked. */
  audience: AudienceRule | false;
  clockTolerance: number;
  maxTokenAge: number | undefined;
  maxLifetime: number | undefined;
  /** Strict mode requires an integer `iat`; `'jwt'` mode checks it only when present. */
  requireIat: boolean;
}

/** Which `aud` values a TokenAuth accepts: a set of exact strings, or a rule such as a resource's (RFC 8707). */
export interface AudienceRule {
  has(aud: string): boolean;
  /** The values the options named (`audience`, `resource`), for the hint of an `aud` refusal; a Set names its own. */
  readonly accepted?: readonly string[];
}

/** The time facts of a token that decide, at any later moment, whether it still holds. */
export interface TokenTimes {
  exp: number;
  nbf: number | undefined;
  iat: number | undefined;
}

function invalid(reason: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason });
}

function optionalNumber(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(name);
  return value;
}

/** Read and type-check `exp`, `nbf`, `iat`, and the lifetime cap that does not depend on the clock. */
export function readTimes(payload: Record<string, unknown>, rules: RegisteredClaimRules): TokenTimes {
  const exp = payload.exp;
  if (typeof exp !== 'number' || !Number.isInteger(exp)) throw invalid('exp');
  const nbf = optionalNumber(payload.nbf, 'nbf');
  const iat = optionalNumber(payload.iat, 'iat');
  if (iat === undefined && (rules.requireIat || rules.maxTokenAge !== undefined || rules.maxLifetime !== undefined)) {
    throw invalid('iat');
  }
  if (rules.maxLifetime !== undefined && iat !== undefined && exp - iat > rules.maxLifetime) throw invalid('lifetime');
  return { exp, nbf, iat };
}

/**
 * Whether a token's times hold at `now` (seconds). Expired or too old → `token_expired`; not yet valid, or
 * issued in the future → `invalid_token`. Called on every use, cached or not.
 */
export function checkTimes(times: TokenTimes, now: number, rules: RegisteredClaimRules): void {
  const tolerance = rules.clockTolerance;
  if (times.exp <= now - tolerance) throw new TokenAuthError('token_expired', { reason: 'exp' });
  if (times.nbf !== undefined && times.nbf > now + tolerance) throw invalid('nbf');
  if (times.iat !== undefined) {
    if (times.iat > now + tolerance) throw invalid('iat-future');
    if (rules.maxTokenAge !== undefined && now - times.iat > rules.maxTokenAge + tolerance) {
      throw new TokenAuthError('token_expired', { reason: 'max-age' });
    }
  }
}

/** `iss` and `aud` against the options; an array `aud` matches when any element does. */
export function checkIssuerAudience(payload: Record<string, unknown>, rules: RegisteredClaimRules): void {
  if (rules.issuer !== false) rules.issuer.check(payload);
  if (rules.audience !== false) {
    const aud = payload.aud;
    if (typeof aud === 'string') {
      if (!rules.audience.has(aud)) throw invalid('aud');
    } else if (Array.isArray(aud)) {
      if (!aud.some((a) => typeof a === 'string' && rules.audience !== false && rules.audience.has(a)))
        throw invalid('aud');
    } else {
      throw invalid('aud');
    }
  }
}

/**
 * The first of `iss`, `sub`, `aud`, `jti` present with another type than RFC 7519 §4.1 gives it (`iss`, `sub`, `jti`
 * a string, `aud` a string or an array of strings; `null` is another type), or undefined: what lets `JwtClaims` type
 * them (claim-modes.ts), so a type never says more than was checked. The times are readTimes'. Written out, not a
 * table: it runs on every cold token of claims: 'jwt'.
 */
export function registeredTypeViolation(payload: Record<string, unknown>): string | undefined {
  const { iss, sub, aud, jti } = payload;
  if (iss !== undefined && typeof iss !== 'string') return 'iss';
  if (sub !== undefined && typeof sub !== 'string') return 'sub';
  if (aud !== undefined && typeof aud !== 'string' && !isStringArray(aud)) return 'aud';
  if (jti !== undefined && typeof jti !== 'string') return 'jti';
  return undefined;
}
