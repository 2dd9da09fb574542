// Reading a DPoP request: the `DPoP` Authorization scheme and the single `DPoP` proof header (RFC 9449 §7.1).
import type { Request } from 'express';
import { trimOws } from '../extract/bearer';
import { TokenAuthError } from '../base/errors';

/** Whether an Authorization value uses the DPoP scheme (any case), as `extractDpop` reads it. */
export function isDpopScheme(authorization: string | string[] | undefined): boolean {
  if (typeof authorization !== 'string') return false;
  const value = trimOws(authorization);
  return value.length > 4 && value.charCodeAt(4) === 32 && value.slice(0, 4).toLowerCase() === 'dpop';
}

/**
 * RFC 9449 §7.1: the token in `Authorization: DPoP <token>`, read by the rules of `bearerCredential` (case-
 * insensitive scheme, one token, the length cap first). Undefined when the scheme is another one (missing).
 */
export function dpopCredential(
  authorization: string | string[] | undefined,
  maxTokenLength: number,
): string | undefined | TokenAuthError {
  if (authorization === undefined) return undefined;
  if (typeof authorization !== 'string') return new TokenAuthError('invalid_token', { reason: 'authorization' });
  const value = trimOws(authorization);
  if (value.length < 4 || value.slice(0, 4).toLowerCase() !== 'dpop') return undefined;
  if (value.length === 4) return new TokenAuthError('invalid_token', { reason: 'empty' });
  if (value.charCodeAt(4) !== 32) return undefined;
  let at = 5;
  while (value.charCodeAt(at) === 32) at++;
  const token = value.slice(at);
  if (token.length === 0) return new TokenAuthError('invalid_token', { reason: 'empty' });
  if (token.length > maxTokenLength) return new TokenAuthError('invalid_token', { reason: 'length' });
  return token;
}

/**
 * The one `DPoP` header field of a request, or undefined when there is none or more than one (RFC 9449 §4.3
 * check 1). Counted in `rawHeaders`: Node joins repeated unknown fields with ", " in `headers`.
 */
export function proofField(req: Request): string | undefined {
  const raw = req.rawHeaders;
  let found: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length !== 4 || name.toLowerCase() !== 'dpop') continue;
    if (found !== undefined) return undefined;
    found = raw[i + 1];
  }
  return found;
}
