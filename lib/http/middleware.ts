// requireVerifiedUser and optionalVerifiedUser: the route guard with the route's authentication, putting the
// verified claims on req.auth.
import type { Request, RequestHandler } from 'express';
import type { VerifiedClaims } from '../token/claims';
import { OPEN_ROUTE, type RouteRequirement } from '../authorize/route';
import { authenticationFor, type Authenticator, type RouteAuthentication } from './authenticate';
import { guardRoute } from './guard';

function putOnRequest(req: Request, _res: unknown, claims: VerifiedClaims | undefined): void {
  // Not through the declared type: a program that loads the mcp entry declares req.auth as the SDK's AuthInfo.
  (req as { auth?: unknown }).auth = claims;
}

/** `requireVerifiedUser(scopes, options)`: a valid token meeting `requirement` (parsed at set-up), else an answer. */
export function requireVerifiedUser(auth: Authenticator, requirement: RouteRequirement): RequestHandler {
  return guardRoute(auth, {
    authentication: authenticationFor(requirement),
    accept: putOnRequest,
  });
}

const OPTIONAL: RouteAuthentication = Object.freeze({
  requirement: OPEN_ROUTE,
  tokenOptional: true,
  tokenSeen: undefined,
});

/** `optionalVerifiedUser()`: no token → `req.auth` undefined and `next()`; a token that is present must be valid. */
export function optionalVerifiedUser(auth: Authenticator): RequestHandler {
  return guardRoute(auth, { authentication: OPTIONAL, accept: putOnRequest });
}
