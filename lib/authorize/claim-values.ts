// Where roles, groups and permissions are read (`roleClaim`, `groupClaim`, `permissionClaim`: a claim, a key path or
// a function), and a claim's value as a set of strings: strings or SCIM objects (RFC 9068 §2.2.3.1, RFC 7643 §2.4),
// with the work per request bounded however long the array a token carries.
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';

/** Where a kind of value is read: a top-level claim named exactly, a key path into nested objects, or a function. */
export type ValueClaimOption =
  string | readonly string[] | ((claims: Readonly<Record<string, unknown>>) => readonly string[] | undefined);

/** The three options, by the kind of value each reads. */
export const VALUE_OPTIONS = { role: 'roleClaim', group: 'groupClaim', permission: 'permissionClaim' } as const;

/** A kind of value a route may require. */
export type ValueKind = keyof typeof VALUE_OPTIONS;

/** Where one kind of value is read, resolved at `createTokenAuth`. */
export interface ValueSource {
  readonly kind: ValueKind;
  /** The claim's value (at the end of the path), or the function's answer; a throwing function is a 500. */
  read(claims: Readonly<Record<string, unknown>>): unknown;
  /** The top-level claim read whole, when the option names one (for the distributed-claims hint). */
  readonly claim: string | undefined;
  /** How hints name it: `claim "roles" (option "roleClaim")`. */
  readonly described: string;
}

/** Values read from a claim: its strings, as the array itself or as a set when it is long. */
export type ClaimValues = readonly string[] | ReadonlySet<string>;

/** Arrays up to this long are scanned in place; longer ones become a set once (per frozen array) and are looked up. */
const SCANNED = 16;

const DEFAULTS: Readonly<Record<ValueKind, string>> = { role: 'roles', group: 'groups', permission: 'permissions' };

/**
 * Resolve `roleClaim`, `groupClaim` or `permissionClaim` (an OptionError naming it for anything else); undefined
 * takes the default claim (`roles`, `groups` RFC 9068 §2.2.3.1, `permissions`).
 */
export function resolveValueSource(kind: ValueKind, value: unknown): ValueSource {
  const option = VALUE_OPTIONS[kind];
  if (value === undefined) value = DEFAULTS[kind];
  if (typeof value === 'function') {
    const hook = value as (claims: Readonly<Record<string, unknown>>) => unknown;
    return Object.freeze({
      kind,
      claim: undefined,
      described: `the option "${option}" function`,
      read(claims: Readonly<Record<string, unknown>>) {
        try {
          return hook(claims);
        } catch (err) {
          throw new TokenAuthError('internal', { reason: `${option}-threw`, cause: err });
        }
      },
    });
  }
  if (typeof value === 'string' && value !== '') {
    const name = value;
    return Object.freeze({
      kind,
      claim: name,
      described: `claim ${JSON.stringify(name)} (option "${option}")`,
      read: (claims: Readonly<Record<string, unknown>>) => claims[name],
    });
  }
  if (!Array.isArray(value) || value.length === 0 || value.some((key) => typeof key !== 'string' || key === '')) {
    optionError(
      option,
      `option "${option}" must be a claim name, a key path (a non-empty array of names, such as ['realm_access', 'roles']), or a function (claims) => string[]`,
    );
  }
  const path = Object.freeze([...(value as string[])]);
  if (path.length === 1) return resolveValueSource(kind, path[0]);
  return Object.freeze({
    kind,
    claim: undefined,
    described: `claim path ${JSON.stringify(path)} (option "${option}")`,
    read(claims: Readonly<Record<string, unknown>>) {
      let at: unknown = claims;
      for (const key of path) {
        if (!isObject(at)) return undefined;
        at = at[key];
      }
      return at;
    },
  });
}

/** A SCIM multi-valued attribute's element (RFC 7643 §2.4): its `value`, when a string. */
function scimValue(element: unknown): string | undefined {
  if (typeof element === 'string') return element;
  if (isObject(element) && typeof element.value === 'string') return element.value;
  return undefined;
}

// Sets made of long (or SCIM) arrays that are frozen: verified claims are frozen once shared by the verdict cache,
// so a cache hit pays a lookup, never another walk of a long array. `null`: an array that grants nothing.
const madeSets = new WeakMap<object, ReadonlySet<string> | null>();

function setOf(array: readonly unknown[]): ReadonlySet<string> | null {
  const values = new Set<string>();
  for (const element of array) {
    const value = scimValue(element);
    if (value === undefined) return null;
    values.add(value);
  }
  return values;
}

/**
 * A claim's value as values: an array of strings or SCIM objects with a string `value`, or a single string (one
 * value). Anything else (an object, a number, null, an array holding anything else) is undefined: it grants nothing.
 * A short array of strings is answered as it is; a longer one (or one of SCIM objects) as a set, made once per
 * frozen array, so a hostile token's 100 000 roles cost one walk per verdict, not one per request.
 */
export function claimValues(raw: unknown): ClaimValues | undefined {
  if (typeof raw === 'string') return [raw];
  if (!Array.isArray(raw)) return undefined;
  const length = raw.length;
  if (length <= SCANNED) {
    let strings = true;
    // An index, not for…of: V8 iterates a frozen array (the cache's claims) several times more slowly.
    for (let i = 0; i < length && strings; i++) if (typeof raw[i] !== 'string') strings = false;
    if (strings) return raw as readonly string[];
  }
  if (!Object.isFrozen(raw)) return setOf(raw) ?? undefined;
  let made = madeSets.get(raw);
  if (made === undefined) {
    made = setOf(raw);
    madeSets.set(raw, made);
  }
  return made ?? undefined;
}

// Sets of the elements of long frozen arrays, for a `claims` requirement on an array claim.
const memberSets = new WeakMap<object, ReadonlySet<unknown>>();

/** Whether an array (a claim's) holds `value`: a long frozen one through a set made once. */
export function contains(array: readonly unknown[], value: unknown): boolean {
  if (array.length <= SCANNED || !Object.isFrozen(array)) return array.includes(value);
  let members = memberSets.get(array);
  if (members === undefined) {
    members = new Set(array);
    memberSets.set(array, members);
  }
  return members.has(value);
}

/** Whether `values` hold `value`. */
export function holds(values: ClaimValues, value: string): boolean {
  return Array.isArray(values)
    ? (values as readonly string[]).includes(value)
    : (values as ReadonlySet<string>).has(value);
}

/** What a claim's value is, as hints say it: its shape and how many values, never what they are. */
export function describeShape(raw: unknown): string {
  if (raw === undefined) return 'absent';
  if (raw === null) return 'null';
  if (typeof raw === 'string') return 'a single string (1 value)';
  if (Array.isArray(raw)) {
    const count = raw.length;
    if (claimValues(raw) !== undefined) return `an array of ${count} value${count === 1 ? '' : 's'}`;
    return `an array of ${count} element${count === 1 ? '' : 's'}, not all strings or objects with a string "value", which grants nothing`;
  }
  return `${isObject(raw) ? 'an object' : `a ${typeof raw}`}, which grants nothing`;
}

/** Where each kind of value is read, for one TokenAuth. */
export type ValueSources = Readonly<Record<ValueKind, ValueSource>>;

/** The options of createTokenAuth this room resolves. */
export interface ValueClaimOptions {
  /** Where roles are read (default `roles`, RFC 9068 §2.2.3.1). */
  roleClaim?: ValueClaimOption;
  /** Where groups are read (default `groups`, RFC 9068 §2.2.3.1). */
  groupClaim?: ValueClaimOption;
  /** Where permissions are read (default `permissions`, as Auth0's RBAC puts them). */
  permissionClaim?: ValueClaimOption;
}

/** `roleClaim`, `groupClaim` and `permissionClaim`, checked at `createTokenAuth`. */
export function resolveValueSources(input: ValueClaimOptions): ValueSources {
  return Object.freeze({
    role: resolveValueSource('role', input.roleClaim),
    group: resolveValueSource('group', input.groupClaim),
    permission: resolveValueSource('permission', input.permissionClaim),
  });
}
