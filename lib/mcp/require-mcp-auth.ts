// requireMcpAuth: one middleware for an MCP endpoint. It verifies as requireVerifiedUser does (through the
// TokenAuth's route guard), with the scopes of the tools a request calls, and leaves the SDK's AuthInfo on req.auth.
import type { Request, RequestHandler } from 'express';
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { RouteGuard } from '../http/guard';
import type { JwtClaims } from '../token/claim-modes';
import type { ScopeReader } from '../token/scope-claim';
import type { ScopeRequirementInput } from '../token/scopes';
import type { RouteRequirement } from '../token/step-up';
import { toAuthInfo } from './auth-info';
import { calledTools, parseToolScopes } from './tools';

/** Options of `requireMcpAuth(auth, options)`. */
export interface RequireMcpAuthOptions {
  /** Scopes every request to the endpoint needs, as `requireVerifiedUser` takes them. */
  scopes?: ScopeRequirementInput;
  /**
   * Scopes a `tools/call` of a tool needs on top of the endpoint's: `{ toolName: scopes }`. A call without them is
   * answered 403 `insufficient_scope` naming every scope it needs, so the client can step up. Other tools: the
   * endpoint's scopes.
   */
  tools?: Readonly<Record<string, readonly string[]>>;
}

const MCP_AUTH_OPTIONS: FieldList<RequireMcpAuthOptions> = { scopes: true, tools: true };

/** The endpoint's requirement as `{ all, any }` lists, to add a tool's scopes to (validated by the guard first). */
function requirementParts(input: ScopeRequirementInput | undefined): {
  all: readonly string[];
  any: readonly string[];
} {
  if (input === undefined) return { all: [], any: [] };
  if (Array.isArray(input)) return { all: input, any: [] };
  const spec = input as { all?: readonly string[]; any?: readonly string[] };
  return { all: spec.all ?? [], any: spec.any ?? [] };
}

/**
 * Build the middleware on the TokenAuth's route guard (`routeGuard(auth)`), reading scopes with `scopesOf` (its
 * `auth.scopesOf`); options are checked here, once (a TypeError naming the option).
 */
export function mcpAuthMiddleware<C extends JwtClaims>(
  guard: RouteGuard<C>,
  scopesOf: ScopeReader,
  options: unknown,
): RequestHandler {
  if (options !== undefined && !isObject(options))
    optionError('', 'requireMcpAuth options must be an object { scopes, tools }');
  const given = (options ?? {}) as RequireMcpAuthOptions;
  knownFields(given, MCP_AUTH_OPTIONS, '', 'requireMcpAuth');

  const endpoint = guard.requirement(given.scopes);
  const parts = requirementParts(given.scopes);
  const withTools = (scopes: readonly string[]) =>
    guard.requirement({ all: [...parts.all, ...scopes], any: parts.any });
  const tools = parseToolScopes(given.tools);
  const perTool = new Map<string, RouteRequirement>();
  for (const [name, scopes] of tools) perTool.set(name, withTools(scopes));
  const everyTool = withTools([...tools.values()].flat());

  function pick(req: Request): RouteRequirement {
    if (tools.size === 0) return endpoint;
    const called = calledTools(req);
    // The transport would parse the body after us: no call could be seen, so none is let through unseen.
    if (called.kind === 'unread')
      throw new TokenAuthError('internal', { reason: 'mcp-body-unread: mount express.json() before requireMcpAuth' });
    if (called.kind === 'every') return everyTool;
    const gated = [...new Set(called.names)].filter((name) => tools.has(name));
    if (gated.length === 0) return endpoint;
    if (gated.length === 1) return perTool.get(gated[0]) as RouteRequirement;
    return withTools(gated.flatMap((name) => tools.get(name) ?? []));
  }

  return guard.middleware(pick, (req, { claims, token }) => {
    // This package's own program declares req.auth as claims; a program that loads the mcp entry sees AuthInfo.
    (req as { auth?: unknown }).auth = toAuthInfo(token, claims, scopesOf(claims), guard.resource);
  });
}
