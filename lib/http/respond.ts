// Answers a failure as the service does: status, RFC 6750 challenge and JSON body, or next(err) with errors: 'next'.
import type { ErrorRequestHandler, NextFunction, Request, Response } from 'express';
import type { Authenticator } from './authenticate';
import { asTokenAuthError, TokenAuthError } from '../base/errors';

/** Write a TokenAuthError as `{ status: 'error', message }` with its headers; JSON, never HTML. */
export function sendError(res: Response, err: TokenAuthError): void {
  res.status(err.status);
  for (const name in err.headers) res.setHeader(name, err.headers[name]);
  res.json(err.toJSON());
}

/**
 * The one way a failure leaves this package's handlers: reported to `onError`, then passed to `next(err)` with
 * `errors: 'next'`, or answered (unless something already started the response).
 */
export function failRequest(auth: Authenticator, err: unknown, req: Request, res: Response, next: NextFunction): void {
  const failure = asTokenAuthError(err);
  auth.report(failure, req);
  if (auth.errors === 'next') next(failure);
  else if (!res.headersSent) sendError(res, failure);
}

/**
 * Express error handler for `errors: 'next'`: renders a TokenAuthError as the middleware would have, and any
 * other error as a bare 500 with no detail. Mount it after your routes.
 */
export function errorHandler(): ErrorRequestHandler {
  return function tokenAuthErrorHandler(err: unknown, _req, res, next) {
    if (res.headersSent) {
      next(err);
      return;
    }
    sendError(res, err instanceof TokenAuthError ? err : new TokenAuthError('internal', { cause: err }));
  };
}
