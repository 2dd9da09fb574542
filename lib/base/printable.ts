// Text from a token or a remote server, made safe to print in one line of a log, a hint or a terminal: the one
// escaping of hostile text (every hint, reason, debug line and `check` line goes through it). Imports nothing.

/**
 * What is never printed as it is: C0 controls and DEL, C1 controls (U+0080–U+009F: NEL U+0085, the 8-bit CSI
 * U+009B), the line and paragraph separators (U+2028, U+2029), bidi marks, embeddings, overrides and isolates
 * (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), and lone surrogates (a half of a pair some decoders turn
 * into U+FFFD and others into a line break). Python's `splitlines`, Java's `\R` and terminals act on these.
 */
const UNSAFE =
  // eslint-disable-next-line no-control-regex -- matching control characters is this pattern's whole job
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const EVERY_UNSAFE = new RegExp(UNSAFE.source, 'g');

/** Longest value from a token printed (a forged `kid` may be 10 KB); spans cut theirs at 256. */
export const MAX_PRINTED = 128;

/** Longest text from a remote server printed (a content type, an issuer a document names, a `check` finding). */
export const MAX_SERVER_TEXT = 200;

const escapeOne = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * `text` with every unsafe character (above) written as `\uXXXX`; nothing else changes, so text that has been
 * through it once comes back the same (a hint made of escaped parts can be escaped again as a whole).
 */
export function escapeControls(text: string): string {
  return UNSAFE.test(text) ? text.replace(EVERY_UNSAFE, escapeOne) : text;
}

/** `value` cut to `max` UTF-16 units (never inside a surrogate pair), marked with `…` when cut. */
function cut(value: string, max: number): string {
  if (value.length <= max) return value;
  const end = value.charCodeAt(max - 1) >= 0xd800 && value.charCodeAt(max - 1) <= 0xdbff ? max - 1 : max;
  return `${value.slice(0, end)}…`;
}

/** A hostile value to print bare (inside text that frames it): cut to `max` characters, then escaped. */
export function printable(value: string, max = MAX_PRINTED): string {
  return escapeControls(cut(value, max));
}

/**
 * A hostile value as a JSON string literal: cut to `max` characters, quoted, `"` and `\` escaped as JSON escapes
 * them, and every unsafe character escaped, so that it can neither forge a line nor end its quotes.
 */
export function quoted(value: string, max = MAX_PRINTED): string {
  return escapeControls(JSON.stringify(cut(value, max)));
}

/** Items of an array printed; more are shown as `…` (`["a", "b", "c", "d", …]`). */
export const MAX_ITEMS = 4;

/**
 * A hostile claim value (a token's `aud`, an answer's): a string quoted as `quoted` does, an array as its first
 * MAX_ITEMS items quoted and `…` for more, anything else by its JSON type only (`a number`, `null`).
 */
export function quotedValue(value: unknown, max = MAX_PRINTED): string {
  if (typeof value === 'string') return quoted(value, max);
  if (!Array.isArray(value)) return value === null ? 'null' : `a ${typeof value}`;
  // An item that is no string by its type only: a nested array is never walked (its depth is the sender's).
  const shown = value.slice(0, MAX_ITEMS).map((item) => (Array.isArray(item) ? 'an array' : quotedValue(item, max)));
  return `[${shown.join(', ')}${value.length > MAX_ITEMS ? ', …' : ''}]`;
}

/**
 * Values for a sentence: `"a"`, `"a" or "b"`, `"a", "b" and "c"`; strings quoted as `quoted` does (cut at `max`),
 * anything else as `String` writes it (numbers of the configuration).
 */
export function quotedList(values: readonly unknown[], joiner: 'and' | 'or', max = MAX_PRINTED): string {
  const shown = values.map((value) => (typeof value === 'string' ? quoted(value, max) : String(value)));
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} ${joiner} ${shown[shown.length - 1]}`;
}
