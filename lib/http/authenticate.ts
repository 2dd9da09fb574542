// The request pipeline behind every middleware: extract → verify → binding → revocation → step-up, scopes and the
// route's requirements, answering with claims or a TokenAuthError. The only room that knows the whole request path;
// Express types only, no responses.
import type { Request } from 'express';
import { alphabetFault, checkTokenSyntax, tokenInQuery, type TokenSyntax } from '../extract/bearer';
import type { VerifiedClaims } from '../token/claims';
import { debugRefusal } from '../observe/debug';
import { refusalHints, scopeRefusalHint } from '../config/refusal-hints';
import { asTokenAuthError, TokenAuthError, withChallenge, type ChallengeContext } from '../base/errors';
import type { ResolvedOptions } from '../config/options';
import { checkRevocation, type RevocationList } from '../verify/revocation';
import { checkScopes, scopeChallenge } from '../token/scopes';
import { checkStepUp } from '../token/step-up';
import { OPEN_ROUTE, type RouteRequirement } from '../authorize/route';
import { authorizeRoute } from '../authorize/checks';
import { createSenderConstraint } from '../dpop/binding';
import { type Verifier } from '../verify/verifier';
import { isThenable, type MaybePromise } from '../base/values';

/**
 * The request pipeline between the HTTP edge and the verifier: extract → verify → revocation → scopes. Returns
 * the claims, undefined (no token, when that is allowed) or throws/rejects with a TokenAuthError that carries its
 * RFC 6750 challenge.
 */
export interface Authenticator {
  /** The claims of this request's token on this route; undefined only for a request without one on an optional route. */
  authenticate(req: Request, route: RouteAuthentication): MaybePromise<VerifiedClaims | undefined>;
  /** A failure with the challenges this request gets on this route (Bearer and DPoP, `resource_metadata`, `scope`). */
  challenge(err: TokenAuthError, req: Request | undefined, requirement: RouteRequirement): TokenAuthError;
  /** `verify(token)`: the same checks for a token handed over directly (no scopes, `req` undefined). */
  verifyToken(token: string): Promise<VerifiedClaims>;
  /**
   * The access token this pipeline let through on `req`, recorded only with `tokenExchange` (which trades it on);
   * undefined for a request it did not pass. Held no longer than the request, which holds the token anyway.
   */
  verifiedToken(req: Request): string | undefined;
  /** The token of a request it let through, checked again now (times, revocation, `isRevoked` with `req`). */
  reverify(token: string, req: Request): Promise<VerifiedClaims>;
  /** Report a failure to `onError`; a throwing hook is ignored, so logging cannot break a response. */
  report(err: TokenAuthError, req: Request | undefined): void;
  readonly realm: string;
  readonly errors: 'respond' | 'next';
  /** The shared revocation list followed (`revocation` option), if any. */
  readonly revocation: RevocationList | undefined;
  /** Stop following the shared revocation list, if any. */
  close(): void;
}

/**
 * How one route authenticates its requests, named, built once at set-up and never per request (`http/guard.ts`
 * builds one per route, or one per requirement an entry picks).
 */
export interface RouteAuthentication {
  /** The route's scopes and step-up demand. */
  readonly requirement: RouteRequirement;
  /** A request without any token passes with no claims (`optionalVerifiedUser`) instead of a 401 `missing_token`. */
  readonly tokenOptional: boolean;
  /** Receives the access token about to be verified, for an entry that hands it on (MCP's AuthInfo). */
  readonly tokenSeen: ((req: Request, token: string) => void) | undefined;
}

/** The authentication of a route that needs a valid token meeting `requirement`, and hands the token to nobody. */
export function authenticationFor(requirement: RouteRequirement): RouteAuthentication {
  return Object.freeze({ requirement, tokenOptional: false, tokenSeen: undefined });
}

/** `verify(token)`: a token handed over directly, no request, no route demand. */
const DIRECT = authenticationFor(OPEN_ROUTE);

/** Build the request pipeline for one TokenAuth. */
export function createAuthenticator(options: ResolvedOptions, verifier: Verifier, syntax: TokenSyntax): Authenticator {
  const { maxTokenLength, getToken, isRevoked, realm, onError } = options;
  const policy = options.claims;
  /** An app hook that throws or rejects is a 500 whose cause is kept for `onError`, never shown. */
  const hookFailed =
    (reason: string) =>
    (err: unknown): never => {
      throw new TokenAuthError('internal', { reason, cause: err });
    };
  const revocationFailed = hookFailed('isRevoked-threw');
  const { clock } = options;
  const { clockTolerance } = options.rules;
  const sender = createSenderConstraint({
    dpop: options.dpop,
    mtls: options.mtls,
    clock,
    clockTolerance,
    resource: options.resource?.resource,
  });
  const resourceMetadata = options.resource?.metadataUrl;
  const tokenHookFailed = hookFailed('getToken-threw');
  const explain = refusalHints(options);
  // A rule lasts for this TokenAuth until its before + maxLifetime + clockTolerance (docs/fleet.md).
  const { maxLifetime } = options.rules;
  const ruleLifetime = maxLifetime === undefined ? undefined : maxLifetime + clockTolerance;
  const revocationList = options.revocation?.follow((err) => authenticator.report(err, undefined), { ruleLifetime });
  // Only an instance that exchanges tokens keeps each request's: the others pay nothing for it.
  const verifiedTokens = options.tokenExchange === undefined ? undefined : new WeakMap<Request, string>();
  // A replay store that is not the revocation store too (which reports already) reports through onError itself.
  const replay = options.dpop?.replay;
  const unwatch =
    replay === undefined || (replay as object) === options.revocation
      ? undefined
      : replay.watch?.((err) => authenticator.report(err, undefined));

  const { scopeImplies } = options;
  const scopeHint = scopeRefusalHint(options);

  /**
   * The route's demands, last step of `authorize`; a function, not a closure made per request. The user's
   * authentication (RFC 9470) before the scopes: its 401 names the route's scopes too, so one new authorization
   * can meet both. Then the route's requirements (authorize/: roles, claims, …, `allow` last), each a 403.
   */
  function routeMet(
    claims: VerifiedClaims,
    route: RouteRequirement,
    req: Request | undefined,
  ): MaybePromise<VerifiedClaims> {
    if (route.stepUp !== undefined) checkStepUp(route.stepUp, claims, clock(), clockTolerance);
    const requirement = route.scopes;
    // Scopes are read only where a route asks for some: a throwing scopeClaim hook cannot fail an open route.
    if (requirement.all.length > 0 || requirement.any.length > 0) {
      const granted = policy.scopesOf(claims);
      if (!checkScopes(requirement, granted, scopeImplies)) {
        throw new TokenAuthError('insufficient_scope', {
          scope: scopeChallenge(requirement, granted && scopeImplies ? scopeImplies.widen(granted) : granted),
          reason: 'scope',
          hint: scopeHint(requirement, route.owner),
        });
      }
    }
    if (route.authorization === undefined) return claims;
    // Routes are the only callers with requirements, and a route always has its request.
    const met = authorizeRoute(route.authorization, claims, req as Request);
    return met === undefined ? claims : met.then(() => claims);
  }

  function authorize(
    claims: VerifiedClaims,
    requirement: RouteRequirement,
    req: Request | undefined,
  ): MaybePromise<VerifiedClaims> {
    if (revocationList !== undefined) checkRevocation(revocationList, claims, clock(), clockTolerance);
    if (isRevoked === undefined) return routeMet(claims, requirement, req);
    let revoked: MaybePromise<boolean>;
    try {
      revoked = isRevoked(claims, req);
    } catch (err) {
      return revocationFailed(err);
    }
    const decide = (answer: boolean) => {
      if (answer === true) throw new TokenAuthError('invalid_token', { reason: 'revoked' });
      return routeMet(claims, requirement, req);
    };
    if (!isThenable(revoked)) return decide(revoked);
    return revoked.then(decide, revocationFailed);
  }

  /**
   * The alphabet check that `bearerCredential` leaves to the verifier (run on a cache miss only). A JWS needs none:
   * the strict reader (jose/jws.ts) refuses a character outside base64url as it decodes each segment.
   */
  const alphabet = syntax === 'jws' ? undefined : (token: string) => alphabetFault(token, syntax);

  function check(
    token: string | undefined | null | TokenAuthError,
    route: RouteAuthentication,
    req: Request | undefined,
    precheck?: (token: string) => TokenAuthError | undefined,
  ): MaybePromise<VerifiedClaims | undefined> {
    if (token instanceof TokenAuthError) throw token;
    if (token === undefined || token === null) {
      if (route.tokenOptional) return undefined;
      // A token in the URL is never read; the refusal only says that one was seen there.
      const inQuery = req !== undefined && tokenInQuery(req.originalUrl ?? req.url);
      throw new TokenAuthError('missing_token', inQuery ? { reason: 'token-in-query' } : undefined);
    }
    if (route.tokenSeen !== undefined && req !== undefined) route.tokenSeen(req, token);
    const { requirement } = route;
    const claims = verifier.verify(token, precheck);
    const passed = isThenable(claims)
      ? claims.then((c) => bound(c, token, requirement, req))
      : bound(claims, token, requirement, req);
    if (verifiedTokens === undefined || req === undefined) return passed;
    if (!isThenable(passed)) return noteVerified(verifiedTokens, req, token, passed);
    return passed.then((c) => noteVerified(verifiedTokens, req, token, c));
  }

  /** Sender constraint (DPoP proof, mTLS certificate) after the cached verdict, on every request; then `authorize`. */
  function bound(
    claims: VerifiedClaims,
    token: string,
    requirement: RouteRequirement,
    req: Request | undefined,
  ): MaybePromise<VerifiedClaims> {
    const held = req === undefined ? claims : sender.checkBinding(req, token, claims);
    return isThenable(held) ? held.then((h) => authorize(h, requirement, req)) : authorize(held, requirement, req);
  }

  function fromHook(req: Request): MaybePromise<string | undefined | TokenAuthError> {
    const found = getToken!(req);
    const checked = (t: string | null | undefined) =>
      t === undefined || t === null ? undefined : checkTokenSyntax(t, maxTokenLength, syntax);
    return isThenable(found) ? found.then(checked) : checked(found);
  }

  /** Challenges never depend on the request's Host: `resource_metadata` comes from the configured resource. */
  function challenge(err: TokenAuthError, req: Request | undefined, requirement: RouteRequirement): TokenAuthError {
    // The route's scopes on a 401 belong to a protected resource's challenges (docs/protected-resource.md); without
    // one, plain RFC 6750.
    const context: ChallengeContext = {
      realm,
      resourceMetadata,
      scope: resourceMetadata === undefined ? '' : requirement.scopes.challenge,
    };
    return withChallenge(sender.challenge(err, req, context), context);
  }

  const challenged = (err: unknown, req: Request, requirement: RouteRequirement): never => {
    throw challenge(asTokenAuthError(err), req, requirement);
  };

  const authenticator: Authenticator = {
    realm,
    errors: options.errors,
    revocation: revocationList,
    challenge,
    authenticate(req, route) {
      try {
        let token: MaybePromise<string | undefined | TokenAuthError>;
        try {
          // The header's credential has its alphabet checked by the verifier, on a cache miss only.
          token = getToken === undefined ? sender.credential(req, maxTokenLength) : fromHook(req);
        } catch (err) {
          return tokenHookFailed(err);
        }
        const result = isThenable(token)
          ? token.then((t) => check(t, route, req), tokenHookFailed)
          : check(token, route, req, getToken === undefined ? alphabet : undefined);
        return isThenable(result) ? result.catch((err: unknown) => challenged(err, req, route.requirement)) : result;
      } catch (err) {
        return challenged(err, req, route.requirement);
      }
    },
    async verifyToken(token) {
      try {
        const claims = await check(checkTokenSyntax(token, maxTokenLength, syntax), DIRECT, undefined);
        return claims as VerifiedClaims;
      } catch (err) {
        const failure = withChallenge(asTokenAuthError(err), { realm, resourceMetadata, scope: '' });
        this.report(failure, undefined);
        throw failure;
      }
    },
    verifiedToken: (req) => verifiedTokens?.get(req),
    async reverify(token, req) {
      try {
        return await authorize(await verifier.verify(token), OPEN_ROUTE, req);
      } catch (err) {
        const failure = challenge(asTokenAuthError(err), req, OPEN_ROUTE);
        this.report(failure, req);
        throw failure;
      }
    },
    report(err, req) {
      // What was expected, and from which option, for onError and the debug line alike (never sent).
      err.hint = explain(err);
      debugRefusal(err);
      if (onError === undefined) return;
      try {
        onError(err, req);
      } catch {
        // A logging hook must not turn a clean 401 into a crash.
      }
    },
    close() {
      revocationList?.unfollow();
      unwatch?.();
    },
  };
  return authenticator;
}

/** Record the token of a request that passed, and pass its claims on. */
function noteVerified(
  tokens: WeakMap<Request, string>,
  req: Request,
  token: string,
  claims: VerifiedClaims,
): VerifiedClaims {
  tokens.set(req, token);
  return claims;
}
