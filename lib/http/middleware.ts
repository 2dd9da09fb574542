// The Express middleware of requireVerifiedUser and optionalVerifiedUser: runs authenticate, sets req.auth, answers
// failures through respond.ts.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Authenticator } from './authenticate';
import { isPreflight } from '../extract/bearer';
import type { VerifiedClaims } from '../token/claims';
import { failRequest } from './respond';
import type { RouteRequirement } from '../token/step-up';
import { isThenable } from '../base/values';

/**
 * The Express adapter: run the authenticator, put the claims on `req.auth`, and answer or forward failures.
 * A CORS preflight passes through unauthenticated.
 */
export function verifiedUserMiddleware(
  auth: Authenticator,
  requirement: RouteRequirement,
  optional: boolean,
): RequestHandler {
  const fail = (err: unknown, req: Request, res: Response, next: NextFunction) =>
    failRequest(auth, err, req, res, next);
  const succeed = (claims: VerifiedClaims | undefined, req: Request, next: NextFunction) => {
    // Not through the declared type: a program that loads the mcp entry declares req.auth as the SDK's AuthInfo.
    (req as { auth?: unknown }).auth = claims;
    next();
  };

  return function verifiedUser(req, res, next) {
    if (isPreflight(req.method, req.headers)) {
      next();
      return;
    }
    let result;
    try {
      result = auth.authenticate(req, requirement, optional);
    } catch (err) {
      fail(err, req, res, next);
      return;
    }
    if (isThenable(result))
      result.then(
        (claims) => succeed(claims, req, next),
        (err: unknown) => fail(err, req, res, next),
      );
    else succeed(result, req, next);
  };
}
