// What a route requires of a verified token beyond scopes and step-up (docs/authorization.md): roles, permissions,
// groups, claims, RFC 9396 authorization details, issuers and `allow`, as users write them; parsed once, when the
// route is built, into the checks of checks.ts. Every malformed requirement is an OptionError at its dotted path.
import type { Request } from 'express';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { RegisteredClaims } from '../token/claim-modes';
import type { ValueKind, ValueSources } from './claim-values';
import {
  claimCheck,
  issuerCheck,
  valueCheck,
  type AllowHook,
  type Check,
  type ClaimValue,
  type RouteAuthorization,
  type ValueRule,
} from './checks';
import { detailCheck, parseDetails, type AuthorizationDetailRequirement } from './details';
import type { RequirementOwner } from './refusal';

export type { ClaimValue } from './checks';
export type { AuthorizationDetailRequirement } from './details';

/** Values a route requires: all of an array, or `{ all, any }` (every `all` value and one of the `any` values). */
export type ValueRequirementInput = readonly string[] | { all?: readonly string[]; any?: readonly string[] };

/**
 * What a route requires of a verified token besides scopes (docs/authorization.md), checked in this order after the
 * scopes and step-up; the first one not met answers 403 `forbidden`. `C`: the claims the TokenAuth's mode guarantees.
 */
export interface RouteRequirements<C extends RegisteredClaims = RegisteredClaims> {
  /** Roles, read where option `roleClaim` says (default claim `roles`). */
  roles?: ValueRequirementInput;
  /** Permissions, read where option `permissionClaim` says (default claim `permissions`). */
  permissions?: ValueRequirementInput;
  /** Groups, read where option `groupClaim` says (default claim `groups`). */
  groups?: ValueRequirementInput;
  /**
   * Top-level claims, each equal to the value or to one of an array of values; a claim that is an array must contain
   * the value (or one of them).
   */
  claims?: Readonly<Record<string, ClaimValue | readonly ClaimValue[]>>;
  /** RFC 9396: one entry of the token's `authorization_details` meets each (strings compare exactly). */
  authorizationDetails?: AuthorizationDetailRequirement | readonly AuthorizationDetailRequirement[];
  /** Only tokens of these issuers (`iss`), for a TokenAuth that accepts several. */
  issuers?: string | readonly string[];
  /** The app's rule, run last and only when all else is met: `true` passes; a throw or rejection answers 500. */
  allow?: (claims: Readonly<C>, req: Request) => boolean | Promise<boolean>;
}

/** The fields of RouteRequirements, for the route options' known fields. */
export const REQUIREMENT_FIELDS: FieldList<RouteRequirements> = {
  roles: true,
  permissions: true,
  groups: true,
  claims: true,
  authorizationDetails: true,
  issuers: true,
  allow: true,
};

/** Where a requirement is parsed: the sources of values, who set it (for hints), and its path (for OptionErrors). */
export interface RequirementContext {
  readonly sources: ValueSources;
  readonly owner: RequirementOwner;
  /** The dotted path its fields sit under (`''` for requireVerifiedUser's options, `tools.deploy` for a tool's). */
  readonly path: string;
  /** The function that takes it, as messages name it: `requireVerifiedUser`, `requireMcpAuth`. */
  readonly who: string;
}

const ORDER: Readonly<Record<ValueKind | 'claim' | 'detail' | 'issuer', number>> = {
  role: 0,
  permission: 1,
  group: 2,
  claim: 3,
  detail: 4,
  issuer: 5,
};

const KIND_OF: ReadonlyArray<readonly [ValueKind, 'roles' | 'permissions' | 'groups']> = [
  ['role', 'roles'],
  ['permission', 'permissions'],
  ['group', 'groups'],
];

const RULE_FIELDS: FieldList<{ all?: unknown; any?: unknown }> = { all: true, any: true };

function fail(context: RequirementContext, field: string, message: string): never {
  const path = context.path === '' ? field : `${context.path}.${field}`;
  return optionError(path, `${context.who} option "${path}" ${message}`);
}

function stringsAt(value: unknown, context: RequirementContext, field: string): readonly string[] {
  if (!Array.isArray(value) || value.length === 0) fail(context, field, 'must be a non-empty array of strings');
  value.forEach((item, index) => {
    if (typeof item !== 'string' || item === '') fail(context, `${field}[${index}]`, 'must be a non-empty string');
  });
  return Object.freeze([...(value as string[])]);
}

function parseRule(value: unknown, context: RequirementContext, field: string): ValueRule {
  if (Array.isArray(value)) return Object.freeze({ all: stringsAt(value, context, field), any: [] });
  if (!isObject(value)) fail(context, field, 'must be an array of values or { all, any }');
  knownFields(value, RULE_FIELDS, context.path === '' ? field : `${context.path}.${field}`, undefined, (path) => {
    return `${context.who} option "${path}" is not "all" or "any"`;
  });
  if (value.all === undefined && value.any === undefined) fail(context, field, 'must name "all" or "any" values');
  return Object.freeze({
    all: value.all === undefined ? [] : stringsAt(value.all, context, `${field}.all`),
    any: value.any === undefined ? [] : stringsAt(value.any, context, `${field}.any`),
  });
}

const isClaimValue = (value: unknown): value is ClaimValue =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

function parseClaims(value: unknown, context: RequirementContext): Check[] {
  if (!isObject(value) || Object.keys(value).length === 0)
    fail(context, 'claims', 'must be an object { claimName: value } naming at least one claim');
  return Object.entries(value).map(([name, expected]) => {
    const field = `claims.${name}`;
    if (name === '') fail(context, field, 'must name a claim');
    const accepted = Array.isArray(expected) ? expected : [expected];
    if (accepted.length === 0) fail(context, field, 'must not be an empty array');
    accepted.forEach((one, index) => {
      if (!isClaimValue(one))
        fail(
          context,
          Array.isArray(expected) ? `${field}[${index}]` : field,
          'must be a string, a finite number or a boolean (or an array of them)',
        );
    });
    return claimCheck(name, Object.freeze([...(accepted as ClaimValue[])]), context.owner);
  });
}

/**
 * Parse a route's requirements (the RouteRequirements fields of `input`, the others already checked by the caller)
 * into checks; undefined when it sets none.
 */
export function parseRequirements(
  input: Readonly<Record<string, unknown>>,
  context: RequirementContext,
): RouteAuthorization | undefined {
  const checks: { order: number; run: Check }[] = [];
  for (const [kind, field] of KIND_OF) {
    if (input[field] !== undefined)
      checks.push({
        order: ORDER[kind],
        run: valueCheck(parseRule(input[field], context, field), context.sources[kind], context.owner),
      });
  }
  if (input.claims !== undefined)
    for (const run of parseClaims(input.claims, context)) checks.push({ order: ORDER.claim, run });
  if (input.authorizationDetails !== undefined) {
    const path = context.path === '' ? 'authorizationDetails' : `${context.path}.authorizationDetails`;
    for (const detail of parseDetails(input.authorizationDetails, path, context.who))
      checks.push({ order: ORDER.detail, run: detailCheck(detail, context.owner) });
  }
  if (input.issuers !== undefined) {
    if (input.issuers === '') fail(context, 'issuers', 'must be a non-empty string or array of them');
    const issuers = typeof input.issuers === 'string' ? [input.issuers] : input.issuers;
    checks.push({ order: ORDER.issuer, run: issuerCheck(stringsAt(issuers, context, 'issuers'), context.owner) });
  }
  const allows: RouteAuthorization['allows'][number][] = [];
  if (input.allow !== undefined) {
    if (typeof input.allow !== 'function')
      fail(context, 'allow', 'must be a function (claims, req) => boolean | Promise<boolean>');
    allows.push({ hook: input.allow as AllowHook, owner: context.owner });
  }
  if (checks.length === 0 && allows.length === 0) return undefined;
  return Object.freeze({ checks, allows });
}
