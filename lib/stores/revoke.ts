// `store.revoke()`: its arguments (claims, or a jti and an exp), the one Lua script that stores and publishes a
// revocation all or nothing, and what a failure tells the caller (nothing revoked, or outcome unknown).
import { TokenAuthError } from '../base/errors';
import { revocationOf as checkedRevocation } from '../verify/revocation-requests';
import { luaScript, StoreBusyError } from './bounded-commands';

export { LATEST_REVOCATION, type RevocableClaims } from '../verify/revocation-requests';

/** `revoke()`'s arguments, its TypeErrors naming this entry (verify/revocation-requests.ts). */
export const revocationOf = (target: unknown, maybeExp: unknown) =>
  checkedRevocation(target, maybeExp, 'express-verified-user/redis');

/**
 * Stores revocations and publishes each, all or nothing. KEYS: the sorted set. ARGV: now, channel, then for each
 * revocation its jti, exp and message. Every value is checked by the caller before the first write, and no write
 * after it can fail on these arguments, so a revocation is never stored without being published nor published
 * without being stored. The set has no expiry (`PERSIST`, also for a set an earlier version gave one): a
 * `volatile-*` eviction policy then never drops it; its expired entries leave at each revocation, and when an
 * instance's sweep finds some (`stores/revocation-list.ts`).
 */
export const REVOKE_SCRIPT = luaScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for i = 3, #ARGV, 3 do
  local old = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if (not old) or tonumber(old) < tonumber(ARGV[i + 1]) then redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i]) end
end
redis.call('PERSIST', KEYS[1])
for i = 3, #ARGV, 3 do redis.call('PUBLISH', ARGV[2], ARGV[i + 2]) end
return 1`);

/** The ARGV of REVOKE_SCRIPT after `now` and the channel: jti, exp and the message published, for each. */
export function revocationArgs(entries: Iterable<[jti: string, exp: number]>): string[] {
  const args: string[] = [];
  for (const [jti, exp] of entries) args.push(jti, String(exp), JSON.stringify([jti, exp]));
  return args;
}

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
