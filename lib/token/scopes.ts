// Scope requirements of a route (a list, `{ all }` or `{ any }`) and the check of granted scopes against them (with
// the scopes they imply, token/scope-implies.ts).
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { ScopeImplication } from './scope-implies';
/** A scope requirement: all of an array, or `{ all, any }` (every `all` scope and at least one `any` scope). */
export type ScopeRequirementInput = readonly string[] | { all?: readonly string[]; any?: readonly string[] };

/** A requirement parsed once, at set-up. */
export interface ScopeRequirement {
  readonly all: readonly string[];
  readonly any: readonly string[];
  /**
   * The scopes a challenge names when nothing is known of the token (a 401), space-separated: every `all` scope
   * and the first `any` alternative (see `scopeChallenge`).
   */
  readonly challenge: string;
}

const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/; // RFC 6749 §3.3 scope-token

/** The fields of a `{ all, any }` requirement. */
const REQUIREMENT_FIELDS: FieldList<{ all?: unknown; any?: unknown }> = { all: true, any: true };

function scopeList(value: unknown, option: string, where: string): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) optionError(option, `${where} must be an array of scope strings`);
  for (const scope of value) {
    if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)) {
      optionError(
        option,
        `${where} holds an invalid scope (scopes are non-empty strings without spaces, quotes or backslashes)`,
      );
    }
  }
  return Object.freeze([...new Set(value as string[])]);
}

/**
 * Parse and validate a requirement; an OptionError at `option` (its path, `'scopes'` for a route's) for anything
 * malformed, `where` naming it in the message.
 */
export function parseScopeRequirement(input: unknown, option = 'scopes', where = option): ScopeRequirement {
  let all: readonly string[];
  let any: readonly string[];
  if (input === undefined || Array.isArray(input)) {
    all = scopeList(input, option, where);
    any = [];
  } else if (isObject(input)) {
    knownFields(input, REQUIREMENT_FIELDS, option, undefined, (_path, _known, name) => {
      return `${where} accepts only "all" and "any", not "${name}"`;
    });
    all = scopeList(input.all, `${option}.all`, `${where}.all`);
    any = scopeList(input.any, `${option}.any`, `${where}.any`);
  } else {
    optionError(option, `${where} must be an array of scopes or { all, any }`);
  }
  return Object.freeze({ all, any, challenge: challengeOf(all, any, undefined) });
}

function challengeOf(all: readonly string[], any: readonly string[], granted: readonly string[] | undefined): string {
  if (any.length === 0 || any.some((scope) => all.includes(scope))) return all.join(' ');
  const alternative = (granted === undefined ? undefined : any.find((scope) => granted.includes(scope))) ?? any[0];
  return [...all, alternative].join(' ');
}

/**
 * The scopes an `insufficient_scope` challenge names for a token holding `granted`: every scope the operation
 * needs, in one challenge, so that a client asking for exactly these gets through. Of `any` alternatives only
 * one is named: the one the token already holds, else the first (the route's preferred one). Naming every
 * alternative would make a client ask for all of them, more than the operation needs and possibly more than the
 * user may grant; naming the held one keeps a step-up from dropping what already satisfies the route.
 */
export function scopeChallenge(requirement: ScopeRequirement, granted: readonly string[] | undefined): string {
  if (requirement.any.length === 0 || granted === undefined) return requirement.challenge;
  return challengeOf(requirement.all, requirement.any, granted);
}

/** The requirement that nothing is required (optional routes, `verify()`, a router's unknown view). */
export const NO_SCOPES: ScopeRequirement = parseScopeRequirement(undefined);

/** Combine requirements: every `all` from both; `any` sets cannot be merged, so at most one may have one. */
export function addRequiredScopes(req: ScopeRequirement, extra: readonly string[]): ScopeRequirement {
  return parseScopeRequirement({ all: [...req.all, ...extra], any: req.any });
}

function meets(requirement: ScopeRequirement, granted: readonly string[]): boolean {
  for (const scope of requirement.all) if (!granted.includes(scope)) return false;
  if (requirement.any.length === 0) return true;
  for (const scope of requirement.any) if (granted.includes(scope)) return true;
  return false;
}

/**
 * Whether granted scopes meet a requirement: as granted, or with the scopes they imply (`scopeImplies`), which are
 * worked out only when the granted ones fall short.
 */
export function checkScopes(
  requirement: ScopeRequirement,
  granted: readonly string[] | undefined,
  implied?: ScopeImplication,
): boolean {
  if (requirement.all.length === 0 && requirement.any.length === 0) return true;
  if (granted === undefined) return false;
  if (meets(requirement, granted)) return true;
  return implied !== undefined && meets(requirement, implied.widen(granted));
}
