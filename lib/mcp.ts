// The `express-verified-user/mcp` entry: requireMcpAuth (one middleware for an MCP endpoint) and mcpTokenVerifier
// (the MCP SDK's OAuthTokenVerifier), over a TokenAuth. The MCP SDK is an optional peer (1.x or 2.x).
import type { RequestHandler } from 'express';
import { routeGuard, type TokenAuth } from './token-auth';
import type { RegisteredClaims } from './token/claim-modes';
import { mcpAuthMiddleware, type RequireMcpAuthOptions } from './mcp/require-mcp-auth';
import {
  createMcpTokenVerifier,
  type McpTokenVerifier,
  type McpTokenVerifierOptions,
  type McpVerifySource,
} from './mcp/token-verifier';
import type { ModuleLoader } from './mcp/sdk-errors';

export type { McpAuthInfo } from './mcp/auth-info';
export type { RequireMcpAuthOptions } from './mcp/require-mcp-auth';
export type { McpCallRequirement } from './mcp/gates';
export type { McpTokenVerifier, McpTokenVerifierOptions } from './mcp/token-verifier';
export type { McpSdkLine } from './mcp/sdk-errors';

/**
 * One middleware for an MCP endpoint (mount it with `app.all`): verifies as `auth.requireVerifiedUser(scopes, { acr,
 * maxAge })` does (challenges with `resource_metadata` and `scope`), gates `tools/call`, `resources/read` and
 * `prompts/get` per tool, resource and prompt (`tools`, `resources`, `prompts`: `{ key: scopes }`, or `{ key: {
 * scopes, roles, … } }` with a route's requirements, docs/authorization.md) as the `Mcp-Method`/`Mcp-Name` headers
 * and the JSON-RPC body call them, reading that body itself when no parser did (up to `limit`) and leaving it on
 * `req.body` for the transport, and sets `req.auth` to the SDK's `AuthInfo`, which the transport hands to tools.
 * Answers after the token what the transport would refuse itself (413, -32700, MCP 2026-07-28 header mismatches
 * -32020). `auth.claims(req)` still gives the typed claims.
 */
export function requireMcpAuth<C extends RegisteredClaims>(
  auth: TokenAuth<C>,
  options?: RequireMcpAuthOptions<C>,
): RequestHandler {
  return mcpAuthMiddleware(routeGuard(auth), (claims) => auth.scopesOf(claims), options);
}

/**
 * The MCP SDK's `OAuthTokenVerifier` over `auth.verify()`, for apps that keep the SDK's `requireBearerAuth`
 * (1.x or 2.x). A refused token throws the SDK's `invalid_token` error (401 there), an outage its
 * `temporarily_unavailable` (400: no SDK line answers 503), anything else `server_error`. A sender-constrained
 * token (`cnf.jkt` or `cnf["x5t#S256"]`) is refused: that path has no DPoP proof nor client certificate to check.
 * Throws a TypeError for a TokenAuth with `dpop.required` (use `requireMcpAuth`).
 */
export const mcpTokenVerifier = mcpTokenVerifierLoading(require);

/**
 * @internal mcpTokenVerifier with the SDK's modules loaded by `load`: the ES module face (`mcp.mjs`) passes the
 * SDK's ESM builds, whose error classes are not the CommonJS ones `require` gives.
 */
export function mcpTokenVerifierLoading(load: ModuleLoader) {
  return function mcpTokenVerifier<C extends RegisteredClaims>(
    auth: TokenAuth<C>,
    options?: McpTokenVerifierOptions,
  ): McpTokenVerifier {
    const { resource, dpopRequired } = routeGuard(auth);
    const source: McpVerifySource = {
      verify: (token: string) => auth.verify(token),
      scopesOf: (claims) => auth.scopesOf(claims),
      resource,
      dpopRequired,
    };
    return createMcpTokenVerifier(source, options, load);
  };
}
