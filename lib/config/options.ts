// The options of createTokenAuth as users write them (TokenAuthOptions) and as the pipeline reads them once
// resolved (ResolvedOptions). Types only; config/resolve.ts asks each room to validate its part and fills in defaults.
import type { Request } from 'express';
import type { Duration } from '../base/duration';
import type { TokenAuthError } from '../base/errors';
import type { ClaimPolicy, ClaimsMode, ClaimsValidator, RegisteredClaims } from '../token/claim-modes';
import type { VerifiedClaims } from '../token/claims';
import type { RegisteredClaimRules } from '../token/registered';
import type { ScopeClaimOption } from '../token/scope-claim';
import type { Algorithm } from '../jose/algorithms';
import type { SigningKeyOption } from '../keys/options';
import type { ResolvedTokenSource } from '../remote';
import type { UpstreamKeyOption } from '../remote/upstream';
import type { DiscoveryOptions } from '../keys/discovery-options';
import type { TenantsOption } from '../token/issuer';
import type { SharedVerdictStore } from '../verify/shared-verdicts';
import type { RevocationStore } from '../verify/revocation';
import type { DpopOptions, MtlsOptions, ResolvedDpop, ResolvedMtls } from '../dpop/options';
import type { IntrospectionOptions, IntrospectMode, ResolvedIntrospection } from '../remote/introspection-options';
import type { ResolvedResource, ResourceOptions } from './resource';
import type { ResolvedTokenExchange, TokenExchangeOptions } from '../remote/exchange-options';
import type { ValueClaimOptions, ValueSources } from '../authorize/claim-values';
import type { ScopeImplication, ScopeImpliesOption } from '../token/scope-implies';

export type { JwksKeyOption, JwksKeySetOption, JwkSet } from '../keys/options';
export type { UpstreamKeyOption } from '../remote/upstream';

/** Where verification keys come from: a secret, a public key, a JWK Set (inline or fetched), an upstream verify endpoint, or a resolver. */
export type KeyOption = SigningKeyOption | UpstreamKeyOption;
export type { IntrospectionOptions, IntrospectMode, SignedIntrospection } from '../remote/introspection-options';
export type { ClientAuthMethod } from '../remote/client-auth';
export type { TokenExchangeOptions, ExchangeCacheOptions } from '../remote/exchange-options';

/** Result cache bounds and lifetimes (see docs/caching.md). */
export interface CacheOptions {
  /** Most entries (default 10 000). */
  max?: number;
  /** Most bytes, counted from token and claims sizes (default 16 MiB). */
  maxBytes?: number;
  /** Longest life of a verified entry; never past the token's `exp` (default 10 min). */
  ttl?: Duration;
  /** Life of a remembered token fault (default 5 s). */
  errorTtl?: Duration;
  /** Upstream mode and introspection: share the remote verdicts across a fleet (`createRedisStore`; docs/fleet.md). */
  shared?: SharedVerdictStore;
}

/** Options of `createTokenAuth`; validated once, when it is called. */
export interface TokenAuthOptions<C extends RegisteredClaims = RegisteredClaims>
  extends ResourceOptions, ValueClaimOptions {
  /** Key source: `{ secret }`, `{ publicKey }`, `{ jwks }`, `{ jwksUri }`, `{ upstream }` or a resolver function. Required unless `issuerBaseURL` is given. */
  key?: KeyOption;
  /** Accepted `iss` value(s); `false` leaves the issuer unchecked on purpose. Required unless `issuerBaseURL` is given. */
  issuer?: string | string[] | false;
  /** Authorization server(s) to discover keys and issuer from (OpenID Connect Discovery, RFC 8414); replaces `key` and `issuer`. */
  issuerBaseURL?: string | string[];
  /** With `issuerBaseURL`: `{ timeout }`, the limit of one refresh of metadata and key set together (default 5 s). */
  discovery?: DiscoveryOptions;
  /**
   * With an issuer template (`{tenantid}`: Entra ID's `common`/`organizations`/`consumers`, or an `issuer` holding it):
   * the tenant IDs accepted, a predicate on the token's `tid`, or `'any'` on purpose. Required with a template.
   */
  tenants?: TenantsOption;
  /**
   * Accepted `aud` value(s); `false` leaves the audience unchecked on purpose. Required unless `resource` is
   * given, whose URI is then the audience.
   */
  audience?: string | string[] | false;
  /** Accepted `alg` values; default inferred from the key. `none` is never accepted. */
  algorithms?: Algorithm[];
  /** `'strict'` (default with `key`): Shape B. `'jwt'`: registered claims only. `'at+jwt'`: RFC 9068. */
  claims?: ClaimsMode;
  /** Accepted header `typ` value(s), case-insensitive, `application/` optional; a token without `typ` is then refused. */
  typ?: string | string[];
  /** Where granted scopes are read (default `scopes` in `'strict'`, else `['scope', 'scp', 'scopes']`). */
  scopeClaim?: ScopeClaimOption;
  /**
   * Scope hierarchies: a granted scope counts as the scopes it implies, transitively (`{ 'mcp:admin': ['mcp:tools'] }`),
   * for routes and requireMcpAuth; cycles are refused. Challenges still name the scopes as routes list them.
   */
  scopeImplies?: ScopeImpliesOption;
  /** Claims that must be present (not undefined or null). */
  requiredClaims?: string[];
  /** The app's rule on verified claims; `false` or a throw → 401. Cached with the token: depend on the token only. */
  validateClaims?: ClaimsValidator<C>;
  /** Leeway for `exp`, `nbf`, `iat` (default 5 s). */
  clockTolerance?: Duration;
  /** Reject tokens whose `iat` is older than this (`token_expired`). */
  maxTokenAge?: Duration;
  /** Reject tokens whose `exp - iat` exceeds this. */
  maxLifetime?: Duration;
  /** Longest token accepted, checked before any decoding (default 16 384 characters). */
  maxTokenLength?: number;
  /** Current time in seconds (default: the system clock). */
  clock?: () => number;
  /** Result cache, or `false` to turn it off. */
  cache?: CacheOptions | false;
  /** Asked on every request after the cache; `true` rejects the token. `req` is undefined for `verify()`. */
  isRevoked?: (claims: C, req: Request | undefined) => boolean | Promise<boolean>;
  /** Read the token from elsewhere than the Authorization header; return undefined when there is none. */
  getToken?: (req: Request) => string | null | undefined | Promise<string | null | undefined>;
  /** `'respond'` (default): answer errors directly. `'next'`: pass a TokenAuthError to `next(err)`. */
  errors?: 'respond' | 'next';
  /** Realm of the `WWW-Authenticate` challenge (default `'api'`). */
  realm?: string;
  /** Sees every failure, for logging. Never receives the token. */
  onError?: (err: TokenAuthError, req: Request | undefined) => void;
  /** Allow `http:` remote addresses (keys, discovery, upstream, introspection) outside loopback (default false). */
  allowInsecureHttp?: boolean;
  /** Accept DPoP-bound tokens with their proofs (RFC 9449). */
  dpop?: DpopOptions;
  /** Where the client certificate of mTLS-bound tokens comes from (RFC 8705). */
  mtls?: MtlsOptions;
  /** A revocation list shared by a fleet (`createRedisStore`; docs/fleet.md), checked before `isRevoked`. */
  revocation?: RevocationStore;
  /** RFC 7662 token introspection at the `issuerBaseURL` server, for opaque tokens (docs/introspection.md). */
  introspection?: IntrospectionOptions;
  /** With `introspection`: `'opaque'` (default) verifies the issuer's JWTs here and asks about the rest; `'always'` asks about every token. */
  introspect?: IntrospectMode;
  /** RFC 8693 token exchange at the authorization server, for `auth.exchange()` (docs/exchange.md). */
  tokenExchange?: TokenExchangeOptions;
}

/** The result cache's bounds and lifetimes, durations in seconds. */
export interface ResolvedCache {
  max: number;
  maxBytes: number;
  ttl: number;
  errorTtl: number;
}

/** Options after validation, with defaults applied and durations in seconds. */
export interface ResolvedOptions {
  /** The token source named by `key` or `issuerBaseURL`, checked (remote/index.ts, keys/index.ts). */
  source: ResolvedTokenSource;
  clock: () => number;
  allowInsecureHttp: boolean;
  rules: RegisteredClaimRules;
  claims: ClaimPolicy;
  maxTokenLength: number;
  cache: ResolvedCache | false;
  isRevoked: ((claims: VerifiedClaims, req: Request | undefined) => boolean | Promise<boolean>) | undefined;
  getToken: TokenAuthOptions['getToken'];
  errors: 'respond' | 'next';
  realm: string;
  onError: TokenAuthOptions['onError'];
  dpop: ResolvedDpop | undefined;
  mtls: ResolvedMtls;
  revocation: RevocationStore | undefined;
  sharedVerdicts: SharedVerdictStore | undefined;
  /** The introspection settings (remote/introspection-options.ts), when `introspection` is given. */
  introspection: ResolvedIntrospection | undefined;
  /** The token exchange settings (remote/exchange-options.ts), when `tokenExchange` is given. */
  tokenExchange: ResolvedTokenExchange | undefined;
  /** The protected resource (`resource` option), if any. */
  resource: ResolvedResource | undefined;
  /** Whether the `mtls` option was given (the metadata document then says so). */
  mtlsConfigured: boolean;
  /** Where roles, groups and permissions are read (`roleClaim`, `groupClaim`, `permissionClaim`; authorize/). */
  valueSources: ValueSources;
  /** The scope hierarchy (`scopeImplies`), if any. */
  scopeImplies: ScopeImplication | undefined;
}
