// The MCP SDK's AuthInfo built from a verified token (the SDK's own shape, 1.x and 2.x): what an MCP tool reads
// as `extra.authInfo` (1.x) or `ctx.http.authInfo` (2.x).
import type { RegisteredClaims } from '../token/claim-modes';

/**
 * The MCP SDK's `AuthInfo`, declared here by shape so the SDK stays an optional peer: both SDK lines' `AuthInfo`
 * accept it, and it accepts theirs.
 */
export interface McpAuthInfo {
  /** The access token, as the client sent it. */
  token: string;
  /** The token's `client_id` claim (RFC 9068), else `azp`, else the empty string. */
  clientId: string;
  /** The granted scopes, read as the TokenAuth reads them (`scopeClaim`). */
  scopes: string[];
  /** The token's `exp`, in seconds since the epoch. */
  expiresAt?: number;
  /** The configured `resource` (RFC 8707), which the token's audience matched. */
  resource?: URL;
  /** `claims`: the verified claims (typed by mode through `auth.claims(req)`). */
  extra?: Record<string, unknown>;
}

/** The AuthInfo of a verified token: a new object (and a new URL) per request, so a tool cannot reach another's. */
export function toAuthInfo(
  token: string,
  claims: RegisteredClaims,
  scopes: readonly string[] | undefined,
  resource: string | undefined,
): McpAuthInfo {
  const clientId =
    typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : '';
  const info: McpAuthInfo = {
    token,
    clientId,
    scopes: scopes === undefined ? [] : [...scopes],
    expiresAt: claims.exp,
    extra: { claims },
  };
  if (resource !== undefined) info.resource = new URL(resource);
  return info;
}
