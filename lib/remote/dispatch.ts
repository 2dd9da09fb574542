// Which way a token goes when introspection is on (docs/introspection.md): a JWT of the configured issuer is verified here with
// its keys; anything else is asked of the authorization server. One choice per token, made on a cache miss.
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import type { TokenSource } from './source';
import type { ResolvedIntrospection } from './introspection-options';
import { withoutTrailingSlash } from '../fetch/remote-url';
import { isJwsText } from '../jose/jws';

/**
 * The source that verifies one token; the verifier asks it on a cache miss. It throws `invalid_token` (reason
 * `syntax`) for a token it will neither introspect nor hand to the strict decoder.
 */
export type TokenRoute = (token: string) => TokenSource;

const NOT_BASE64URL = /[^A-Za-z0-9_-]/g;

/**
 * The JSON objects a segment may be read as by a forgiving decoder: Node's (which skips `~` and `=`, and reads
 * `+` `/` as `-` `_`), and one that drops every character outside base64url first. What another server's JWT
 * library might make of the token, not what this package accepts.
 */
function leniently(segment: string): Record<string, unknown>[] {
  const readings = [segment];
  const stripped = segment.replace(NOT_BASE64URL, '');
  if (stripped !== segment) readings.push(stripped);
  const objects: Record<string, unknown>[] = [];
  for (const text of readings) {
    try {
      const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
      if (isObject(value)) objects.push(value);
    } catch {
      // not JSON in this reading
    }
  }
  return objects;
}

/**
 * The `iss` values a token names if it looks like a compact JWS to a forgiving library: its first two non-empty
 * dot-separated segments read as a header with a string `alg` and a payload (extra, leading or doubled dots are
 * skipped, as a parser that drops empty segments would); empty for anything else. No rule is checked here.
 */
function issuersOfLookAlike(token: string): string[] {
  if (!token.includes('.')) return [];
  const segments = token.split('.').filter((segment) => segment !== '');
  if (segments.length < 2) return [];
  if (!leniently(segments[0]).some((header) => typeof header.alg === 'string')) return [];
  const issuers: string[] = [];
  for (const payload of leniently(segments[1])) if (typeof payload.iss === 'string') issuers.push(payload.iss);
  return issuers;
}

/** The compact JWS form the strict decoder takes: three segments, base64url characters only. */
function isCompactJws(token: string): boolean {
  return isJwsText(token) && token.split('.').length === 3;
}

/**
 * `introspect: 'opaque'` (the default): a token that looks like a JWT (read leniently, as a forgiving library
 * would) whose unverified `iss` names the configured server (give or take one trailing slash) goes to the local
 * keys, which then decode it strictly, require the discovered issuer exactly and a good signature; a lie there only
 * fails, and costs no call. Such a token spelt with characters outside base64url (`~ + / =`, which the b64token
 * syntax of introspection lets through) or with other than exactly two dots is refused here (`syntax`): were it introspected instead, an issuer's JWT
 * that the local rules refuse (`typ`, the header) could pass at a server whose decoder forgives the extra
 * characters. Any other token (opaque, or another issuer's JWT) is introspected. `'always'`: every token is.
 */
export function introspectionRoute(
  local: TokenSource,
  remote: TokenSource,
  settings: Pick<ResolvedIntrospection, 'mode' | 'server'>,
): TokenRoute {
  if (settings.mode === 'always') return () => remote;
  const bare = withoutTrailingSlash(settings.server.base);
  const known = new Set([bare, `${bare}/`]);
  return (token) => {
    if (!issuersOfLookAlike(token).some((iss) => known.has(iss))) return remote;
    if (!isCompactJws(token)) throw new TokenAuthError('invalid_token', { reason: 'syntax' });
    return local;
  };
}
