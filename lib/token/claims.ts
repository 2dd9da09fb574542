// Shape B, the service's token payload: its types and the structural check strict mode applies.
import { isObject, isStringArray } from '../base/values';
/** A linked Discord account. `avatar` is an image hash, or null for Discord's default avatar. */
export interface DiscordAccount {
  id: string;
  username: string;
  avatar: string | null;
  [field: string]: unknown;
}

/** A linked Google account. */
export interface GoogleAccount {
  id: string;
  email: string;
  name: string;
  picture: string;
  [field: string]: unknown;
}

/** A linked Roblox account. */
export interface RobloxAccount {
  id: string;
  username: string;
  [field: string]: unknown;
}

/** Any other linked account: a non-empty string `id` and string fields. */
export interface ProviderAccount {
  id: string;
  [field: string]: unknown;
}

/** Linked accounts, keyed by provider name; a provider appears only when linked. */
export interface Providers {
  discord?: DiscordAccount;
  google?: GoogleAccount;
  roblox?: RobloxAccount;
  [provider: string]: ProviderAccount | undefined;
}

/** Token metadata: creation time (ISO 8601 UTC) and authorizing party. */
export interface TokenMetadata {
  createdAt: string;
  authorizer: string;
  [field: string]: unknown;
}

/**
 * The verified claims of a token in `claims: 'strict'` mode (the service's Shape B), exactly as signed. Other modes
 * guarantee less: `JwtClaims` and `AccessTokenClaims` (claim-modes.ts).
 */
export interface VerifiedClaims {
  iss: string;
  aud: string | string[];
  iat: number;
  exp: number;
  jti: string;
  scopes: string[];
  providers: Providers;
  metadata: TokenMetadata;
  sub?: string | null;
  nbf?: number;
  [claim: string]: unknown;
}

// A Map, not an object literal: provider names come from the token, and a name such as "constructor" or
// "__proto__" must not find Object.prototype members (that threw, and answered 500).
const KNOWN_PROVIDER_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ['discord', ['id', 'username', 'avatar']],
  ['google', ['id', 'email', 'name', 'picture']],
  ['roblox', ['id', 'username']],
]);

/** ISO 8601 UTC, `Z`-terminated, milliseconds optional: 2024-05-01T12:00:00.000Z */
const ISO_UTC = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?Z$/;

/** The number written by `length` ASCII digits of `text` from `at` (ISO_UTC has already matched them). */
function digitsAt(text: string, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i++) value = value * 10 + text.charCodeAt(i) - 48;
  return value;
}

/**
 * The day of an ISO_UTC timestamp exists in its month (no 2024-02-31; Feb 29 in Gregorian leap years only).
 * Arithmetic, not Date.parse and toISOString: 1.1 µs → 0.06 µs per token (bench/RESULTS.md), same answers for
 * every day of years 0000–9999 that ISO_UTC lets through; digits read in place, without a string per field.
 */
function isCalendarTimestamp(text: string): boolean {
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const last = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return day <= last;
}

/** Provider fields are strings; only Discord's `avatar` may be null (its default avatar). */
function isAccountValue(provider: string, field: string, value: unknown): boolean {
  return typeof value === 'string' || (value === null && provider === 'discord' && field === 'avatar');
}

const NO_FIELDS: readonly string[] = [];

/**
 * Where a wrong account or field is, as a refusal names it (made only on a refusal): a known provider, and a known
 * field, by name; any other by its position among the object's keys, from 0 (`providers[2].id`, `providers.google[5]`).
 */
function accountPath(name: string, position: number, known: readonly string[] | undefined, field?: string | number) {
  const at = known === undefined ? `providers[${position}]` : `providers.${name}`;
  if (field === undefined) return at;
  return typeof field === 'number' ? `${at}[${field}]` : `${at}.${field}`;
}

/**
 * The first wrong field of one linked account (`providers` key `name`, at `position` among them): not an object,
 * no `id`, a known field missing, then a value that is not a string. One pass over its own fields counts the known
 * ones, so the known fields are looked up one by one only when one is missing (a keyed lookup per field name cost
 * most of the Shape B check, docs/benchmarks.md). The path names only what the package knows (`accountPath`), so
 * that a refusal's reason never carries the token's own text (a name holding a line break forged debug lines).
 */
function checkAccount(name: string, position: number, account: unknown): string | undefined {
  const known = KNOWN_PROVIDER_FIELDS.get(name);
  if (!isObject(account)) return accountPath(name, position, known);
  if (typeof account.id !== 'string' || account.id === '') return accountPath(name, position, known, 'id');
  const fields = known ?? NO_FIELDS;
  let present = 0;
  let wrong = -1;
  const own = Object.keys(account);
  for (let i = 0; i < own.length; i++) {
    if (wrong < 0 && !isAccountValue(name, own[i], account[own[i]])) wrong = i;
    if (fields.includes(own[i])) present++;
  }
  if (present !== fields.length) {
    for (const field of fields) if (account[field] === undefined) return accountPath(name, position, known, field);
  }
  if (wrong < 0) return undefined;
  return accountPath(name, position, known, fields.includes(own[wrong]) ? own[wrong] : wrong);
}

/**
 * The Shape B structural check (the service's token payload, README "What a token must be"; strict mode). Returns
 * the path of the first field that is wrong, or undefined when the payload is Shape B: names the package knows,
 * and positions for names it does not (`providers[0].id`), never the payload's own text, so that a reason stays a
 * short code-like string. Time, issuer and audience values are checked elsewhere.
 */
export function shapeBViolation(payload: Record<string, unknown>): string | undefined {
  if (typeof payload.iss !== 'string') return 'iss';
  if (typeof payload.aud !== 'string' && !isStringArray(payload.aud)) return 'aud';
  if (!Number.isInteger(payload.iat)) return 'iat';
  if (!Number.isInteger(payload.exp)) return 'exp';
  if (typeof payload.jti !== 'string' || payload.jti === '') return 'jti';
  if (!isStringArray(payload.scopes)) return 'scopes';
  if (payload.sub !== undefined && payload.sub !== null && typeof payload.sub !== 'string') return 'sub';

  const providers = payload.providers;
  if (!isObject(providers)) return 'providers';
  const names = Object.keys(providers);
  for (let i = 0; i < names.length; i++) {
    const wrong = checkAccount(names[i], i, providers[names[i]]);
    if (wrong !== undefined) return wrong;
  }

  const metadata = payload.metadata;
  if (!isObject(metadata)) return 'metadata';
  if (typeof metadata.createdAt !== 'string' || !ISO_UTC.test(metadata.createdAt)) return 'metadata.createdAt';
  if (!isCalendarTimestamp(metadata.createdAt)) return 'metadata.createdAt';
  if (typeof metadata.authorizer !== 'string') return 'metadata.authorizer';
  return undefined;
}
