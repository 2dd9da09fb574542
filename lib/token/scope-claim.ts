// Where granted scopes are read from a token (`scopeClaim`: a name, several, or a function).
import { TokenAuthError } from '../base/errors';
import { isStringArray } from '../base/values';
import { optionError } from '../base/option-error';

/** Where granted scopes are read: a claim name, several (the first present is read), or a function of the claims. */
export type ScopeClaimOption =
  string | readonly string[] | ((claims: Readonly<Record<string, unknown>>) => readonly string[] | undefined);

/** Reads the granted scopes of verified claims; undefined when there are none in a usable form. */
export type ScopeReader = (claims: Readonly<Record<string, unknown>>) => readonly string[] | undefined;

let lastScopeString = '';
let lastScopes: readonly string[] = Object.freeze([]);

/**
 * A claim's value as scopes: a space-separated string (RFC 6749 §3.3, RFC 9068 `scope`) or an array of strings
 * (Okta's `scp`, Spring's `scope`, Auth0's `permissions`). Anything else counts as no scopes, so a route that
 * requires scopes answers 403 rather than failing on an unexpected type.
 */
export function scopesFromValue(value: unknown): readonly string[] | undefined {
  if (typeof value === 'string') {
    // Requests in a row mostly carry the same scope string (a cached verdict hands over the same claims): the last
    // split is reused, frozen, so that no reader can change what the next request is checked against.
    if (value !== lastScopeString) {
      lastScopes = Object.freeze(value.split(' ').filter((s) => s !== ''));
      lastScopeString = value;
    }
    return lastScopes;
  }
  if (isStringArray(value)) return value;
  return undefined;
}

function fromClaims(names: readonly string[]): ScopeReader {
  if (names.length === 1) {
    const name = names[0];
    return (claims) => scopesFromValue(claims[name]);
  }
  return (claims) => {
    for (const name of names) {
      const value = claims[name];
      if (value !== undefined) return scopesFromValue(value);
    }
    return undefined;
  };
}

/**
 * The `scopeClaim` option as a reader; `defaults` are the mode's claim names. A function's answer is read with the
 * same rule as a claim's value; a function that throws is the app's bug: a 500 whose cause goes to `onError` only.
 */
export function resolveScopeClaim(value: unknown, defaults: readonly string[]): ScopeReader {
  if (value === undefined) return fromClaims(defaults);
  if (typeof value === 'function') {
    const hook = value as (claims: Readonly<Record<string, unknown>>) => unknown;
    return (claims) => {
      let answer: unknown;
      try {
        answer = hook(claims);
      } catch (err) {
        throw new TokenAuthError('internal', { reason: 'scopeClaim-threw', cause: err });
      }
      return scopesFromValue(answer);
    };
  }
  const names = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== 'string' || n === '')) {
    optionError(
      'scopeClaim',
      'option "scopeClaim" must be a claim name, a non-empty array of claim names, or a function (claims) => string[] | undefined',
    );
  }
  return fromClaims([...names] as string[]);
}
