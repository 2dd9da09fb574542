// The composition: createTokenAuth resolves the options room by room and wires the pipeline (keys → verifier →
// authenticator → middleware), and the one instance it builds from TOKEN_* variables for the top-level factories.
// New capabilities are wired here, never branched inside the verifier.
import type { Request, RequestHandler } from 'express';
import { createAuthenticator } from './http/authenticate';
import { ResultCache, type CacheStats } from './verify/cache';
import type { ClaimsMode, ClaimsOf, RegisteredClaims } from './token/claim-modes';
import type { VerifiedClaims } from './token/claims';
import { TokenAuthError } from './base/errors';
import { createTokenSource } from './remote';
import { optionalVerifiedUser, requireVerifiedUser } from './http/middleware';
import type { TokenAuthOptions } from './config/options';
import { resolveOptions } from './config/resolve';
import { createVerifyRouter, type VerifyRouterOptions } from './http/router';
import { fleetStats, type FleetStats } from './verify/stats';
import type { ScopeRequirementInput } from './token/scopes';
import { requirementParser, type RouteOptions } from './authorize/route';
import { protectedResourceMetadataRouter, type AuthorizationServers } from './http/protected-resource';
import { createRouteGuard, guardedClaims, type RouteGuard } from './http/guard';
import type { ResolvedOptions } from './config/options';
import type { TokenSource } from './remote';
import { optionError } from './base/option-error';
import { withSharedVerdicts } from './verify/shared-verdicts';
import { acceptUncalled } from './http/uncalled';
import { createVerifier } from './verify/verifier';
import { introspectionRoute } from './remote/dispatch';
import { createIntrospectionSource } from './remote/introspection';
import { createReadiness } from './remote/readiness';
import { isIssuerTemplate } from './token/issuer';
import { createExchanger, type ExchangedToken } from './remote/exchange';
import { exchangeVerified } from './http/exchange';
import type { ExchangeTarget } from './remote/exchange-target';
import { isDiscoverySource } from './keys/discovery';
import { actorsOf, type Actor } from './token/actors';
import { fromVariable, optionsFromEnv } from './config/environment';
import { securityEventsOf, type SecurityEvents, type SecurityEventsOptions } from './events';

/**
 * One configured verifier with its Express middleware. `C` is what its claims mode guarantees (`VerifiedClaims`
 * for `'strict'`, `JwtClaims` for `'jwt'`, `AccessTokenClaims` for `'at+jwt'`).
 */
export interface TokenAuth<C extends RegisteredClaims = RegisteredClaims> {
  /**
   * Middleware: a valid token with these scopes is required; its claims go to `req.auth`. `options` ask for
   * step-up authentication (RFC 9470): `acr` values the token's `acr` must be one of, `maxAge` since `auth_time`;
   * and set what else the token must carry (docs/authorization.md): `roles`, `permissions`, `groups`, `claims`,
   * `authorizationDetails`, `issuers`, and `allow`, the app's rule, last (403 `forbidden` when one is not met).
   */
  requireVerifiedUser(scopes?: ScopeRequirementInput, options?: RouteOptions<C>): RequestHandler;
  /** Middleware: no token → `req.auth` undefined and `next()`; a token that is present must be valid. */
  optionalVerifiedUser(): RequestHandler;
  /** The verify endpoint: `GET`/`POST {mount path}/auth/@users/verify` answering Shape B or Shape A. */
  verifyRouter(options?: VerifyRouterOptions<C>): RequestHandler;
  /** Verify a token directly; rejects with a TokenAuthError. Read-only: deep-frozen once cached (shared with the cache). */
  verify(token: string): Promise<Readonly<C>>;
  /**
   * The claims on a request that this TokenAuth's middleware let through, typed by its mode (`req.auth` is typed
   * only by what every mode guarantees). Throws `missing_token` (401) when the request carries none, and
   * `internal` (500) for claims that another TokenAuth verified: those need not meet this one's mode. Read-only (deep-frozen once cached).
   */
  claims(req: Request): Readonly<C>;
  /** The granted scopes of verified claims, read as `scopeClaim` says (an empty array when there are none). */
  scopesOf(claims: Readonly<Record<string, unknown>>): string[];
  /**
   * The RFC 9728 metadata document of the `resource`, served at `/.well-known/oauth-protected-resource` + its
   * path (and the root form when it has one). Mount at the app's root: `app.use(auth.protectedResourceMetadata())`.
   * Throws a TypeError when `resource` is not configured.
   */
  protectedResourceMetadata(): RequestHandler;
  /**
   * Resolves once the first request can be verified without waiting on a remote call (discovery done, key set
   * loaded, introspection metadata read); at once for keys the app holds. Rejects with a TokenAuthError (`reason`,
   * `hint`) when that is impossible now, and keeps retrying behind it with the usual cooldowns. For start-up and
   * readiness probes; calling it again is cheap.
   */
  ready(): Promise<void>;
  /**
   * RFC 8693 token exchange (docs/exchange.md): a token for another service in exchange for the access token this
   * instance verified, on `req` (its middleware let the request through) or as a string that `verify()` accepts
   * now; checked again (expiry, revocation) before the cache or the server is asked. Cached per (token, target).
   * Rejects with the token's own failure (401), `exchange_refused` (403) or `verification_unavailable` (503); an
   * OptionError (a TypeError) without option `tokenExchange` or for a malformed target.
   */
  exchange(reqOrToken: Request | string, target: ExchangeTarget): Promise<ExchangedToken>;
  /**
   * Receive what the identity provider says later (docs/continuous-access.md): SSF transmitters' SETs (CAEP, RISC)
   * by push or poll, and Back-Channel Logout tokens, stored as rules in the `revocation` store that every instance
   * checks. Every option is checked now: an OptionError (also without `revocation` or `maxLifetime`).
   */
  securityEvents(options: SecurityEventsOptions): SecurityEvents;
  /** The `act` chain of verified claims (RFC 8693 §4.1), outermost actor first; `[]` when there is none. */
  actorsOf(claims: Readonly<Record<string, unknown>>): Actor[];
  /** Counters of the result cache (and, when in use, the breaker's state and the revocation list's). */
  stats(): CacheStats & FleetStats;
  /** Stop timers and pending key fetches, and empty the cache. */
  close(): void;
}

/**
 * Create a TokenAuth. Options are validated here, once, before anything is built: a wrong option throws an
 * OptionError (a TypeError) whose `option` is its dotted path, so a misconfigured app fails at start-up, never at
 * request time.
 */
export function createTokenAuth<M extends ClaimsMode | undefined = undefined, D = undefined>(
  options: TokenAuthOptions<ClaimsOf<M, D>> & { claims?: M; issuerBaseURL?: D },
): TokenAuth<ClaimsOf<M, D>> {
  type C = ClaimsOf<M, D>;
  const resolved = resolveOptions(options);
  const keys = createTokenSource(resolved);
  // Introspection (RFC 7662, docs/introspection.md) is a second, remote source beside the discovered keys; shared verdicts wrap the remote one.
  const introspected = createIntrospectionSource(resolved.introspection, keys, {
    clock: resolved.clock,
    clockTolerance: resolved.rules.clockTolerance,
    allowInsecureHttp: resolved.allowInsecureHttp,
  });
  const asked = introspected ?? keys;
  const remote = asked.kind === 'remote' ? withSharedVerdicts(asked, resolved) : asked;
  // With introspection each token goes its own way (verify/dispatch.ts): the discovered keys, or the remote source.
  const source = introspected === undefined ? remote : keys;
  const route =
    resolved.introspection === undefined ? undefined : introspectionRoute(keys, remote, resolved.introspection);
  // A remote source's verdicts are always looked up (no second-sighting admission): each miss is a network call.
  const cache = new ResultCache(resolved.cache, resolved.rules.clockTolerance, remote.kind === 'jws');
  const verifier = createVerifier({
    source,
    route,
    rules: resolved.rules,
    claims: resolved.claims,
    clock: resolved.clock,
    cache,
  });
  // The token alphabet: RFC 6750 b64token for a remote source, else compact JWS, padded where its keys say (AWS ALB).
  const syntax = remote.kind === 'remote' ? 'b64token' : remote.segments === 'padded' ? 'padded-jws' : 'jws';
  const auth = createAuthenticator(resolved, verifier, syntax);
  const readiness = createReadiness(introspected === undefined ? [keys] : [keys, introspected]);
  const exchanger =
    resolved.tokenExchange === undefined
      ? undefined
      : createExchanger(resolved.tokenExchange, {
          metadata: isDiscoverySource(keys) ? () => keys.metadata() : undefined,
          clock: resolved.clock,
          allowInsecureHttp: resolved.allowInsecureHttp,
        });
  const scopeReader = resolved.claims.scopesOf;
  const requirements = requirementParser(resolved.valueSources);
  const events = securityEventsOf(resolved, keys, (err) => auth.report(err, undefined));

  const tokenAuth: TokenAuth<C> = {
    requireVerifiedUser: acceptUncalled(
      'requireVerifiedUser',
      (scopes?: ScopeRequirementInput, routeOptions?: RouteOptions<C>) =>
        requireVerifiedUser(auth, requirements.route(scopes, routeOptions)),
    ),
    optionalVerifiedUser: acceptUncalled('optionalVerifiedUser', () => optionalVerifiedUser(auth)),
    verifyRouter: acceptUncalled('verifyRouter', (routerOptions?: VerifyRouterOptions<C>) =>
      createVerifyRouter(auth, routerOptions),
    ),
    verify: (token) => auth.verifyToken(token) as Promise<VerifiedClaims | RegisteredClaims> as Promise<C>,
    claims(req) {
      // `object`: a program that loads the mcp entry declares req.auth as the SDK's AuthInfo (docs/mcp.md).
      let claims: object | undefined = req.auth;
      // A guard of another entry (MCP) may have put its own object on req.auth and kept the claims aside.
      if (claims === undefined || !resolved.claims.passed(claims)) claims = guardedClaims(req) ?? claims;
      if (claims === undefined) throw new TokenAuthError('missing_token');
      // Claims another TokenAuth verified may not meet this one's mode: a programming error, never typed as if they did.
      if (!resolved.claims.passed(claims))
        throw new TokenAuthError('internal', { reason: 'claims-of-another-TokenAuth' });
      return claims as C;
    },
    scopesOf: (claims) => [...(scopeReader(claims) ?? [])],
    protectedResourceMetadata: acceptUncalled('protectedResourceMetadata', () => {
      if (resolved.resource === undefined) {
        optionError(
          'resource',
          'protectedResourceMetadata() needs option "resource": the URI of this protected resource (RFC 9728)',
        );
      }
      return protectedResourceMetadataRouter({
        resource: resolved.resource,
        authorizationServers: () => authorizationServers(resolved, keys),
        dpop:
          resolved.dpop === undefined
            ? undefined
            : { algorithms: [...resolved.dpop.algorithms], required: resolved.dpop.required },
        mtls: resolved.mtlsConfigured,
      });
    }),
    ready: () => readiness.ready(),
    exchange: (reqOrToken, target) => exchangeVerified(auth, exchanger, reqOrToken, target),
    securityEvents: (eventOptions) => events.create(eventOptions),
    actorsOf,
    stats: () => fleetStats(verifier.stats(), remote, auth.revocation),
    close() {
      events.close();
      readiness.close();
      exchanger?.close();
      source.close();
      if (remote !== source) remote.close();
      cache.clear();
      auth.close();
    },
  };
  guards.set(
    tokenAuth,
    createRouteGuard<never>(auth, resolved.resource, scopeReader, resolved.dpop?.required === true, requirements),
  );
  return tokenAuth;
}

// Keyed by the TokenAuth object: the guard is reached only through routeGuard(auth), not a member of TokenAuth.
const guards = new WeakMap<object, RouteGuard<never>>();

/**
 * The route guard of a TokenAuth, for other entries of this package (express-verified-user/mcp): verify as
 * `requireVerifiedUser` does with a requirement picked per request, read the resource, build the 403 challenge.
 * See docs/protected-resource.md. Throws a TypeError for an object `createTokenAuth` did not make.
 */
export function routeGuard<C extends RegisteredClaims>(auth: TokenAuth<C>): RouteGuard<C> {
  const guard = guards.get(auth);
  if (guard === undefined) optionError('auth', 'routeGuard expects a TokenAuth made by createTokenAuth');
  return guard as RouteGuard<never> as RouteGuard<C>;
}

/** `authorization_servers`: the discovered issuers with `issuerBaseURL`, else the configured `issuer` values. */
function authorizationServers(
  resolved: ResolvedOptions,
  source: TokenSource,
): AuthorizationServers | Promise<AuthorizationServers> {
  if (source.kind === 'jws' && source.discoveredIssuers !== undefined) return source.discoveredIssuers();
  // A template (`{tenantid}`) names no server a client could discover: only exact issuers are published.
  const issuer = resolved.rules.issuer;
  return { issuers: issuer === false ? [] : issuer.issuers.filter((name) => !isIssuerTemplate(name)), final: true };
}

let defaultAuth: TokenAuth | undefined;

/**
 * The process-wide TokenAuth configured from TOKEN_* environment variables (config/environment.ts), built on first
 * use (at app set-up) by the top-level `requireVerifiedUser` and `verifyRouter`: createTokenAuth over the
 * environment's options, so it lives beside createTokenAuth.
 */
export function defaultTokenAuth(): TokenAuth {
  if (defaultAuth === undefined) {
    const options = optionsFromEnv(process.env);
    try {
      defaultAuth = createTokenAuth(options);
    } catch (err) {
      throw fromVariable(err);
    }
  }
  return defaultAuth;
}

/** Forget the default TokenAuth (closing it), so that the next use reads the environment again. For tests. */
export function resetDefaultTokenAuth(): void {
  defaultAuth?.close();
  defaultAuth = undefined;
}

/** `requireVerifiedUser` on the environment-configured default TokenAuth; throws a TypeError now if unconfigured. */
export const defaultRequireVerifiedUser: (scopes?: ScopeRequirementInput, options?: RouteOptions) => RequestHandler =
  acceptUncalled('requireVerifiedUser', (scopes?: ScopeRequirementInput, options?: RouteOptions) =>
    defaultTokenAuth().requireVerifiedUser(scopes, options),
  );

/** `verifyRouter` on the environment-configured default TokenAuth; throws a TypeError now if unconfigured. */
export const defaultVerifyRouter: (options?: VerifyRouterOptions) => RequestHandler = acceptUncalled(
  'verifyRouter',
  (options?: VerifyRouterOptions) => defaultTokenAuth().verifyRouter(options),
);
