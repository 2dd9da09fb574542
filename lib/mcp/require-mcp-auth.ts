// requireMcpAuth: one middleware for an MCP endpoint. It verifies as requireVerifiedUser does (through the
// TokenAuth's route guard), with the scopes of the tools, resources and prompts a request calls and the route's
// step-up demand, and leaves the SDK's AuthInfo on req.auth.
import type { Request, RequestHandler } from 'express';
import type { Duration } from '../base/duration';
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { RouteGuard } from '../http/guard';
import type { JwtClaims } from '../token/claim-modes';
import type { ScopeReader } from '../token/scope-claim';
import type { ScopeRequirementInput } from '../token/scopes';
import { parseStepUp, type StepUp } from '../token/step-up';
import type { RouteRequirement } from '../authorize/route';
import { toAuthInfo } from './auth-info';
import { calledItems } from './calls';
import {
  callKey,
  combineGates,
  everyGate,
  gateEntry,
  hasGates,
  parseGates,
  type GateEntry,
  type GatedCall,
  type McpCallRequirement,
  type McpGates,
} from './gates';

/** Options of `requireMcpAuth(auth, options)`; `C`: the claims the TokenAuth's mode guarantees (for `allow`). */
export interface RequireMcpAuthOptions<C extends JwtClaims = JwtClaims> {
  /** Scopes every request to the endpoint needs, as `requireVerifiedUser` takes them. */
  scopes?: ScopeRequirementInput;
  /**
   * Scopes a `tools/call` of a tool needs on top of the endpoint's: `{ toolName: scopes }`. A call without them is
   * answered 403 `insufficient_scope` naming every scope it needs, so the client can step up. Other tools: the
   * endpoint's scopes. In place of the scopes, a route's requirements (`{ scopes, roles, claims, … }`,
   * docs/authorization.md): a call that misses one is answered 403 `forbidden`.
   */
  tools?: Readonly<Record<string, readonly string[] | McpCallRequirement<C>>>;
  /**
   * Scopes a `resources/read` of a resource needs on top of the endpoint's: `{ uri: scopes }`. URIs are matched as
   * the SDK's server matches them (parsed and serialised again); a resource template's reads are not gated by it.
   */
  resources?: Readonly<Record<string, readonly string[] | McpCallRequirement<C>>>;
  /** Scopes (or requirements, as `tools`) a `prompts/get` of a prompt needs on top of the endpoint's. */
  prompts?: Readonly<Record<string, readonly string[] | McpCallRequirement<C>>>;
  /** Step-up (RFC 9470), as `requireVerifiedUser`'s: the token's `acr` must be one of these. */
  acr?: readonly string[];
  /** Step-up (RFC 9470), as `requireVerifiedUser`'s: the longest time since the user authenticated (`auth_time`). */
  maxAge?: Duration;
}

const MCP_AUTH_OPTIONS: FieldList<RequireMcpAuthOptions> = {
  scopes: true,
  tools: true,
  resources: true,
  prompts: true,
  acr: true,
  maxAge: true,
};

/** The endpoint's requirement as `{ all, any }` lists, to add a call's scopes to (validated by the guard first). */
function requirementParts(input: ScopeRequirementInput | undefined): {
  all: readonly string[];
  any: readonly string[];
} {
  if (input === undefined) return { all: [], any: [] };
  if (Array.isArray(input)) return { all: input, any: [] };
  const spec = input as { all?: readonly string[]; any?: readonly string[] };
  return { all: spec.all ?? [], any: spec.any ?? [] };
}

/** The route's step-up demand from `acr`/`maxAge`, checked now with requireMcpAuth's name in its messages. */
function stepUpOf(given: RequireMcpAuthOptions): StepUp | undefined {
  const demand: Record<string, unknown> = {};
  if (given.acr !== undefined) demand.acr = given.acr;
  if (given.maxAge !== undefined) demand.maxAge = given.maxAge;
  return parseStepUp(demand, 'requireMcpAuth');
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
    optionError('', 'requireMcpAuth options must be an object { scopes, tools, resources, prompts, acr, maxAge }');
  const given = (options ?? {}) as RequireMcpAuthOptions;
  knownFields(given, MCP_AUTH_OPTIONS, '', 'requireMcpAuth');

  const stepUp = stepUpOf(given);
  const parts = requirementParts(given.scopes);
  // Every requirement carries the route's step-up demand; a call's adds its scopes and requirements to the endpoint's.
  const requirementWith = ({ scopes, authorization, owner }: GateEntry): RouteRequirement =>
    Object.freeze({
      scopes: guard.requirement({ all: [...parts.all, ...scopes], any: parts.any }).scopes,
      stepUp,
      authorization,
      owner,
    });
  const endpoint: RouteRequirement = Object.freeze({
    ...guard.requirement(given.scopes),
    stepUp,
    owner: () => 'the MCP endpoint (requireMcpAuth option "scopes")',
  });
  const gates: McpGates = parseGates(given, guard.requirements);
  const gated = hasGates(gates);
  const everything = requirementWith(everyGate(gates));
  // One requirement per gated key, made at set-up; a request calling several gated things gets one made for it.
  const single = new Map<GatedCall['gate'], Map<string, RouteRequirement>>();
  for (const gate of ['tools', 'resources', 'prompts'] as const)
    single.set(gate, new Map([...gates[gate]].map(([key, entry]) => [key, requirementWith(entry)])));

  function pick(req: Request): RouteRequirement {
    if (!gated) return endpoint;
    const called = calledItems(req);
    // The transport would parse the body after us: no call could be seen, so none is let through unseen.
    if (called.kind === 'unread')
      throw new TokenAuthError('internal', {
        reason: 'mcp-body-unread: mount express.json() before requireMcpAuth, or send MCP 2026-07-28 headers',
      });
    if (called.kind === 'bad-name') throw new TokenAuthError('invalid_request', { reason: 'mcp-name-encoding' });
    if (called.kind === 'every') return everything;
    // The gated requirements the calls reach, each once: a call named in the headers and the body is one call.
    const needed = new Set<RouteRequirement>();
    for (const call of called.calls) {
      const made = single.get(call.gate)?.get(callKey(call.gate, call.key));
      if (made !== undefined) needed.add(made);
    }
    if (needed.size === 0) return endpoint;
    if (needed.size === 1) return needed.values().next().value as RouteRequirement;
    return requirementWith(combineGates(called.calls.flatMap((call) => gateEntry(gates, call) ?? [])));
  }

  return guard.middleware(pick, (req, { claims, token }) => {
    // This package's own program declares req.auth as claims; a program that loads the mcp entry sees AuthInfo.
    (req as { auth?: unknown }).auth = toAuthInfo(token, claims, scopesOf(claims), guard.resource);
  });
}
