// requireMcpAuth: one middleware for an MCP endpoint. It settles the JSON-RPC body the transport will run (reading
// it when no parser did), verifies as requireVerifiedUser does (through the TokenAuth's route guard) with the scopes
// of the tools, resources and prompts that body calls and the route's step-up demand, answers after the token what
// the transport itself would refuse, and leaves the SDK's AuthInfo on req.auth.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Duration } from '../base/duration';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject, isThenable } from '../base/values';
import type { RouteGuard } from '../http/guard';
import type { RegisteredClaims } from '../token/claim-modes';
import type { ScopeReader } from '../token/scope-claim';
import type { ScopeRequirementInput } from '../token/scopes';
import { parseStepUp, type StepUp } from '../token/step-up';
import type { RouteRequirement } from '../authorize/route';
import { toAuthInfo } from './auth-info';
import { resolveBodyLimit, settleMcpBody, type BodyFault } from './body';
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
import { headerMismatch } from './headers';
import { bodyRefusal, sendRefusal, type McpRefusal } from './transport-errors';

/** Options of `requireMcpAuth(auth, options)`; `C`: the claims the TokenAuth's mode guarantees (for `allow`). */
export interface RequireMcpAuthOptions<C extends RegisteredClaims = RegisteredClaims> {
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
  /**
   * The largest JSON body the middleware reads itself when no parser read it, as `express.json()`'s `limit`: bytes,
   * or a size such as `'1mb'` (default `'100kb'`). A larger body is answered 413 after the token.
   */
  limit?: number | string;
}

const MCP_AUTH_OPTIONS: FieldList<RequireMcpAuthOptions> = {
  scopes: true,
  tools: true,
  resources: true,
  prompts: true,
  acr: true,
  maxAge: true,
  limit: true,
};

/** The scope a client asks its authorization server for refresh tokens; no operation of a resource needs it. */
const OFFLINE_ACCESS = 'offline_access';

/**
 * `offline_access` among the endpoint's or a call's scopes: refused at set-up. MCP 2026-07-28 Authorization,
 * "Refresh Tokens" (SEP-2207): servers SHOULD NOT name it in a challenge, which would make every client ask for
 * refresh tokens to call a tool.
 */
function refuseOfflineAccess(parts: { all: readonly string[]; any: readonly string[] }, gates: McpGates): void {
  if ([...parts.all, ...parts.any].includes(OFFLINE_ACCESS))
    optionError('scopes', `requireMcpAuth option "scopes" must not hold "${OFFLINE_ACCESS}" (a client's to ask for)`);
  for (const gate of ['tools', 'resources', 'prompts'] as const)
    for (const [key, entry] of gates[gate])
      if (entry.scopes.includes(OFFLINE_ACCESS))
        optionError(
          `${gate}.${key}`,
          `requireMcpAuth option "${gate}" must not hold "${OFFLINE_ACCESS}" (a client's to ask for)`,
        );
}

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
export function mcpAuthMiddleware<C extends RegisteredClaims>(
  guard: RouteGuard<C>,
  scopesOf: ScopeReader,
  options: unknown,
): RequestHandler {
  if (options !== undefined && !isObject(options))
    optionError(
      '',
      'requireMcpAuth options must be an object { scopes, tools, resources, prompts, acr, maxAge, limit }',
    );
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
  refuseOfflineAccess(parts, gates);
  const limit = resolveBodyLimit(given.limit);
  const gated = hasGates(gates);
  const everything = requirementWith(everyGate(gates));
  // One requirement per gated key, made at set-up; a request calling several gated things gets one made for it.
  const single = new Map<GatedCall['gate'], Map<string, RouteRequirement>>();
  for (const gate of ['tools', 'resources', 'prompts'] as const)
    single.set(gate, new Map([...gates[gate]].map(([key, entry]) => [key, requirementWith(entry)])));

  // Requests the transport would refuse (a body it cannot run, headers that disagree with it): the answer owed once
  // the token passed the endpoint's requirement. No call runs, so no call's scopes are asked.
  const refusals = new WeakMap<Request, McpRefusal>();

  function pick(req: Request): RouteRequirement {
    if (!gated || refusals.has(req)) return endpoint;
    const called = calledItems(req);
    if (called.kind === 'every') return everything;
    // The gated requirements the calls reach, each once: a batch calling one tool twice needs its scopes once.
    const needed = new Set<RouteRequirement>();
    for (const call of called.calls) {
      const made = single.get(call.gate)?.get(callKey(call.gate, call.key));
      if (made !== undefined) needed.add(made);
    }
    if (needed.size === 0) return endpoint;
    if (needed.size === 1) return needed.values().next().value as RouteRequirement;
    return requirementWith(combineGates(called.calls.flatMap((call) => gateEntry(gates, call) ?? [])));
  }

  const verified = guard.middleware(pick, (req, { claims, token }) => {
    // This package's own program declares req.auth as claims; a program that loads the mcp entry sees AuthInfo.
    (req as { auth?: unknown }).auth = toAuthInfo(token, claims, scopesOf(claims), guard.resource);
  });

  /** Verify a request whose body is settled (`fault` if it cannot be handed on); what is owed comes after. */
  function verify(req: Request, res: Response, next: NextFunction, fault: BodyFault | undefined): void {
    const refusal = fault === undefined ? headerMismatch(req, req.body) : bodyRefusal(fault, limit);
    if (refusal !== undefined) refusals.set(req, refusal);
    verified(req, res, (err?: unknown) => {
      const owed = refusals.get(req);
      if (err !== undefined || owed === undefined) next(err);
      else sendRefusal(res, owed);
    });
  }

  return function requireMcpAuth(req, res, next) {
    const fault = settleMcpBody(req, res, limit);
    if (isThenable(fault)) fault.then((settled) => verify(req, res, next, settled), next);
    else verify(req, res, next, fault);
  };
}
