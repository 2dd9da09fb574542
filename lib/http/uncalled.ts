// Middleware factories that still work when mounted uncalled (`app.use(auth.requireVerifiedUser)`).
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Whether a middleware factory is being run by Express itself, i.e. it was mounted uncalled
 * (`app.get('/me', auth.requireVerifiedUser, …)`): the arguments are then a request, a response and `next`.
 */
function isExpressCall(args: readonly unknown[]): args is [Request, Response, NextFunction] {
  if (args.length < 3 || typeof args[2] !== 'function') return false;
  const [req, res] = args as [Record<string, unknown> | null, Record<string, unknown> | null];
  return (
    typeof req === 'object' &&
    req !== null &&
    typeof req.method === 'string' &&
    typeof req.headers === 'object' &&
    typeof res === 'object' &&
    res !== null &&
    typeof res.setHeader === 'function'
  );
}

/**
 * Wrap a middleware factory so that mounting it uncalled works as calling it with no arguments: the handler is
 * built once, on the first request, and used from then on. If building it throws (a misconfiguration that the
 * call at set-up would have reported), the request gets the package's bare JSON 500, never Express's HTML page
 * with a stack, and the cause is reported once as a process warning that says how to call the factory.
 */
export function acceptUncalled<A extends unknown[]>(
  name: string,
  factory: (...args: A) => RequestHandler,
): (...args: A) => RequestHandler {
  // What the factory returns when Express runs it: Express ignores it.
  const ignored: RequestHandler = () => undefined;
  let handler: RequestHandler | undefined;
  let warned = false;
  return function middlewareFactory(...args: A): RequestHandler {
    if (!isExpressCall(args)) return factory(...args);
    const [req, res, next] = args;
    try {
      handler ??= factory(...([] as unknown[] as A));
    } catch (err) {
      if (!warned) {
        warned = true;
        const cause = err instanceof Error ? err.message : String(err);
        process.emitWarning(
          `${name} was mounted without being called, and calling it failed: ${cause}. ` +
            `Call it once at set-up instead, e.g. app.get('/me', ${name}(), handler), so that this fails at start-up.`,
          { code: 'EXPRESS_VERIFIED_USER_UNCALLED' },
        );
      }
      if (!res.headersSent) res.status(500).json({ status: 'error', message: 'Internal server error' });
      return ignored;
    }
    handler(req, res, next);
    return ignored;
  };
}
