// The one compact-JWS reader: the text's alphabet, its three segments, each decoded strictly (canonical base64url,
// JSON objects, one parse), the protected header checked, and `typ` compared as RFC 7515 §4.1.9 says.
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';

/** A JOSE header as decoded; only `alg`, `kid` and `crit` are acted on, `jku`/`x5u`/`jwk`/`x5c` never are. */
export interface JwsHeader {
  alg: string;
  kid?: string;
  typ?: string;
  [parameter: string]: unknown;
}

/** A compact JWS split and decoded, signature not yet checked. */
export interface DecodedJws {
  header: JwsHeader;
  payload: Record<string, unknown>;
  /** Length of the payload's JSON text: a cheap measure of the claims' size for the cache. */
  payloadLength: number;
  /** Index of the second dot: the signing input is `token.slice(0, signedEnd)`, the signature what follows. */
  signedEnd: number;
}

/** Makes the error a refusal throws, from its reason (`segments`, `header-json`, …); `invalid_token` by default. */
export type JwsRefusal = (reason: string) => Error;

function invalid(reason: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason });
}

const JWS_TEXT = /^[A-Za-z0-9_.-]+$/;

/** Whether `text` holds only what a compact JWS may: base64url characters and dots (RFC 7515 §7.1). */
export function isJwsText(text: string): boolean {
  return JWS_TEXT.test(text);
}

/**
 * Whether `text[start, end)` is canonical base64url (RFC 4648 §3.5): not 4n+1 characters long (no whole bytes;
 * Buffer would silently drop the extra character), and the unused low bits of the last character zero. Decoders
 * ignore those bits, so without this one signed message had several token texts (an RS256 signature could be
 * re-spelt and still verify), each a new cache entry and a way around a denylist of token texts. The characters
 * are already known to be base64url.
 */
function isCanonicalBase64url(text: string, start: number, end: number): boolean {
  const rest = (end - start) % 4;
  if (rest === 0) return true;
  if (rest === 1) return false;
  const c = text.charCodeAt(end - 1);
  const value = c === 95 ? 63 : c === 45 ? 62 : c >= 97 ? c - 71 : c >= 65 ? c - 65 : c + 4;
  return (value & (rest === 2 ? 0x0f : 0x03)) === 0;
}

/**
 * Where segments are decoded: one fixed buffer instead of a Buffer per segment (making one cost about 0.4 µs, more
 * than decoding into it), big enough for every segment of a token of the default `maxTokenLength` (16 384). Used
 * synchronously and zeroed after each use, so no decoded payload outlives its request; a longer segment gets a
 * Buffer of its own.
 */
const SEGMENT_BYTES = 12_288;
const segmentBytes = Buffer.alloc(SEGMENT_BYTES);

/**
 * The UTF-8 text of a segment that is canonical base64url, or undefined. Decoding and encoding again is the check:
 * Buffer's decoder skips characters outside the alphabet and takes `+`, `/` and `=` too, but its encoder writes
 * only canonical base64url, so a segment comes back unchanged only if it held nothing else. Native code both ways,
 * where a regular expression over an 850-character token cost more than the whole decode (docs/benchmarks.md).
 */
function canonicalText(segment: string): string | undefined {
  if (segment.length > (SEGMENT_BYTES / 3) * 4) {
    const bytes = Buffer.from(segment, 'base64url');
    return bytes.toString('base64url') === segment ? bytes.toString('utf8') : undefined;
  }
  const length = segmentBytes.write(segment, 0, 'base64url');
  const text =
    segmentBytes.toString('base64url', 0, length) === segment ? segmentBytes.toString('utf8', 0, length) : undefined;
  segmentBytes.fill(0, 0, length);
  return text;
}

function decodeJsonObject(segment: string, what: string, refuse: JwsRefusal): [Record<string, unknown>, number] {
  const text = segment.length === 0 ? undefined : canonicalText(segment);
  if (text === undefined) throw refuse(`${what}-encoding`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse(`${what}-json`);
  }
  if (!isObject(value)) throw refuse(`${what}-type`);
  return [value, text.length];
}

/**
 * One segment of a compact JWS read strictly: canonical base64url of a JSON object. Throws `refuse` of
 * `<what>-encoding`, `<what>-json` or `<what>-type`.
 */
export function readJsonSegment(
  segment: string,
  what: 'header' | 'payload',
  refuse: JwsRefusal = invalid,
): Record<string, unknown> {
  return decodeJsonObject(segment, what, refuse)[0];
}

/**
 * The index of the second dot of a compact JWS (already known to pass `isJwsText`): the signing input is
 * `text.slice(0, signedEnd)`, the signature what follows. Throws `refuse` of `segments` unless there are exactly
 * three segments, `signature-missing` or `signature-encoding` unless the signature is non-empty canonical base64url.
 */
export function jwsSignedEnd(text: string, refuse: JwsRefusal = invalid): number {
  const first = text.indexOf('.');
  const second = first < 0 ? -1 : text.indexOf('.', first + 1);
  if (second < 0 || text.indexOf('.', second + 1) >= 0) throw refuse('segments');
  if (second === text.length - 1) throw refuse('signature-missing');
  if (!isCanonicalBase64url(text, second + 1, text.length)) throw refuse('signature-encoding');
  return second;
}

/**
 * Headers decoded whose members are all primitives, by segment: a service sees a handful of header texts (one per
 * issuer key: `alg`, `kid`, `typ`), so most tokens skip a base64 decode and a JSON.parse (0.7 µs). At most
 * `HEADER_MEMO_SIZE` headers of at most `HEADER_MEMO_LENGTH` characters each (about 16 KiB in all), the oldest
 * forgotten first, so a flood of distinct headers costs one insertion each and never more room. The last one used
 * is tried first, without a lookup. Each caller gets its own copy, so no one can change another token's header; a
 * header holding objects or arrays is always decoded afresh. A header is no secret and of no use without a payload
 * and a signature: it is the same for every token of its key.
 */
export const HEADER_MEMO_SIZE = 8;
export const HEADER_MEMO_LENGTH = 512;
interface KnownHeader {
  /** The segment, a string of its own (never a slice of a token). */
  segment: string;
  header: Record<string, unknown>;
}
const headers = new Map<string, KnownHeader>();
let lastHeader: KnownHeader | undefined;

/** How many headers the memo holds and their segments' characters in all (for tests of its bounds). */
export function rememberedHeaders(): { count: number; characters: number } {
  let characters = 0;
  for (const segment of headers.keys()) characters += segment.length;
  return { count: headers.size, characters };
}

function isFlat(value: Record<string, unknown>): boolean {
  for (const name in value) {
    const member = value[name];
    if (typeof member === 'object' && member !== null) return false;
  }
  return true;
}

function remember(segment: string, header: Record<string, unknown>): void {
  // A flat copy of the segment: a slice of the token would keep the whole token alive in this module.
  const own = Buffer.from(segment, 'latin1').toString('latin1');
  if (headers.size >= HEADER_MEMO_SIZE) headers.delete(headers.keys().next().value as string);
  lastHeader = { segment: own, header: { ...header } };
  headers.set(own, lastHeader);
}

function decodeHeader(segment: string): Record<string, unknown> {
  if (lastHeader !== undefined && lastHeader.segment === segment) return { ...lastHeader.header };
  const known = segment.length <= HEADER_MEMO_LENGTH ? headers.get(segment) : undefined;
  if (known !== undefined) {
    lastHeader = known;
    return { ...known.header };
  }
  const [header] = decodeJsonObject(segment, 'header', invalid);
  if (segment.length <= HEADER_MEMO_LENGTH && isFlat(header)) remember(segment, header);
  return header;
}

/**
 * Split a compact JWS into its decoded header and payload. Throws `invalid_token`: `syntax` for a character
 * outside base64url and dots (RFC 7515 §7.1), else unless there are exactly three non-empty canonical base64url
 * segments whose first two are JSON objects. Duplicate JSON member names resolve to the last one (JSON.parse), as
 * RFC 7515 §4 permits. The alphabet is checked segment by segment as each is decoded (`canonicalText`), so a
 * token is read once; only a refused one is read again, to name its fault as the alphabet rule would.
 */
export function decodeJws(token: string): DecodedJws {
  try {
    return decodeSegments(token);
  } catch (err) {
    throw isJwsText(token) ? err : invalid('syntax');
  }
}

/** Base64url characters from `lastIndex` to the end: the signature's alphabet, read in place (jwsSignedEnd has checked its length and last bits). */
const SIGNATURE_TEXT = /[A-Za-z0-9_-]*$/y;

function decodeSegments(token: string): DecodedJws {
  const second = jwsSignedEnd(token);
  SIGNATURE_TEXT.lastIndex = second + 1;
  if (!SIGNATURE_TEXT.test(token)) throw invalid('signature-encoding');
  const first = token.indexOf('.');
  const header = jwsHeader(decodeHeader(token.slice(0, first)));
  const [payload, payloadLength] = decodeJsonObject(token.slice(first + 1, second), 'payload', invalid);
  return { header, payload, payloadLength, signedEnd: second };
}

/** A decoded header as a JWS header: `alg` a string (RFC 7515 §4.1.1), `kid`, when present, a string. */
function jwsHeader(header: Record<string, unknown>): JwsHeader {
  if (typeof header.alg !== 'string') throw invalid('alg');
  if (header.kid !== undefined && typeof header.kid !== 'string') throw invalid('kid');
  return header as JwsHeader;
}

/** Header rules (RFC 8725 §3.1, RFC 7515 §4.1.11): `alg` one of ours (never `none`), no `crit`. */
export function checkHeader(header: JwsHeader, algorithms: ReadonlySet<string>): void {
  if (!algorithms.has(header.alg)) throw invalid('alg');
  if (header.crit !== undefined) throw invalid('crit');
}

/** `typ` as RFC 7515 §4.1.9 compares it: case-insensitively, with or without the `application/` prefix. */
export function normalizeTyp(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
}

const PADDED_JWS_TEXT = /^[A-Za-z0-9_.=-]+$/;

/** Whether `text` holds only what a padded compact JWS may (AWS ALB's form): base64url characters, `=` and dots. */
export function isPaddedJwsText(text: string): boolean {
  return PADDED_JWS_TEXT.test(text);
}

/**
 * A segment of the padded form without its padding, refused unless the padding is exactly what its length needs
 * (RFC 4648 §4: a multiple of four characters, so one `=` after 4n+3, two after 4n+2, none after 4n; never three)
 * and the rest is canonical base64url: one byte string has one spelling here too.
 */
function unpadded(segment: string, what: string): string {
  let end = segment.length;
  while (end > 0 && segment.charCodeAt(end - 1) === 61) end--;
  const padding = segment.length - end;
  if (segment.length % 4 !== 0 || padding > 2) throw invalid(`${what}-encoding`);
  const body = padding === 0 ? segment : segment.slice(0, end);
  if (body.includes('=') || !isCanonicalBase64url(body, 0, body.length)) throw invalid(`${what}-encoding`);
  return body;
}

/**
 * `decodeJws` for AWS ALB's assertions, whose three segments are base64url padded with `=` (which RFC 7515 §2
 * leaves out), or, the day the ALB drops the padding, not: a token holding an `=` is read in the padded form, each
 * segment carrying exactly the padding its length needs; one without is a standard compact JWS, read by
 * `decodeJws`. Either way `signedEnd` indexes the text as received, so the signature is checked over the bytes as
 * the ALB signed and sent them, and a token cannot mix the forms. Only a key source that says its tokens may be
 * padded (the ALB preset's) reads tokens this way; everywhere else `decodeJws` refuses padding.
 */
export function decodePaddedJws(token: string): DecodedJws {
  if (!token.includes('=')) return decodeJws(token);
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  if (second < 0 || token.indexOf('.', second + 1) >= 0) throw invalid('segments');
  if (second === token.length - 1) throw invalid('signature-missing');
  unpadded(token.slice(second + 1), 'signature');
  const header = jwsHeader(decodeJsonObject(unpadded(token.slice(0, first), 'header'), 'header', invalid)[0]);
  const payloadSegment = unpadded(token.slice(first + 1, second), 'payload');
  const [payload, payloadLength] = decodeJsonObject(payloadSegment, 'payload', invalid);
  return { header, payload, payloadLength, signedEnd: second };
}
