// Which way a token goes when introspection is on (SPEC §16): a JWT of the configured issuer is verified here with
// its keys; anything else is asked of the authorization server. One choice per token, made on a cache miss.
import type { KeySource } from '../keys/source';
import type { ResolvedIntrospection } from '../keys/introspection-options';
import { decodeJws } from '../token/jws';

/** The source that verifies one token; the verifier asks it on a cache miss. */
export type TokenRoute = (token: string) => KeySource;

const JWS_CHARS = /^[A-Za-z0-9_.-]+$/;

/** The `iss` of a token that is a compact JWS with a JSON header and payload, or undefined for anything else. */
function issuerOfJwt(token: string): string | undefined {
  if (!JWS_CHARS.test(token)) return undefined;
  try {
    const iss = decodeJws(token).payload.iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `introspect: 'opaque'` (the default): a token that decodes as a JWT whose unverified `iss` names the configured
 * server (give or take one trailing slash) goes to the local keys, which then require the discovered issuer
 * exactly and a good signature; a lie there only fails, and costs no call. Any other token (opaque, or another
 * issuer's JWT) is introspected. `'always'`: every token is introspected.
 */
export function introspectionRoute(local: KeySource, remote: KeySource, settings: Pick<ResolvedIntrospection, 'mode' | 'server'>): TokenRoute {
  if (settings.mode === 'always') return () => remote;
  const base = settings.server.base;
  const bare = base.endsWith('/') ? base.slice(0, -1) : base;
  const known = new Set([bare, `${bare}/`]);
  return (token) => {
    const iss = issuerOfJwt(token);
    return iss !== undefined && known.has(iss) ? local : remote;
  };
}
