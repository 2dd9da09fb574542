// The one route guard under every middleware (requireVerifiedUser, optionalVerifiedUser, the verify endpoint,
// requireMcpAuth): preflight → authenticate → a verdict now or later → accept, or answer the failure; and its face
// for other entries of this package (`routeGuard(auth)`), with the requirement picked per request.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { TokenAuthError } from '../base/errors';
import { isThenable } from '../base/values';
import { isPreflight } from '../extract/bearer';
import type { RegisteredClaims } from '../token/claim-modes';
import type { VerifiedClaims } from '../token/claims';
import type { ScopeReader } from '../token/scope-claim';
import { scopeChallenge, type ScopeRequirementInput } from '../token/scopes';
import type { RequirementParser, RouteOptions, RouteRequirement } from '../authorize/route';
import type { Authenticator, RouteAuthentication } from './authenticate';
import { failRequest } from './respond';

/** One route's use of the guard, built once at set-up. */
export interface GuardedRoute {
  /**
   * What the route's requests must meet: one RouteAuthentication built at set-up, or a function that picks one
   * per request (a tool's scopes, a view's). What the function throws refuses the request, as `accept` below.
   */
  readonly authentication: RouteAuthentication | ((req: Request, res: Response) => RouteAuthentication);
  /**
   * A request that passed: put its claims where the route's handlers read them, and the guard calls `next()`; or
   * return a promise when the route answers the request itself (the verify endpoint), whose rejection is answered.
   * A TokenAuthError thrown here is the answer; anything else is a 500 whose cause is kept for `onError`.
   */
  accept(req: Request, res: Response, claims: VerifiedClaims | undefined): void | Promise<void>;
}

/** What a route's own function threw, as the answer: a TokenAuthError as it is, anything else a 500 with its cause. */
function hookFailure(err: unknown): TokenAuthError {
  return err instanceof TokenAuthError
    ? err
    : new TokenAuthError('internal', { reason: 'guard-hook-threw', cause: err });
}

/**
 * The Express middleware of one route. A CORS preflight passes through unauthenticated; a verdict given at once
 * (a cache hit) is accepted in the same tick, one given later when it comes; a failure leaves through respond.ts.
 */
export function guardRoute(auth: Authenticator, route: GuardedRoute): RequestHandler {
  const { authentication, accept } = route;
  const fail = (err: unknown, req: Request, res: Response, next: NextFunction) =>
    failRequest(auth, err, req, res, next);
  const passed = (claims: VerifiedClaims | undefined, req: Request, res: Response, next: NextFunction) => {
    let answered: void | Promise<void>;
    try {
      answered = accept(req, res, claims);
    } catch (err) {
      fail(hookFailure(err), req, res, next);
      return;
    }
    if (isThenable(answered)) answered.then(undefined, (err: unknown) => fail(err, req, res, next));
    else next();
  };

  return function verifiedRoute(req, res, next) {
    if (isPreflight(req.method, req.headers)) {
      next();
      return;
    }
    let chosen = authentication;
    if (typeof chosen === 'function') {
      try {
        chosen = chosen(req, res);
      } catch (err) {
        fail(hookFailure(err), req, res, next);
        return;
      }
    }
    let result;
    try {
      result = auth.authenticate(req, chosen);
    } catch (err) {
      fail(err, req, res, next);
      return;
    }
    if (isThenable(result))
      result.then(
        (claims) => passed(claims, req, res, next),
        (err: unknown) => fail(err, req, res, next),
      );
    else passed(result, req, res, next);
  };
}

/** A request that passed a guard: its claims, typed by the claims mode, and the access token that carried them. */
export interface VerifiedRequest<C extends RegisteredClaims = RegisteredClaims> {
  readonly claims: C;
  readonly token: string;
}

/**
 * What another entry needs of a TokenAuth to guard routes of its own (`routeGuard(auth)`), and nothing more:
 * requirements parsed at set-up, a middleware that picks one per request, the resource, and the 403 challenge.
 */
export interface RouteGuard<C extends RegisteredClaims = RegisteredClaims> {
  /** The configured `resource`, exactly as given; undefined without one. */
  readonly resource: string | undefined;
  /** The URL of the resource's metadata document (every challenge's `resource_metadata`); undefined without one. */
  readonly resourceMetadataUrl: string | undefined;
  /** `dpop.required`: every token must come with a DPoP proof, so a path that only ever sees Bearer tokens cannot serve it. */
  readonly dpopRequired: boolean;
  /** A requirement as `requireVerifiedUser(scopes, options)` takes it, parsed now (a TypeError when malformed). */
  requirement(scopes?: ScopeRequirementInput, options?: RouteOptions<C>): RouteRequirement;
  /**
   * The route requirements (roles, claims, …, allow) among the fields of an entry's own options, parsed now with
   * this TokenAuth's `roleClaim`, `groupClaim` and `permissionClaim`; undefined when they set none.
   */
  requirements: RequirementParser['requirements'];
  /**
   * Middleware that verifies exactly as `requireVerifiedUser` does (same pipeline, cache, challenges, `errors`
   * and `onError`), with the requirement `pick(req)` answers for this request. On success it calls
   * `accept(req, verified)` instead of setting `req.auth`, then `next()`; `auth.claims(req)` still answers.
   * `pick` or `accept` throwing a TokenAuthError answers with it; anything else they throw is a 500.
   */
  middleware(
    pick: (req: Request) => RouteRequirement,
    accept: (req: Request, verified: VerifiedRequest<C>) => void,
  ): RequestHandler;
  /**
   * The 403 `insufficient_scope` failure this request gets for `requirement`, its challenge (Bearer or DPoP,
   * `resource_metadata`) included; `claims` make the `any` alternative the one the token holds (see scopeChallenge).
   */
  insufficientScope(req: Request, requirement: RouteRequirement, claims?: C): TokenAuthError;
}

// Claims verified by a guard whose `accept` put something else on req.auth, for `auth.claims(req)`.
const guarded = new WeakMap<Request, VerifiedClaims>();

/** The claims a guard verified for this request, if one did. */
export function guardedClaims(req: Request): VerifiedClaims | undefined {
  return guarded.get(req);
}

/** Build the guard of one TokenAuth for other entries. */
export function createRouteGuard<C extends RegisteredClaims>(
  auth: Authenticator,
  resource: { resource: string; metadataUrl: string } | undefined,
  scopesOf: ScopeReader,
  dpopRequired: boolean,
  parser: RequirementParser,
): RouteGuard<C> {
  // The token each request carried, for `accept`; it lives no longer than the request, which holds it anyway.
  const tokens = new WeakMap<Request, string>();
  const tokenSeen = (req: Request, token: string) => {
    tokens.set(req, token);
  };
  // One RouteAuthentication per requirement, made the first time `pick` answers it: requirements are parsed at
  // set-up, so a route's authentications are too; a requirement made per request goes when it does.
  const authentications = new WeakMap<RouteRequirement, RouteAuthentication>();
  const authenticationOf = (requirement: RouteRequirement): RouteAuthentication => {
    let made = authentications.get(requirement);
    if (made === undefined) {
      made = Object.freeze({ requirement, tokenOptional: false, tokenSeen });
      authentications.set(requirement, made);
    }
    return made;
  };

  return {
    resource: resource?.resource,
    resourceMetadataUrl: resource?.metadataUrl,
    dpopRequired,
    requirement: (scopes, options) => parser.route(scopes, options),
    requirements: parser.requirements,
    middleware(pick, accept) {
      return guardRoute(auth, {
        authentication: (req) => authenticationOf(pick(req)),
        accept(req, _res, claims) {
          guarded.set(req, claims as VerifiedClaims);
          accept(req, { claims: claims as VerifiedClaims | RegisteredClaims as C, token: tokens.get(req) as string });
        },
      });
    },
    insufficientScope(req, requirement, claims) {
      const granted = claims === undefined ? undefined : scopesOf(claims);
      const err = new TokenAuthError('insufficient_scope', {
        scope: scopeChallenge(requirement.scopes, granted),
        reason: 'scope',
      });
      return auth.challenge(err, req, requirement);
    },
  };
}
