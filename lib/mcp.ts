// The `express-verified-user/mcp` entry: requireMcpAuth (one middleware for an MCP endpoint) and mcpTokenVerifier
// (the MCP SDK's OAuthTokenVerifier), over a TokenAuth. The MCP SDK is an optional peer (1.x or 2.x).
import type { TokenAuth } from './token-auth';
import type { JwtClaims } from './token/claim-modes';
import { createMcpTokenVerifier, type McpTokenVerifier, type McpTokenVerifierOptions } from './mcp/token-verifier';

export type { McpAuthInfo } from './mcp/auth-info';
export type { RequireMcpAuthOptions } from './mcp/require-mcp-auth';
export type { McpTokenVerifier, McpTokenVerifierOptions } from './mcp/token-verifier';
export type { McpSdkLine } from './mcp/sdk-errors';

// TEMPORARY until the core's scopesOf/resource land (branch pr-resource).
const scopesOf = (claims: JwtClaims) => (typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : undefined);

/**
 * The MCP SDK's `OAuthTokenVerifier` over `auth.verify()`, for apps that keep the SDK's `requireBearerAuth`
 * (1.x or 2.x). A refused token throws the SDK's `invalid_token` error (401 there), an outage its
 * `temporarily_unavailable` (400: no SDK line answers 503), anything else `server_error`.
 */
export function mcpTokenVerifier(auth: TokenAuth, options?: McpTokenVerifierOptions): McpTokenVerifier {
  return createMcpTokenVerifier({ verify: (token) => auth.verify(token), scopesOf, resource: undefined }, options, require);
}
