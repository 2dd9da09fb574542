// What a route requires of a verified token, parsed once when the route is built: its scopes (token/scopes.ts), its
// step-up demand (token/step-up.ts) and its requirements (requirement.ts), from `requireVerifiedUser(scopes,
// options)`; and the route that requires nothing but a valid token.
import type { Duration } from '../base/duration';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { RegisteredClaims } from '../token/claim-modes';
import { NO_SCOPES, parseScopeRequirement, type ScopeRequirement } from '../token/scopes';
import { parseStepUp, type StepUp } from '../token/step-up';
import type { ValueSources } from './claim-values';
import type { RouteAuthorization } from './checks';
import { ROUTE_OWNER, type RequirementOwner } from './refusal';
import { parseRequirements, REQUIREMENT_FIELDS, type RequirementContext, type RouteRequirements } from './requirement';

/**
 * The second argument of `requireVerifiedUser`: how the user authenticated (RFC 9470 step-up: `acr`, `maxAge`) and
 * what the token must carry besides scopes (roles, permissions, groups, claims, authorization details, issuers,
 * allow; docs/authorization.md). `C`: the claims the TokenAuth's mode guarantees, which `allow` receives.
 */
export interface RouteOptions<C extends RegisteredClaims = RegisteredClaims> extends RouteRequirements<C> {
  /** Accepted authentication context classes: the token's `acr` must be one of them. */
  acr?: readonly string[];
  /** Longest time since the user authenticated (`auth_time`); a token without `auth_time` is then refused. */
  maxAge?: Duration;
}

/** What a route demands of a verified token, parsed once at set-up. */
export interface RouteRequirement {
  readonly scopes: ScopeRequirement;
  readonly stepUp: StepUp | undefined;
  /** Roles, claims, … and `allow`: checked after the scopes and step-up. */
  readonly authorization: RouteAuthorization | undefined;
  /** Who set it, as hints name it (the route, an MCP tool). */
  readonly owner: RequirementOwner;
}

const ROUTE_FIELDS: FieldList<RouteOptions> = { acr: true, maxAge: true, ...REQUIREMENT_FIELDS };

/** The requirement of a route that asks only for a valid token. */
export const OPEN_ROUTE: RouteRequirement = Object.freeze({
  scopes: NO_SCOPES,
  stepUp: undefined,
  authorization: undefined,
  owner: ROUTE_OWNER,
});

/** How one TokenAuth parses route requirements: `route(scopes, options)`, and a requirement object alone (MCP's). */
export interface RequirementParser {
  /** `requireVerifiedUser(scopes, options)`'s requirement, parsed now (an OptionError naming the option otherwise). */
  route(scopes: unknown, options?: unknown): RouteRequirement;
  /** The requirements among `input`'s fields (the caller checked the others), for another entry's own options. */
  requirements(
    input: Readonly<Record<string, unknown>>,
    context: Omit<RequirementContext, 'sources'>,
  ): RouteAuthorization | undefined;
}

/** The parser of a TokenAuth whose roles, groups and permissions are read where `sources` say. */
export function requirementParser(sources: ValueSources): RequirementParser {
  return {
    route(scopes, options) {
      const parsedScopes = parseScopeRequirement(scopes);
      if (options === undefined) return Object.freeze({ ...OPEN_ROUTE, scopes: parsedScopes });
      if (!isObject(options))
        optionError(
          '',
          'requireVerifiedUser options must be an object { acr?, maxAge?, roles?, permissions?, groups?, claims?, authorizationDetails?, issuers?, allow? }',
        );
      knownFields(options, ROUTE_FIELDS, '', 'requireVerifiedUser');
      const demand: Record<string, unknown> = {};
      if (options.acr !== undefined) demand.acr = options.acr;
      if (options.maxAge !== undefined) demand.maxAge = options.maxAge;
      return Object.freeze({
        scopes: parsedScopes,
        stepUp: parseStepUp(demand),
        authorization: parseRequirements(options, {
          sources,
          owner: ROUTE_OWNER,
          path: '',
          who: 'requireVerifiedUser',
        }),
        owner: ROUTE_OWNER,
      });
    },
    requirements: (input, context) => parseRequirements(input, { ...context, sources }),
  };
}
