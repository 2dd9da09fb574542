import type { RequestHandler } from 'express';
import { createAuthenticator } from './authenticate';
import { ResultCache, type CacheStats } from './cache';
import type { VerifiedClaims } from './claims';
import { createKeySource } from './keys';
import { verifiedUserMiddleware } from './middleware';
import { resolveOptions, type TokenAuthOptions } from './options';
import { createVerifyRouter, type VerifyRouterOptions } from './router';
import { NO_SCOPES, parseScopeRequirement, type ScopeRequirementInput } from './scopes';
import { acceptUncalled } from './uncalled';
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
  /** Counters of the result cache. */
  stats(): CacheStats;
  /** Stop timers and pending key fetches, and empty the cache. */
  close(): void;
}

/**
 * Create a TokenAuth. Options are validated here, once: a wrong option throws a TypeError naming it, so a
 * misconfigured app fails at start-up, never at request time.
 */
export function createTokenAuth(options: TokenAuthOptions): TokenAuth {
  const resolved = resolveOptions(options);
  const source = createKeySource(resolved);
  const cache = new ResultCache(resolved.cache, resolved.rules.clockTolerance);
  const verifier = createVerifier({ source, rules: resolved.rules, claims: resolved.claims, clock: resolved.clock, cache });
  const auth = createAuthenticator(resolved, verifier, source.kind === 'remote' ? 'b64token' : 'jws');

  return {
    requireVerifiedUser: acceptUncalled('requireVerifiedUser', (scopes?: ScopeRequirementInput) => verifiedUserMiddleware(auth, parseScopeRequirement(scopes), false)),
    optionalVerifiedUser: acceptUncalled('optionalVerifiedUser', () => verifiedUserMiddleware(auth, NO_SCOPES, true)),
    verifyRouter: acceptUncalled('verifyRouter', (routerOptions?: VerifyRouterOptions) => createVerifyRouter(auth, routerOptions)),
    verify: (token) => auth.verifyToken(token),
    stats: () => verifier.stats(),
    close() {
      source.close();
      cache.clear();
    },
  };
}
