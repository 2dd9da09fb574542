// `store.revoke()`: its arguments (claims, or a jti and an exp), the one Lua script that stores and publishes a
// revocation all or nothing, and what a failure tells the caller (nothing revoked, or outcome unknown).
import { TokenAuthError } from '../base/errors';
import { StoreBusyError } from './bounded-commands';

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

const misuse = (message: string) => new TypeError(`express-verified-user/redis: ${message}`);

/**
 * The `jti` and `exp` (whole seconds, at most LATEST_REVOCATION) of a revocation, from `revoke(claims)` or
 * `revoke(jti, exp)`. A TypeError for a missing or empty `jti` and for an `exp` that is not a number (NaN
 * included); a fractional `exp` is rounded up.
 */
export function revocationOf(target: unknown, maybeExp: unknown): { jti: string; exp: number } {
  let jti: unknown = target;
  let exp: unknown = maybeExp;
  if (typeof target === 'object' && target !== null && maybeExp === undefined) {
    ({ jti, exp } = target as { jti?: unknown; exp?: unknown });
    if (typeof jti !== 'string' || jti === '') {
      throw misuse(
        "revoke(claims) needs claims with a string jti: this token has none, so it cannot be revoked by jti (require one with requiredClaims: ['jti'], or refuse such tokens with isRevoked)",
      );
    }
  }
  if (typeof jti !== 'string' || jti === '') throw misuse('revoke(jti, exp) needs a non-empty jti');
  if (typeof exp !== 'number' || Number.isNaN(exp))
    throw misuse("revoke(jti, exp) needs exp, the token's expiry in seconds since the epoch");
  return { jti, exp: exp > LATEST_REVOCATION ? LATEST_REVOCATION : Math.ceil(exp) };
}

/**
 * Stores one revocation and publishes it, all or nothing. KEYS: the sorted set. ARGV: jti, exp, now, channel,
 * message. Every value a write needs is computed before the first write, and no write after it can fail on these
 * arguments, so a revocation is never stored without being published nor published without being stored; the
 * key's expiry (its latest entry's `exp`, capped like `exp`) is always an integer Redis accepts, even when an
 * earlier version left an entry past LATEST_REVOCATION in the set.
 */
export const REVOKE_SCRIPT = `
local exp = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local keep = exp
if last[2] and tonumber(last[2]) > keep then keep = tonumber(last[2]) end
if keep > ${LATEST_REVOCATION} then keep = ${LATEST_REVOCATION} end
keep = math.ceil(keep) + 1
if (not old) or tonumber(old) < exp then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
redis.call('EXPIREAT', KEYS[1], keep)
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;

/**
 * What a failed `revoke()` rejects with: a `verification_unavailable` TokenAuthError (503, `Retry-After: 1`), which
 * `errorHandler()` renders as JSON. Reason `store-busy`: not sent, nothing was revoked. Reason
 * `revoke-outcome-unknown`: sent (or queued by the client) without an answer in time, or the connection failed; it
 * may still take effect. Either way `revoke()` is idempotent: retry it.
 */
export function revokeFailed(err: unknown): TokenAuthError {
  const reason = err instanceof StoreBusyError ? 'store-busy' : 'revoke-outcome-unknown';
  return new TokenAuthError('verification_unavailable', { reason, retryAfter: 1, cause: err });
}
