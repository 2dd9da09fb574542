// The top-level instance built from environment variables (TOKEN_SECRET, TOKEN_ISSUER, …) and the factories the
// entry exports for it; wires the composition (token-auth.ts) once, on first use.
import type { RequestHandler } from 'express';
import type { KeyOption, TokenAuthOptions } from './config/options';
import type { VerifyRouterOptions } from './http/router';
import type { ScopeRequirementInput } from './token/scopes';
import type { RouteOptions } from './token/step-up';
import { createTokenAuth, type TokenAuth } from './token-auth';
import type { Algorithm } from './keys/algorithms';
import { claimsFromEnv } from './config/environment';
import { acceptUncalled } from './http/uncalled';
import { optionError } from './base/option-error';

const KEY_VARIABLES = ['TOKEN_SECRET', 'TOKEN_PUBLIC_KEY', 'TOKEN_JWKS_URI', 'TOKEN_UPSTREAM_URL', 'TOKEN_ISSUER_BASE_URL'] as const;

function list(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function accepted(env: NodeJS.ProcessEnv, name: 'TOKEN_ISSUER' | 'TOKEN_AUDIENCE'): string | string[] | false {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    optionError(`set ${name} (a value, a comma-separated list, or "false" to leave it unchecked on purpose)`);
  }
  if (value.trim() === 'false') return false;
  const values = list(value);
  return values.length === 1 ? values[0] : values;
}

/**
 * Options for the default TokenAuth from environment variables: one of TOKEN_SECRET, TOKEN_PUBLIC_KEY (PEM),
 * TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL or TOKEN_ISSUER_BASE_URL, plus TOKEN_ISSUER, TOKEN_AUDIENCE and optionally TOKEN_ALGORITHMS, TOKEN_CLAIMS
 * and TOKEN_SCOPE_CLAIM.
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv): TokenAuthOptions {
  const set = KEY_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== '');
  if (set.length === 0) optionError(`no key configured: set one of ${KEY_VARIABLES.join(', ')}`);
  if (set.length > 1) optionError(`set only one of ${KEY_VARIABLES.join(', ')} (found ${set.join(' and ')})`);
  const value = env[set[0]] as string;
  if (set[0] === 'TOKEN_ISSUER_BASE_URL') return issuerBaseURLFromEnv(env, list(value));
  const key: KeyOption =
    set[0] === 'TOKEN_SECRET' ? { secret: value }
      : set[0] === 'TOKEN_PUBLIC_KEY' ? { publicKey: value.replace(/\\n/g, '\n') }
        : set[0] === 'TOKEN_JWKS_URI' ? { jwksUri: value }
          : { upstream: value };
  const options: TokenAuthOptions = { key, issuer: accepted(env, 'TOKEN_ISSUER'), audience: accepted(env, 'TOKEN_AUDIENCE') };
  if (env.TOKEN_ALGORITHMS !== undefined && env.TOKEN_ALGORITHMS !== '') options.algorithms = list(env.TOKEN_ALGORITHMS) as Algorithm[];
  Object.assign(options, claimsFromEnv(env));
  return options;
}

/**
 * TOKEN_ISSUER_BASE_URL (a comma list for several authorization servers): discovery replaces the key and the
 * issuer, so TOKEN_ISSUER set as well is passed on, for createTokenAuth to refuse with a TypeError.
 */
function issuerBaseURLFromEnv(env: NodeJS.ProcessEnv, bases: string[]): TokenAuthOptions {
  const options: TokenAuthOptions = { issuerBaseURL: bases.length === 1 ? bases[0] : bases, audience: accepted(env, 'TOKEN_AUDIENCE') };
  if (env.TOKEN_ISSUER !== undefined && env.TOKEN_ISSUER !== '') options.issuer = accepted(env, 'TOKEN_ISSUER');
  if (env.TOKEN_ALGORITHMS !== undefined && env.TOKEN_ALGORITHMS !== '') options.algorithms = list(env.TOKEN_ALGORITHMS) as Algorithm[];
  Object.assign(options, claimsFromEnv(env));
  return options;
}

let defaultAuth: TokenAuth | undefined;

/** The process-wide TokenAuth configured from the environment, built on first use (at app set-up). */
export function defaultTokenAuth(): TokenAuth {
  defaultAuth ??= createTokenAuth(optionsFromEnv(process.env));
  return defaultAuth;
}

/** Forget the default TokenAuth (closing it), so that the next use reads the environment again. For tests. */
export function resetDefaultTokenAuth(): void {
  defaultAuth?.close();
  defaultAuth = undefined;
}

/** `requireVerifiedUser` on the environment-configured default TokenAuth; throws a TypeError now if unconfigured. */
export const requireVerifiedUser: (scopes?: ScopeRequirementInput, options?: RouteOptions) => RequestHandler = acceptUncalled(
  'requireVerifiedUser', (scopes?: ScopeRequirementInput, options?: RouteOptions) => defaultTokenAuth().requireVerifiedUser(scopes, options));

/** `verifyRouter` on the environment-configured default TokenAuth; throws a TypeError now if unconfigured. */
export const verifyRouter: (options?: VerifyRouterOptions) => RequestHandler = acceptUncalled(
  'verifyRouter', (options?: VerifyRouterOptions) => defaultTokenAuth().verifyRouter(options));
