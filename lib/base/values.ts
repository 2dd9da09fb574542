// Value guards for JSON read from tokens and remote answers (and whether a media type names JSON), and the
// sync-or-async value the hot path passes around. The bottom of the house: imports nothing.

/** A value now, or later. */
export type MaybePromise<T> = T | Promise<T>;

/** True for a promise (or any thenable): the answer comes later. */
export function isThenable<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An array whose every item is a string (an empty array is one). */
export function isStringArray(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

/**
 * `value` with A–Z made a–z and nothing else changed: the case-insensitive comparisons of protocol text (URI scheme
 * and host, RFC 3986 §6.2.2.1). `toLowerCase()` folds by Unicode, so the Kelvin sign K (U+212A) would become `k`.
 */
export function asciiLowerCase(value: string): string {
  return value.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Whether a Content-Type names JSON: `application/json` or a `+json` type (RFC 6839 §3.1), parameters allowed. */
export function isJsonMediaType(type: string): boolean {
  return JSON_MEDIA_TYPE.test(type);
}
