// RFC 9396 authorization details a route requires: `{ type, actions?, locations?, datatypes?, identifier?,
// privileges? }`, parsed once, and met by one entry of the token's `authorization_details` array. Strings compare
// exactly (RFC 9396 §12: no normalisation); what a type's own fields mean (§6.1's subsumption) is for `allow`.
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject, isStringArray } from '../base/values';
import { quotedList } from '../base/printable';
import { refuse, type RequirementOwner } from './refusal';

/** One authorization detail a route requires (RFC 9396 §2, §2.2): its `type` and any of the common data fields. */
export interface AuthorizationDetailRequirement {
  /** The entry's `type`, exactly. */
  type: string;
  /** Every one of these must be among the entry's `actions`. */
  actions?: readonly string[];
  /** The entry's `locations` must name one of these (an entry without `locations` does not meet it). */
  locations?: readonly string[];
  /** Every one of these must be among the entry's `datatypes`. */
  datatypes?: readonly string[];
  /** The entry's `identifier`, exactly. */
  identifier?: string;
  /** Every one of these must be among the entry's `privileges`. */
  privileges?: readonly string[];
}

const DETAIL_FIELDS: FieldList<AuthorizationDetailRequirement> = {
  type: true,
  actions: true,
  locations: true,
  datatypes: true,
  identifier: true,
  privileges: true,
};

/** The claim RFC 9396 §9.1 puts in access tokens (and §9.2 in introspection answers). */
const CLAIM = 'authorization_details';

type Detail = Readonly<Required<Pick<AuthorizationDetailRequirement, 'type'>>> & {
  readonly [K in Exclude<keyof AuthorizationDetailRequirement, 'type'>]: AuthorizationDetailRequirement[K] | undefined;
};

function stringList(value: unknown, option: string, who: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!isStringArray(value) || value.length === 0 || value.some((item) => item === ''))
    optionError(option, `${who} option "${option}" must be a non-empty array of non-empty strings`);
  return Object.freeze([...value]);
}

function parseDetail(input: unknown, option: string, who: string): Detail {
  if (!isObject(input))
    optionError(
      option,
      `${who} option "${option}" must be an object { type, actions?, locations?, datatypes?, identifier?, privileges? }`,
    );
  knownFields(input, DETAIL_FIELDS, option, undefined, (path) => {
    return `${who} option "${path}" is not one of RFC 9396's common fields (type, actions, locations, datatypes, identifier, privileges): check a type's own fields in option "allow"`;
  });
  if (typeof input.type !== 'string' || input.type === '')
    optionError(`${option}.type`, `${who} option "${option}.type" must be a non-empty string`);
  if (input.identifier !== undefined && (typeof input.identifier !== 'string' || input.identifier === ''))
    optionError(`${option}.identifier`, `${who} option "${option}.identifier" must be a non-empty string`);
  return Object.freeze({
    type: input.type,
    actions: stringList(input.actions, `${option}.actions`, who),
    locations: stringList(input.locations, `${option}.locations`, who),
    datatypes: stringList(input.datatypes, `${option}.datatypes`, who),
    identifier: input.identifier as string | undefined,
    privileges: stringList(input.privileges, `${option}.privileges`, who),
  });
}

/** `authorizationDetails` at `option`: one requirement or a non-empty array of them (each met), checked now. */
export function parseDetails(input: unknown, option: string, who: string): readonly Detail[] {
  if (!Array.isArray(input)) return [parseDetail(input, option, who)];
  if (input.length === 0) optionError(option, `${who} option "${option}" must not be an empty array`);
  return Object.freeze(input.map((one, index) => parseDetail(one, `${option}[${index}]`, who)));
}

/** Every one of `wanted` is among the entry's field, an array of strings (anything else holds none). */
function holdsAll(field: unknown, wanted: readonly string[] | undefined): boolean {
  if (wanted === undefined) return true;
  if (!Array.isArray(field)) return false;
  for (const one of wanted) if (!field.includes(one)) return false;
  return true;
}

/** Whether one entry of the token's array meets one requirement. */
function meets(entry: unknown, detail: Detail): boolean {
  if (!isObject(entry) || entry.type !== detail.type) return false;
  if (detail.identifier !== undefined && entry.identifier !== detail.identifier) return false;
  if (detail.locations !== undefined) {
    const locations = entry.locations;
    if (!Array.isArray(locations) || !detail.locations.some((location) => locations.includes(location))) return false;
  }
  return (
    holdsAll(entry.actions, detail.actions) &&
    holdsAll(entry.datatypes, detail.datatypes) &&
    holdsAll(entry.privileges, detail.privileges)
  );
}

function describe(detail: Detail): string {
  const parts = [`type ${quotedList([detail.type], 'or')}`];
  if (detail.actions !== undefined) parts.push(`actions ${quotedList(detail.actions, 'and')}`);
  if (detail.locations !== undefined) parts.push(`a location ${quotedList(detail.locations, 'or')}`);
  if (detail.datatypes !== undefined) parts.push(`datatypes ${quotedList(detail.datatypes, 'and')}`);
  if (detail.identifier !== undefined) parts.push(`identifier ${quotedList([detail.identifier], 'or')}`);
  if (detail.privileges !== undefined) parts.push(`privileges ${quotedList(detail.privileges, 'and')}`);
  return parts.join(', ');
}

/** The token's `authorization_details` as a hint says it: how many entries, how many of the type; never content. */
function held(value: unknown, type: string): string {
  if (value === undefined) return 'the token has no authorization_details';
  if (!Array.isArray(value))
    return `the token's authorization_details is ${isObject(value) ? 'an object' : value === null ? 'null' : `a ${typeof value}`}, not an array, which grants nothing`;
  const ofType = value.filter((entry) => isObject(entry) && entry.type === type).length;
  return `the token's authorization_details holds ${value.length} entr${value.length === 1 ? 'y' : 'ies'}, ${ofType} of that type`;
}

// Verdicts on frozen arrays (claims shared by the verdict cache): a cache hit looks its verdict up, per requirement,
// instead of walking a token's entries again.
type Verdicts = WeakMap<object, boolean>;

/**
 * The check of one parsed requirement: met by an entry of the token's array, or a 403 `forbidden` with reason
 * `authorization-details`.
 */
export function detailCheck(
  detail: Detail,
  owner: RequirementOwner,
): (claims: Readonly<Record<string, unknown>>) => void {
  const verdicts: Verdicts = new WeakMap();
  const met = (value: unknown): boolean => {
    if (!Array.isArray(value)) return false;
    const known = verdicts.get(value);
    if (known !== undefined) return known;
    const verdict = value.some((entry) => meets(entry, detail));
    if (Object.isFrozen(value)) verdicts.set(value, verdict);
    return verdict;
  };
  return (claims) => {
    const value = claims[CLAIM];
    if (met(value)) return;
    throw refuse(
      'authorization-details',
      `expected an authorization_details entry (RFC 9396) with ${describe(detail)}, of ${owner('authorizationDetails')}, read from claim "authorization_details"; ${held(value, detail.type)}`,
    );
  };
}
