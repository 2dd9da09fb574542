// What one `auth.exchange()` asks for (RFC 8693 §2.1): the audience or resource of the token wanted, its scope and
// type, read into one normal form that both the request body and the cache key are made of.
import { optionError } from '../base/option-error';

/** RFC 8693 §3: the token type of an OAuth 2.0 access token, the subject's and (by default) the one asked for. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** The second argument of `auth.exchange()`: the token wanted. */
export interface ExchangeTarget {
  /** Logical name(s) of the service the token is for (RFC 8693 §2.1 `audience`). */
  audience?: string | readonly string[];
  /** Absolute URI(s) of the resource the token is for, no fragment (RFC 8707 `resource`). */
  resource?: string | readonly string[];
  /** Scope(s) asked for: an array, or one space-separated string. */
  scope?: string | readonly string[];
  /** The token type wanted (default `urn:ietf:params:oauth:token-type:access_token`). */
  requestedTokenType?: string;
}

/** A target in normal form: each list sorted, without repeats; what the form and the cache key are made of. */
export interface NormalTarget {
  readonly audience: readonly string[];
  readonly resource: readonly string[];
  readonly scope: readonly string[];
  readonly requestedTokenType: string;
}

/** Most values of one list: a target names a few services, never hundreds. */
export const MAX_TARGET_VALUES = 16;
/** Longest single value (a URI, a scope, a token type). */
const MAX_VALUE_LENGTH = 2048;
// RFC 6749 §3.3 scope-token: %x21 / %x23-5B / %x5D-7E.
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
// Printable ASCII without controls, for audience names and token type URIs.
const PRINTABLE = /^[\x21-\x7E](?:[\x20-\x7E]*[\x21-\x7E])?$/;
const FIELDS = new Set(['audience', 'resource', 'scope', 'requestedTokenType']);

function fail(field: string, message: string): never {
  return optionError(`exchange.${field}`, `exchange(): "${field}" ${message}`);
}

function list(value: unknown, field: string, split: boolean): string[] {
  if (value === undefined) return [];
  const values = typeof value === 'string' ? (split ? value.split(' ').filter((v) => v !== '') : [value]) : value;
  if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || v === '' || v.length > MAX_VALUE_LENGTH))
    fail(field, `must be a non-empty string or an array of them (each at most ${MAX_VALUE_LENGTH} characters)`);
  const unique = [...new Set(values as string[])].sort();
  if (unique.length > MAX_TARGET_VALUES) fail(field, `may name at most ${MAX_TARGET_VALUES} values`);
  return unique;
}

/** RFC 8707 §2: an absolute URI without a fragment. */
function isResourceIndicator(value: string): boolean {
  if (value.includes('#') || !PRINTABLE.test(value) || value.includes(' ')) return false;
  try {
    return new URL(value).protocol !== '';
  } catch {
    return false;
  }
}

/**
 * Read a target in normal form, or throw an OptionError (a TypeError) naming the field: a target is written by the app, so a bad
 * one is a programming error, not a request's fault. At least one of `audience` and `resource` is required.
 */
export function readTarget(target: unknown): NormalTarget {
  if (typeof target !== 'object' || target === null || Array.isArray(target))
    optionError('exchange', 'exchange(): the target must be an object ({ audience, resource, scope })');
  const fields = target as Record<string, unknown>;
  for (const name of Object.keys(fields)) if (!FIELDS.has(name)) fail(name, 'is not a field of the target');
  const audience = list(fields.audience, 'audience', false);
  const resource = list(fields.resource, 'resource', false);
  const scope = list(fields.scope, 'scope', true);
  if (audience.length === 0 && resource.length === 0)
    optionError('exchange', 'exchange(): the target needs an "audience" or a "resource": the service it is for');
  if (audience.some((value) => !PRINTABLE.test(value))) fail('audience', 'must be printable ASCII');
  if (resource.some((value) => !isResourceIndicator(value)))
    fail('resource', 'must be absolute URIs without a fragment (RFC 8707)');
  if (scope.some((value) => !SCOPE_TOKEN.test(value))) fail('scope', 'holds a character a scope may not have');
  const type = fields.requestedTokenType ?? ACCESS_TOKEN_TYPE;
  if (typeof type !== 'string' || type.length > MAX_VALUE_LENGTH || !PRINTABLE.test(type) || type.includes(' '))
    fail('requestedTokenType', 'must be a token type URI');
  return { audience, resource, scope, requestedTokenType: type };
}

/** The target's fields of an RFC 8693 §2.1 request. */
export function addTarget(form: URLSearchParams, target: NormalTarget): void {
  for (const value of target.resource) form.append('resource', value);
  for (const value of target.audience) form.append('audience', value);
  if (target.scope.length > 0) form.set('scope', target.scope.join(' '));
  form.set('requested_token_type', target.requestedTokenType);
}

/** The target as one text for the cache key: JSON, so no value can pass for another list's. */
export function targetText(target: NormalTarget): string {
  return JSON.stringify([target.audience, target.resource, target.scope, target.requestedTokenType]);
}
