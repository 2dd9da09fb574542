// The checks a route's requirements compile to, each a function of the verified claims that throws the route's 403
// `forbidden` when they fall short (roles, permissions, groups; claims; issuers), and the run of a route's checks
// with its `allow` hooks last, per request, after the cached verdict.
import type { Request } from 'express';
import { isObject, isThenable, type MaybePromise } from '../base/values';
import { claimValues, contains, describeShape, holds, type ValueKind, type ValueSource } from './claim-values';
import { quotedList } from '../base/printable';
import { hookThrew, refuse, wanted, type RequirementOwner } from './refusal';

/** One compiled requirement: returns when the claims meet it, throws a 403 `forbidden` otherwise. */
export type Check = (claims: Readonly<Record<string, unknown>>) => void;

/** `allow(claims, req)`: the app's rule, last. */
export type AllowHook = (claims: never, req: Request) => boolean | Promise<boolean>;

/**
 * A route's requirements compiled: checks in the order their kinds run, then its `allow` hooks. The lists are left
 * unfrozen (V8 walks a frozen array more slowly) and never handed out.
 */
export interface RouteAuthorization {
  readonly checks: readonly { readonly order: number; readonly run: Check }[];
  readonly allows: readonly { readonly hook: AllowHook; readonly owner: RequirementOwner }[];
}

/** A claim value a route may require: what JSON compares exactly. */
export type ClaimValue = string | number | boolean;

/** `{ all, any }`, parsed: every `all` value and, when `any` has some, one of them. */
export interface ValueRule {
  readonly all: readonly string[];
  readonly any: readonly string[];
}

const FIELD_OF: Readonly<Record<ValueKind, string>> = { role: 'roles', group: 'groups', permission: 'permissions' };

/** What the claim holds as a hint says it, and the distributed-claims case (OpenID Connect Core §5.6.2). */
function heldValues(source: ValueSource, claims: Readonly<Record<string, unknown>>, raw: unknown): string {
  if (raw === undefined && source.claim !== undefined) {
    const names = claims._claim_names;
    if (isObject(names) && Object.hasOwn(names, source.claim))
      return `the token has no claim ${JSON.stringify(source.claim)}, but "_claim_names" names it: its values are elsewhere (distributed claims; Entra ID's groups overage, when a user is in more groups than a token holds, replaces "groups" so): read them in option "allow" (Microsoft Graph for Entra ID)`;
  }
  return `the token's value is ${describeShape(raw)}`;
}

/** Whether values read from a claim meet an `{ all, any }` rule. */
function ruleMet(raw: unknown, all: readonly string[], any: readonly string[]): boolean {
  const values = claimValues(raw);
  if (values === undefined) return false;
  for (let i = 0; i < all.length; i++) if (!holds(values, all[i])) return false;
  if (any.length === 0) return true;
  for (let i = 0; i < any.length; i++) if (holds(values, any[i])) return true;
  return false;
}

/**
 * The check of `roles`, `permissions` or `groups`, read where `source` says. A cache hit hands over the same frozen
 * claims again, so the verdict on a frozen array is kept (by the array, for as long as it lives) and looked up: a
 * hit pays one lookup, however long the array. Lookup first: `Object.isFrozen` costs more than the lookup.
 */
export function valueCheck(rule: ValueRule, source: ValueSource, owner: RequirementOwner): Check {
  // Unfrozen copies: V8 reads the elements of a frozen array more slowly.
  const all = [...rule.all];
  const any = [...rule.any];
  const { kind } = source;
  const verdicts = new WeakMap<object, boolean>();
  return (claims) => {
    const raw = source.read(claims);
    let met: boolean | undefined;
    if (typeof raw === 'object' && raw !== null) {
      met = verdicts.get(raw);
      if (met === undefined) {
        met = ruleMet(raw, all, any);
        if (Object.isFrozen(raw)) verdicts.set(raw, met);
      }
    } else met = ruleMet(raw, all, any);
    if (met) return;
    throw refuse(
      kind,
      `expected ${wanted(kind, all, any)} of ${owner(FIELD_OF[kind])}, read from ${source.described}; ${heldValues(source, claims, raw)}`,
    );
  };
}

/** Whether `value` (a claim's) equals one of `accepted`, or, as an array, contains one of them. */
function claimMeets(value: unknown, accepted: readonly ClaimValue[]): boolean {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return accepted.includes(value);
  if (!Array.isArray(value)) return false;
  for (const one of accepted) if (contains(value, one)) return true;
  return false;
}

function claimShape(value: unknown): string {
  if (value === undefined) return 'absent';
  if (Array.isArray(value))
    return `an array of ${value.length} element${value.length === 1 ? '' : 's'}, none of them accepted`;
  if (isObject(value)) return 'an object, which equals no value';
  return value === null ? 'null' : `a ${typeof value} that differs`;
}

/** The check of one `claims` entry: the top-level claim `name` equals one of `accepted`, or contains one. */
export function claimCheck(name: string, values: readonly ClaimValue[], owner: RequirementOwner): Check {
  const accepted = [...values];
  return (claims) => {
    const value = claims[name];
    if (claimMeets(value, accepted)) return;
    throw refuse(
      'claim',
      `expected claim ${JSON.stringify(name)} equal to ${quotedList(accepted, 'or')} (or, as an array, containing it) of ${owner('claims')}; the token's claim is ${claimShape(value)}`,
    );
  };
}

/** The check of `issuers`: the token's `iss` is one of them. */
export function issuerCheck(accepted: readonly string[], owner: RequirementOwner): Check {
  const issuers = [...accepted];
  return (claims) => {
    const iss = claims.iss;
    if (typeof iss === 'string' && issuers.includes(iss)) return;
    throw refuse(
      'issuer',
      `expected iss ${quotedList(issuers, 'or')} of ${owner('issuers')} (one of this TokenAuth's issuers, for this route); the token's iss is another`,
    );
  };
}

/** An `allow` hook's answer: `true` passes; anything else refuses. */
function allowed(answer: unknown, owner: RequirementOwner): void {
  if (answer !== true)
    throw refuse('policy', `${owner('allow')} answered ${answer === false ? 'false' : 'something other than true'}`);
}

/** The `allow` hooks from `index` on, one after the other; a throw or rejection is a 500 (`allow-threw`). */
function runAllows(
  allows: RouteAuthorization['allows'],
  index: number,
  claims: Readonly<Record<string, unknown>>,
  req: Request,
): MaybePromise<void> {
  for (let i = index; i < allows.length; i++) {
    const { hook, owner } = allows[i];
    let answer: boolean | Promise<boolean>;
    try {
      answer = (hook as (claims: unknown, req: Request) => boolean | Promise<boolean>)(claims, req);
    } catch (err) {
      throw hookThrew('allow-threw', err);
    }
    if (isThenable(answer)) {
      return answer.then(
        (settled) => {
          allowed(settled, owner);
          return runAllows(allows, i + 1, claims, req);
        },
        (err: unknown) => {
          throw hookThrew('allow-threw', err);
        },
      );
    }
    allowed(answer, owner);
  }
  return undefined;
}

/**
 * Whether the verified claims meet a route's requirements: each check in order, then `allow`; returns (or resolves)
 * when they do, throws (or rejects with) a 403 `forbidden`, or a 500 for an `allow` that threw.
 */
export function authorizeRoute(
  authorization: RouteAuthorization,
  claims: Readonly<Record<string, unknown>>,
  req: Request,
): MaybePromise<void> {
  const { checks } = authorization;
  for (let i = 0; i < checks.length; i++) checks[i].run(claims);
  if (authorization.allows.length === 0) return undefined;
  return runAllows(authorization.allows, 0, claims, req);
}

/** Several routes' requirements as one (an MCP request calling several gated tools): every check, then every allow. */
export function combineAuthorizations(
  list: readonly (RouteAuthorization | undefined)[],
): RouteAuthorization | undefined {
  const present = list.filter((one) => one !== undefined);
  if (present.length <= 1) return present[0];
  return Object.freeze({
    checks: present.flatMap((one) => one.checks).sort((a, b) => a.order - b.order),
    allows: present.flatMap((one) => one.allows),
  });
}
