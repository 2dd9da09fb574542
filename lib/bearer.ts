import { TokenAuthError } from './errors';

/** Which token alphabet extraction accepts: compact JWS, or RFC 6750 `b64token` (opaque tokens, upstream mode). */
export type TokenSyntax = 'jws' | 'b64token';

const JWS_CHARS = /^[A-Za-z0-9_.-]+$/;
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
  if (authorization === undefined) return undefined;
  if (typeof authorization !== 'string') return new TokenAuthError('invalid_token', { reason: 'authorization' });
  const value = authorization.trim();
  if (value.length < 6 || value.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  if (value.length === 6) return invalid('empty');
  if (value.charCodeAt(6) !== 32) return undefined; // "Bearerxyz" is some other scheme
  let at = 7;
  while (value.charCodeAt(at) === 32) at++;
  return checkTokenSyntax(value.slice(at), maxTokenLength, syntax);
}

/** The same syntax and length rules for a token handed over directly (`verify(token)`, `getToken`). */
export function checkTokenSyntax(token: unknown, maxTokenLength: number, syntax: TokenSyntax): string | TokenAuthError {
  if (typeof token !== 'string' || token.length === 0) return invalid('empty');
  if (token.length > maxTokenLength) return invalid('length');
  if (!(syntax === 'jws' ? JWS_CHARS : B64TOKEN).test(token)) return invalid('syntax');
  return token;
}

function invalid(reason: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason });
}
