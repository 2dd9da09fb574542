// The top-level instance built from environment variables (TOKEN_SECRET, TOKEN_ISSUER, …) and the factories the
// entry exports for it; wires the composition (token-auth.ts) once, on first use.
import type { RequestHandler } from 'express';
import type { VerifyRouterOptions } from './http/router';
import type { ScopeRequirementInput } from './token/scopes';
import type { RouteOptions } from './token/step-up';
import { createTokenAuth, type TokenAuth } from './token-auth';
import { fromVariable, optionsFromEnv } from './config/environment';
import { acceptUncalled } from './http/uncalled';

export { optionsFromEnv };

let defaultAuth: TokenAuth | undefined;

/** The process-wide TokenAuth configured from the environment, built on first use (at app set-up). */
export function defaultTokenAuth(): TokenAuth {
  if (defaultAuth === undefined) {
    const options = optionsFromEnv(process.env);
    try {
      defaultAuth = createTokenAuth(options);
    } catch (err) {
      throw fromVariable(err);
    }
  }
  return defaultAuth;
}

/** Forget the default TokenAuth (closing it), so that the next use reads the environment again. For tests. */
export function resetDefaultTokenAuth(): void {
  defaultAuth?.close();
  defaultAuth = undefined;
}

/** `requireVerifiedUser` on the environment-configured default TokenAuth; throws a TypeError now if unconfigured. */
export const requireVerifiedUser: (scopes?: ScopeRequirementInput, options?: RouteOptions) => RequestHandler =
  acceptUncalled('requireVerifiedUser', (scopes?: ScopeRequirementInput, options?: RouteOptions) =>
    defaultTokenAuth().requireVerifiedUser(scopes, options),
  );

/** `verifyRouter` on the environment-configured default TokenAuth; throws a TypeError now if unconfigured. */
export const verifyRouter: (options?: VerifyRouterOptions) => RequestHandler = acceptUncalled(
  'verifyRouter',
  (options?: VerifyRouterOptions) => defaultTokenAuth().verifyRouter(options),
);
