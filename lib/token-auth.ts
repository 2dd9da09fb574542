// The composition: createTokenAuth resolves the options room by room and wires the pipeline (keys → verifier →
// authenticator → middleware). New capabilities are wired here, never branched inside the verifier.
import type { Request, RequestHandler } from 'express';
import { createAuthenticator } from './http/authenticate';
import { ResultCache, type CacheStats } from './verify/cache';
import type { ClaimsMode, ClaimsOf, JwtClaims } from './token/claim-modes';
import type { VerifiedClaims } from './token/claims';
import { TokenAuthError } from './base/errors';
import { createKeySource } from './keys';
import { verifiedUserMiddleware } from './http/middleware';
import type { TokenAuthOptions } from './config/options';
import { resolveOptions } from './config/resolve';
import { createVerifyRouter, type VerifyRouterOptions } from './http/router';
import { fleetStats, type FleetStats } from './verify/stats';
import { NO_SCOPES, parseScopeRequirement, type ScopeRequirementInput } from './token/scopes';
import { withSharedVerdicts } from './verify/shared-verdicts';
import { acceptUncalled } from './http/uncalled';
import { createVerifier } from './verify/verifier';

/**
 * One configured verifier with its Express middleware. `C` is what its claims mode guarantees (`VerifiedClaims`
 * for `'strict'`, `JwtClaims` for `'jwt'`, `AccessTokenClaims` for `'at+jwt'`).
 */
export interface TokenAuth<C extends JwtClaims = JwtClaims> {
  /** Middleware: a valid token with these scopes is required; its claims go to `req.auth`. */
  requireVerifiedUser(scopes?: ScopeRequirementInput): RequestHandler;
  /** Middleware: no token → `req.auth` undefined and `next()`; a token that is present must be valid. */
  optionalVerifiedUser(): RequestHandler;
  /** The verify endpoint: `GET`/`POST {mount path}/auth/@users/verify` answering Shape B or Shape A. */
  verifyRouter(options?: VerifyRouterOptions<C>): RequestHandler;
  /** Verify a token directly; rejects with a TokenAuthError. */
  verify(token: string): Promise<C>;
  /**
   * The claims on a request that this TokenAuth's middleware let through, typed by its mode (`req.auth` is typed
   * only by what every mode guarantees). Throws `missing_token` (401) when the request carries none, and
   * `internal` (500) for claims that another TokenAuth verified: those need not meet this one's mode.
   */
  claims(req: Request): C;
  /** Counters of the result cache (and, when in use, the breaker's state and the revocation list's). */
  stats(): CacheStats & FleetStats;
  /** Stop timers and pending key fetches, and empty the cache. */
  close(): void;
}

/**
 * Create a TokenAuth. Options are validated here, once: a wrong option throws a TypeError naming it, so a
 * misconfigured app fails at start-up, never at request time.
 */
export function createTokenAuth<M extends ClaimsMode | undefined = undefined, D = undefined>(
  options: TokenAuthOptions<ClaimsOf<M, D>> & { claims?: M; issuerBaseURL?: D },
): TokenAuth<ClaimsOf<M, D>> {
  type C = ClaimsOf<M, D>;
  const resolved = resolveOptions(options);
  const source = withSharedVerdicts(createKeySource(resolved), resolved);
  // A remote source's verdicts are always looked up (no second-sighting admission): each miss is a network call.
  const cache = new ResultCache(resolved.cache, resolved.rules.clockTolerance, source.kind === 'jws');
  const verifier = createVerifier({ source, rules: resolved.rules, claims: resolved.claims, clock: resolved.clock, cache });
  const auth = createAuthenticator(resolved, verifier, source.kind === 'remote' ? 'b64token' : 'jws');

  return {
    requireVerifiedUser: acceptUncalled('requireVerifiedUser', (scopes?: ScopeRequirementInput) => verifiedUserMiddleware(auth, parseScopeRequirement(scopes), false)),
    optionalVerifiedUser: acceptUncalled('optionalVerifiedUser', () => verifiedUserMiddleware(auth, NO_SCOPES, true)),
    verifyRouter: acceptUncalled('verifyRouter', (routerOptions?: VerifyRouterOptions<C>) => createVerifyRouter(auth, routerOptions)),
    verify: (token) => auth.verifyToken(token) as Promise<VerifiedClaims | JwtClaims> as Promise<C>,
    claims(req) {
      const claims = req.auth;
      if (claims === undefined) throw new TokenAuthError('missing_token');
      // Claims another TokenAuth verified may not meet this one's mode: a programming error, never typed as if they did.
      if (!resolved.claims.passed(claims)) throw new TokenAuthError('internal', { reason: 'claims-of-another-TokenAuth' });
      return claims as C;
    },
    stats: () => fleetStats(verifier.stats(), source, auth.revocation),
    close() {
      source.close();
      cache.clear();
      auth.close();
    },
  };
}
