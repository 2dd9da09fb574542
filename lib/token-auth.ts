import type { RequestHandler } from 'express';
import { createAuthenticator } from './authenticate';
import { ResultCache, type CacheStats } from './cache';
import type { VerifiedClaims } from './claims';
import { createKeySource } from './keys';
import { verifiedUserMiddleware } from './middleware';
import { resolveOptions, type TokenAuthOptions } from './options';
import { createVerifyRouter, type VerifyRouterOptions } from './router';
import { fleetStats, type FleetStats } from './fleet-stats';
import { NO_SCOPES, parseScopeRequirement, type ScopeRequirementInput } from './scopes';
import { withSharedVerdicts } from './shared-verdicts';
import { createVerifier } from './verifier';

/** One configured verifier with its Express middleware. */
export interface TokenAuth {
  /** Middleware: a valid token with these scopes is required; its claims go to `req.auth`. */
  requireVerifiedUser(scopes?: ScopeRequirementInput): RequestHandler;
  /** Middleware: no token → `req.auth` undefined and `next()`; a token that is present must be valid. */
  optionalVerifiedUser(): RequestHandler;
  /** The verify endpoint: `GET`/`POST {mount path}/auth/@users/verify` answering Shape B or Shape A. */
  verifyRouter(options?: VerifyRouterOptions): RequestHandler;
  /** Verify a token directly; rejects with a TokenAuthError. */
  verify(token: string): Promise<VerifiedClaims>;
  /** Counters of the result cache (and, when in use, the breaker's state and the revocation list's). */
  stats(): CacheStats & FleetStats;
  /** Stop timers and pending key fetches, and empty the cache. */
  close(): void;
}

/**
 * Create a TokenAuth. Options are validated here, once: a wrong option throws a TypeError naming it, so a
 * misconfigured app fails at start-up, never at request time.
 */
export function createTokenAuth(options: TokenAuthOptions): TokenAuth {
  const resolved = resolveOptions(options);
  const source = withSharedVerdicts(createKeySource(resolved), resolved);
  const cache = new ResultCache(resolved.cache, resolved.rules.clockTolerance);
  const verifier = createVerifier({ source, rules: resolved.rules, claims: resolved.claims, clock: resolved.clock, cache });
  const auth = createAuthenticator(resolved, verifier, source.kind === 'remote' ? 'b64token' : 'jws');

  return {
    requireVerifiedUser: (scopes) => verifiedUserMiddleware(auth, parseScopeRequirement(scopes), false),
    optionalVerifiedUser: () => verifiedUserMiddleware(auth, NO_SCOPES, true),
    verifyRouter: (routerOptions) => createVerifyRouter(auth, routerOptions),
    verify: (token) => auth.verifyToken(token),
    stats: () => fleetStats(verifier.stats(), source, auth),
    close() {
      source.close();
      cache.clear();
      auth.close();
    },
  };
}
