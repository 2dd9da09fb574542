// The request pipeline behind every middleware: extract → verify → binding → revocation → scopes, answering with
// claims or a TokenAuthError. The only room that knows the whole request path; Express types only, no responses.
import type { Request } from 'express';
import { alphabetFault, checkTokenSyntax, type TokenSyntax } from '../extract/bearer';
import type { VerifiedClaims } from '../token/claims';
import { debugRefusal } from '../observe/debug';
import { asTokenAuthError, TokenAuthError, withChallenge } from '../base/errors';
import type { ResolvedOptions } from '../config/options';
import { checkRevocation, type RevocationList } from '../verify/revocation';
import { checkScopes, NO_SCOPES, type ScopeRequirement } from '../token/scopes';
import { createSenderConstraint } from '../dpop/binding';
import { type Verifier } from '../verify/verifier';
import { isThenable, type MaybePromise } from '../base/values';

/**
 * The request pipeline between the HTTP edge and the verifier: extract → verify → revocation → scopes. Returns
 * the claims, undefined (no token, when that is allowed) or throws/rejects with a TokenAuthError that carries its
 * RFC 6750 challenge.
 */
export interface Authenticator {
  authenticate(req: Request, requirement: ScopeRequirement, optional: boolean): MaybePromise<VerifiedClaims | undefined>;
  /** `verify(token)`: the same checks for a token handed over directly (no scopes, `req` undefined). */
  verifyToken(token: string): Promise<VerifiedClaims>;
  /** Report a failure to `onError`; a throwing hook is ignored, so logging cannot break a response. */
  report(err: TokenAuthError, req: Request | undefined): void;
  readonly realm: string;
  readonly errors: 'respond' | 'next';
  /** The shared revocation list followed (`revocation` option), if any. */
  readonly revocation: RevocationList | undefined;
  /** Stop following the shared revocation list, if any. */
  close(): void;
}

/** Build the request pipeline for one TokenAuth. */
export function createAuthenticator(options: ResolvedOptions, verifier: Verifier, syntax: TokenSyntax): Authenticator {
  const { maxTokenLength, getToken, isRevoked, realm, onError } = options;
  const policy = options.claims;
  /** An app hook that throws or rejects is a 500 whose cause is kept for `onError`, never shown. */
  const hookFailed = (reason: string) => (err: unknown): never => {
    throw new TokenAuthError('internal', { reason, cause: err });
  };
  const revocationFailed = hookFailed('isRevoked-threw');
  const sender = createSenderConstraint({ dpop: options.dpop, mtls: options.mtls, realm, clock: options.clock, clockTolerance: options.rules.clockTolerance });
  const tokenHookFailed = hookFailed('getToken-threw');
  const revocationList = options.revocation?.follow((err) => authenticator.report(err, undefined));

  /** The route's scopes, last step of `authorize`; a function, not a closure made per request. */
  function scopesMet(claims: VerifiedClaims, requirement: ScopeRequirement): VerifiedClaims {
    // Scopes are read only where a route asks for some: a throwing scopeClaim hook cannot fail an open route.
    const needed = requirement.all.length > 0 || requirement.any.length > 0;
    if (needed && !checkScopes(requirement, policy.scopesOf(claims))) {
      throw new TokenAuthError('insufficient_scope', { scope: requirement.challenge, reason: 'scope' });
    }
    return claims;
  }

  function authorize(claims: VerifiedClaims, requirement: ScopeRequirement, req: Request | undefined): MaybePromise<VerifiedClaims> {
    if (revocationList !== undefined) checkRevocation(revocationList, claims, options.clock());
    if (isRevoked === undefined) return scopesMet(claims, requirement);
    let revoked: MaybePromise<boolean>;
    try {
      revoked = isRevoked(claims, req);
    } catch (err) {
      return revocationFailed(err);
    }
    const decide = (answer: boolean) => {
      if (answer === true) throw new TokenAuthError('invalid_token', { reason: 'revoked' });
      return scopesMet(claims, requirement);
    };
    if (!isThenable(revoked)) return decide(revoked);
    return revoked.then(decide, revocationFailed);
  }

  /** The alphabet check that `bearerCredential` leaves to the verifier (run on a cache miss only). */
  const alphabet = (token: string) => alphabetFault(token, syntax);

  function check(
    token: string | undefined | null | TokenAuthError,
    requirement: ScopeRequirement,
    optional: boolean,
    req: Request | undefined,
    precheck?: (token: string) => TokenAuthError | undefined,
  ): MaybePromise<VerifiedClaims | undefined> {
    if (token instanceof TokenAuthError) throw token;
    if (token === undefined || token === null) {
      if (optional) return undefined;
      throw new TokenAuthError('missing_token');
    }
    const claims = verifier.verify(token, precheck);
    if (!isThenable(claims)) return bound(claims, token, requirement, req);
    return claims.then((c) => bound(c, token, requirement, req));
  }

  /** Sender constraint (DPoP proof, mTLS certificate) after the cached verdict, on every request; then `authorize`. */
  function bound(claims: VerifiedClaims, token: string, requirement: ScopeRequirement, req: Request | undefined): MaybePromise<VerifiedClaims> {
    const held = req === undefined ? claims : sender.checkBinding(req, token, claims);
    return isThenable(held) ? held.then((h) => authorize(h, requirement, req)) : authorize(held, requirement, req);
  }

  function fromHook(req: Request): MaybePromise<string | undefined | TokenAuthError> {
    const found = getToken!(req);
    const checked = (t: string | null | undefined) => (t === undefined || t === null ? undefined : checkTokenSyntax(t, maxTokenLength, syntax));
    return isThenable(found) ? found.then(checked) : checked(found);
  }

  const challenged = (err: unknown, req?: Request): never => {
    throw withChallenge(sender.challenge(asTokenAuthError(err), req), realm);
  };

  const authenticator: Authenticator = {
    realm,
    errors: options.errors,
    revocation: revocationList,
    authenticate(req, requirement, optional) {
      try {
        let token: MaybePromise<string | undefined | TokenAuthError>;
        try {
          // The header's credential has its alphabet checked by the verifier, on a cache miss only.
          token = getToken === undefined ? sender.credential(req, maxTokenLength) : fromHook(req);
        } catch (err) {
          return tokenHookFailed(err);
        }
        const result = isThenable(token)
          ? token.then((t) => check(t, requirement, optional, req), tokenHookFailed)
          : check(token, requirement, optional, req, getToken === undefined ? alphabet : undefined);
        return isThenable(result) ? result.catch((err: unknown) => challenged(err, req)) : result;
      } catch (err) {
        return challenged(err, req);
      }
    },
    async verifyToken(token) {
      try {
        const claims = await check(checkTokenSyntax(token, maxTokenLength, syntax), NO_SCOPES, false, undefined);
        return claims as VerifiedClaims;
      } catch (err) {
        const failure = withChallenge(asTokenAuthError(err), realm);
        this.report(failure, undefined);
        throw failure;
      }
    },
    report(err, req) {
      debugRefusal(err, policy.mode);
      if (onError === undefined) return;
      try {
        onError(err, req);
      } catch {
        // A logging hook must not turn a clean 401 into a crash.
      }
    },
    close() {
      revocationList?.unfollow();
    },
  };
  return authenticator;
}
