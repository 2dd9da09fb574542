// The revocation seam: a store a fleet shares (`revocation` option) followed into a local set, checked per request.
import type { VerifiedClaims } from '../token/claims';
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';

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
}

/** The local view of a revocation list, kept up to date by its store. */
export interface RevocationList {
  /**
   * Whether `jti` is revoked at `now` (seconds: true while its token's `exp` is later), answered from memory.
   * Undefined while the list has never been loaded: the caller then cannot decide and answers 503. A store keeps
   * each entry REVOCATION_GRACE past its `exp`, so that `now` may lie that far back.
   */
  isRevoked(jti: string, now: number): boolean | undefined;
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
  follow(report: (err: TokenAuthError) => void): RevocationList;
}

/** `revocation` checked at `createTokenAuth`: a store with `follow`, or undefined. */
export function resolveRevocation(value: unknown): RevocationStore | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || typeof (value as RevocationStore).follow !== 'function') {
    optionError(
      'revocation',
      'option "revocation" must be a revocation store (createRedisStore from express-verified-user/redis)',
    );
  }
  return value as RevocationStore;
}

/**
 * The check a request runs after the cache, before `isRevoked` and scopes: a revoked `jti` → 401 `invalid_token`
 * (reason `revoked`); a list never loaded → 503. A token without a string `jti` cannot be named in the list, so it
 * passes this check (only `isRevoked` can refuse it). A revocation holds as long as the token's `exp` is accepted:
 * until `exp` + `clockTolerance` by this clock (at most REVOCATION_GRACE past `exp`).
 */
export function checkRevocation(
  list: RevocationList,
  claims: VerifiedClaims,
  now: number,
  clockTolerance: number,
): void {
  const at = now - Math.min(clockTolerance, REVOCATION_GRACE);
  const jti = (claims as { jti?: unknown }).jti;
  if (typeof jti !== 'string') {
    // Nothing to look up, but a list never loaded still means the answer is unknown (no jti is ever '').
    if (list.isRevoked('', at) === undefined) throw notLoaded();
    return;
  }
  const revoked = list.isRevoked(jti, at);
  if (revoked === undefined) throw notLoaded();
  if (revoked) throw new TokenAuthError('invalid_token', { reason: 'revoked' });
}

function notLoaded(): TokenAuthError {
  return new TokenAuthError('verification_unavailable', { reason: 'revocation-not-loaded', retryAfter: 1 });
}
