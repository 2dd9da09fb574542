// Reading the credential from a request: the Authorization field (raw, so that two fields are seen), the Bearer
// scheme (RFC 6750 §2.1), the token's length and alphabet, CORS preflights. No verification happens here.
import { TokenAuthError } from '../base/errors';
import { isJwsText, isPaddedJwsText } from '../jose/jws';

/**
 * Which token alphabet extraction accepts: compact JWS, AWS ALB's padded JWS (its preset only), or RFC 6750
 * `b64token` (opaque tokens, upstream mode).
 */
export type TokenSyntax = 'jws' | 'padded-jws' | 'b64token';

const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** True for a CORS preflight: `OPTIONS` with `Access-Control-Request-Method`; it passes unauthenticated. */
export function isPreflight(method: string | undefined, headers: Record<string, unknown>): boolean {
  return method === 'OPTIONS' && headers['access-control-request-method'] !== undefined;
}

/**
 * RFC 6750 §2.1: the token in `Authorization: Bearer <token>`. Returns undefined when there is no bearer
 * credential at all (no header, or another scheme: RFC 6750 §3.1 "missing"), the token when well formed, and a
 * TokenAuthError (`invalid_token`) when a Bearer credential is present but unusable. The length cap is applied
 * before anything else looks at the token.
 */
export function extractBearer(
  authorization: string | string[] | undefined,
  maxTokenLength: number,
  syntax: TokenSyntax,
): string | undefined | TokenAuthError {
  const credential = bearerCredential(authorization, maxTokenLength);
  if (typeof credential !== 'string') return credential;
  return alphabetFault(credential, syntax) ?? credential;
}

/**
 * `extractBearer` without its alphabet check (scheme, emptiness and length only), for a caller that runs
 * `alphabetFault` itself, later: the verifier does so on a cache miss only, since a token found in the cache
 * passed it when it was stored, and the check reads every character of the token.
 */
export function bearerCredential(
  authorization: string | string[] | undefined,
  maxTokenLength: number,
): string | undefined | TokenAuthError {
  if (authorization === undefined) return undefined;
  if (typeof authorization !== 'string') return new TokenAuthError('invalid_token', { reason: 'authorization' });
  const value = trimOws(authorization);
  if (value.length < 6 || !isBearerScheme(value)) return undefined;
  if (value.length === 6) return invalid('empty');
  if (value.charCodeAt(6) !== 32) return undefined; // "Bearerxyz" is some other scheme
  let at = 7;
  while (value.charCodeAt(at) === 32) at++;
  const token = value.slice(at);
  if (token.length > maxTokenLength) return invalid('length');
  return token;
}

/** Whether `value` starts with "bearer" in any case; the usual spelling is tested without making a new string. */
function isBearerScheme(value: string): boolean {
  return value.startsWith('Bearer') || value.slice(0, 6).toLowerCase() === 'bearer';
}

/**
 * Strip HTTP optional whitespace (SP, HTAB; RFC 9110 §5.6.3) only. String#trim would also strip U+00A0, which
 * a Latin-1 header value can hold, and so accept a token with a stray byte as if it were the token.
 */
export function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/**
 * The Authorization field of a request: its value, or every value when it was sent more than once. Node keeps
 * only the first repeated Authorization field in `headers`; `rawHeaders` still has them all. Authorization is
 * not a list field (RFC 9110 §5.3), so two of them are refused, not narrowed to the one Node kept, which a proxy
 * in front may have read differently.
 */
export function authorizationField(
  headers: { authorization?: string },
  rawHeaders: readonly string[],
): string | string[] | undefined {
  const first = headers.authorization;
  if (first === undefined) return undefined;
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (isAuthorizationName(rawHeaders[i])) count++;
  if (count < 2) return first;
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (isAuthorizationName(rawHeaders[i])) values.push(rawHeaders[i + 1]);
  return values;
}

/** Whether a raw header name is Authorization in any case; the two usual spellings are matched without a new string. */
function isAuthorizationName(name: string): boolean {
  return (
    name.length === 13 &&
    (name === 'Authorization' || name === 'authorization' || name.toLowerCase() === 'authorization')
  );
}

/**
 * Whether a request's URL carries an `access_token` query parameter (RFC 6750 §2.3). Such a token is never read:
 * URLs end up in logs, browser history and Referer headers (RFC 6750 §5.3). Asked only for a request that brought
 * no token otherwise, so that its refusal can say one was seen there (reason `token-in-query`); never its value.
 */
export function tokenInQuery(url: string | undefined): boolean {
  const at = url === undefined ? -1 : url.indexOf('?');
  return at >= 0 && new URLSearchParams((url as string).slice(at + 1)).has('access_token');
}

/** The same syntax and length rules for a token handed over directly (`verify(token)`, `getToken`). */
export function checkTokenSyntax(token: unknown, maxTokenLength: number, syntax: TokenSyntax): string | TokenAuthError {
  if (typeof token !== 'string' || token.length === 0) return invalid('empty');
  if (token.length > maxTokenLength) return invalid('length');
  return alphabetFault(token, syntax) ?? token;
}

/** The alphabet rule (base64url and dots; RFC 6750 b64token in upstream mode): undefined when every character is allowed, else the `invalid_token` fault. */
export function alphabetFault(token: string, syntax: TokenSyntax): TokenAuthError | undefined {
  const allowed =
    syntax === 'jws' ? isJwsText(token) : syntax === 'padded-jws' ? isPaddedJwsText(token) : B64TOKEN.test(token);
  return allowed ? undefined : invalid('syntax');
}

function invalid(reason: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason });
}
