// A route guard for other entries of this package (express-verified-user/mcp): the middleware of
// requireVerifiedUser with the requirement picked per request and the verified token handed over, plus challenges.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { TokenAuthError } from '../base/errors';
import { isThenable } from '../base/values';
import { isPreflight } from '../extract/bearer';
import type { JwtClaims } from '../token/claim-modes';
import type { VerifiedClaims } from '../token/claims';
import { scopeChallenge, type ScopeRequirementInput } from '../token/scopes';
import { parseRouteRequirement, type RouteOptions, type RouteRequirement } from '../token/step-up';
import type { Authenticator, SeenToken } from './authenticate';
import { failRequest } from './respond';

/** A request that passed a guard: its claims, typed by the claims mode, and the access token that carried them. */
export interface VerifiedRequest<C extends JwtClaims = JwtClaims> {
  readonly claims: C;
  readonly token: string;
}

/**
 * What another entry needs of a TokenAuth to guard routes of its own (`routeGuard(auth)`), and nothing more:
 * requirements parsed at set-up, a middleware that picks one per request, the resource, and the 403 challenge.
 */
export interface RouteGuard<C extends JwtClaims = JwtClaims> {
  /** The configured `resource`, exactly as given; undefined without one. */
  readonly resource: string | undefined;
  /** The URL of the resource's metadata document (every challenge's `resource_metadata`); undefined without one. */
  readonly resourceMetadataUrl: string | undefined;
  /** `dpop.required`: every token must come with a DPoP proof, so a path that only ever sees Bearer tokens cannot serve it. */
  readonly dpopRequired: boolean;
  /** A requirement as `requireVerifiedUser(scopes, options)` takes it, parsed now (a TypeError when malformed). */
  requirement(scopes?: ScopeRequirementInput, options?: RouteOptions): RouteRequirement;
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

/** Build the guard of one TokenAuth. */
export function createRouteGuard<C extends JwtClaims>(
  auth: Authenticator,
  resource: { resource: string; metadataUrl: string } | undefined,
  scopesOf: (claims: Readonly<Record<string, unknown>>) => readonly string[] | undefined,
  dpopRequired: boolean,
): RouteGuard<C> {
  const fail = (err: unknown, req: Request, res: Response, next: NextFunction) =>
    failRequest(auth, err, req, res, next);
  const asFailure = (err: unknown) =>
    err instanceof TokenAuthError ? err : new TokenAuthError('internal', { reason: 'guard-hook-threw', cause: err });

  return {
    resource: resource?.resource,
    resourceMetadataUrl: resource?.metadataUrl,
    dpopRequired,
    requirement: (scopes, options) => parseRouteRequirement(scopes, options),
    middleware(pick, accept) {
      return function guard(req, res, next) {
        if (isPreflight(req.method, req.headers)) {
          next();
          return;
        }
        const seen: SeenToken = { token: undefined };
        const succeed = (claims: VerifiedClaims | undefined) => {
          try {
            guarded.set(req, claims as VerifiedClaims);
            accept(req, { claims: claims as VerifiedClaims | JwtClaims as C, token: seen.token as string });
          } catch (err) {
            fail(asFailure(err), req, res, next);
            return;
          }
          next();
        };
        let result;
        try {
          result = auth.authenticate(req, pick(req), false, seen);
        } catch (err) {
          fail(asFailure(err), req, res, next);
          return;
        }
        if (isThenable(result)) result.then(succeed, (err: unknown) => fail(err, req, res, next));
        else succeed(result);
      };
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
