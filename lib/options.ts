import type { Request } from 'express';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import type { VerifiedClaims } from './claims';
import { resolveClaimPolicy, type ClaimPolicy, type ClaimsMode, type ClaimsValidator, type JwtClaims } from './claim-modes';
import { parseDuration, type Duration } from './duration';
import type { TokenAuthError } from './errors';
import { isSupportedAlgorithm, type Algorithm } from './keys/algorithms';
import type { BreakerOptions } from './keys/breaker';
import type { KeyResolver } from './keys/static';
import { resolveIssuerBaseURL, type IssuerBase } from './keys/discovery';
import type { RegisteredClaimRules } from './registered';
import type { ScopeClaimOption } from './scope-claim';
import { resolveDpop, resolveMtls, type DpopOptions, type MtlsOptions, type ResolvedDpop, type ResolvedMtls } from './dpop/options';
import { resolveRevocation, type RevocationStore } from './revocation';
import { resolveSharedVerdicts, type SharedVerdictStore } from './shared-verdicts';

/** Remote JWKS: keys chosen by `kid`, cached, refetched for an unknown `kid` at most once per `cooldown`. */
export interface JwksKeyOption {
  jwksUri: string;
  /** Least time between two fetches (default 30 s). */
  cooldown?: Duration;
  /** Fetch timeout (default 5 s). */
  timeout?: Duration;
}

/** Upstream mode: tokens are checked by `{upstream}/auth/@users/verify` and the answers cached. */
export interface UpstreamKeyOption {
  upstream: string;
  /** Request timeout (default 5 s). */
  timeout?: Duration;
  /** Circuit breaker: fail fast after consecutive outages (default 5 failures, 5 s cooldown); `false` turns it off. */
  breaker?: BreakerOptions | false;
}

/** Where verification keys come from: a secret, a public key, a JWKS, an upstream verify endpoint, or a resolver. */
export type KeyOption =
  | { secret: string | Buffer }
  | { publicKey: string | JsonWebKey | KeyObject }
  | JwksKeyOption
  | UpstreamKeyOption
  | KeyResolver;

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
  /** Upstream mode: share the upstream's verdicts across a fleet (`createRedisStore`; docs/fleet.md). */
  shared?: SharedVerdictStore;
}

/** Options of `createTokenAuth`; validated once, when it is called. */
export interface TokenAuthOptions<C extends JwtClaims = JwtClaims> {
  /** Key source: `{ secret }`, `{ publicKey }`, `{ jwksUri }`, `{ upstream }` or a resolver function. Required unless `issuerBaseURL` is given. */
  key?: KeyOption;
  /** Accepted `iss` value(s); `false` leaves the issuer unchecked on purpose. Required unless `issuerBaseURL` is given. */
  issuer?: string | string[] | false;
  /** Authorization server(s) to discover keys and issuer from (OpenID Connect Discovery, RFC 8414); replaces `key` and `issuer`. */
  issuerBaseURL?: string | string[];
  /** Accepted `aud` value(s); `false` leaves the audience unchecked on purpose. Required. */
  audience: string | string[] | false;
  /** Accepted `alg` values; default inferred from the key. `none` is never accepted. */
  algorithms?: Algorithm[];
  /** `'strict'` (default with `key`): Shape B. `'jwt'`: registered claims only. `'at+jwt'`: RFC 9068. */
  claims?: ClaimsMode;
  /** Accepted header `typ` value(s), case-insensitive, `application/` optional; a token without `typ` is then refused. */
  typ?: string | string[];
  /** Where granted scopes are read (default `scopes` in `'strict'`, else `['scope', 'scp', 'scopes']`). */
  scopeClaim?: ScopeClaimOption;
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
  /** Allow `http:` key or upstream URLs outside loopback (default false). */
  allowInsecureHttp?: boolean;
  /** Accept DPoP-bound tokens with their proofs (RFC 9449). */
  dpop?: DpopOptions;
  /** Where the client certificate of mTLS-bound tokens comes from (RFC 8705). */
  mtls?: MtlsOptions;
  /** A revocation list shared by a fleet (`createRedisStore`; docs/fleet.md), checked before `isRevoked`. */
  revocation?: RevocationStore;
}

/** Options after validation, with defaults applied and durations in seconds. */
export interface ResolvedOptions {
  key: KeyOption | undefined;
  /** The discovered authorization servers, when `issuerBaseURL` is given (keys/discovery.ts checked it). */
  issuerBaseURL: readonly IssuerBase[] | undefined;
  algorithms: Algorithm[] | undefined;
  rules: RegisteredClaimRules;
  claims: ClaimPolicy;
  maxTokenLength: number;
  clock: () => number;
  cache: { max: number; maxBytes: number; ttl: number; errorTtl: number } | false;
  isRevoked: ((claims: VerifiedClaims, req: Request | undefined) => boolean | Promise<boolean>) | undefined;
  getToken: TokenAuthOptions['getToken'];
  errors: 'respond' | 'next';
  realm: string;
  onError: TokenAuthOptions['onError'];
  allowInsecureHttp: boolean;
  dpop: ResolvedDpop | undefined;
  mtls: ResolvedMtls;
  revocation: RevocationStore | undefined;
  sharedVerdicts: SharedVerdictStore | undefined;
}

const KNOWN_OPTIONS = new Set([
  'key', 'issuer', 'audience', 'algorithms', 'claims', 'clockTolerance', 'maxTokenAge', 'maxLifetime',
  'maxTokenLength', 'clock', 'cache', 'isRevoked', 'getToken', 'errors', 'realm', 'onError', 'allowInsecureHttp',
  'typ', 'scopeClaim', 'requiredClaims', 'validateClaims', 'issuerBaseURL',
  'dpop', 'mtls',
  'revocation',
]);
const KNOWN_CACHE_OPTIONS = new Set(['max', 'maxBytes', 'ttl', 'errorTtl', 'shared']);

function fail(message: string): never {
  throw new TypeError(`express-verified-user: ${message}`);
}

function systemClock(): number {
  return Date.now() / 1000;
}

function acceptedValues(value: unknown, name: 'issuer' | 'audience'): ReadonlySet<string> | false {
  if (value === undefined) {
    fail(`option "${name}" is required (pass false to leave the ${name} unchecked on purpose)`);
  }
  if (value === false) return false;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || list.some((v) => typeof v !== 'string' || v === '')) {
    fail(`option "${name}" must be a non-empty string, an array of them, or false`);
  }
  return new Set(list as string[]);
}

function positiveInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) fail(`option "${name}" must be a positive integer`);
  return value;
}

function optionalFunction<T>(value: T, name: string): T {
  if (value !== undefined && typeof value !== 'function') fail(`option "${name}" must be a function`);
  return value;
}

function oneOf<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T)) fail(`option "${name}" must be ${allowed.map((a) => `'${a}'`).join(' or ')}`);
  return value as T;
}

function resolveCache(value: unknown): ResolvedOptions['cache'] {
  if (value === false) return false;
  if (value !== undefined && (typeof value !== 'object' || value === null)) fail('option "cache" must be an object or false');
  const cache = (value ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(cache)) if (!KNOWN_CACHE_OPTIONS.has(name)) fail(`unknown option "cache.${name}"`);
  return {
    max: positiveInteger(cache.max, 'cache.max', 10_000),
    maxBytes: positiveInteger(cache.maxBytes, 'cache.maxBytes', 16 * 1024 * 1024),
    ttl: cache.ttl === undefined ? 600 : parseDuration(cache.ttl, 'cache.ttl'),
    errorTtl: cache.errorTtl === undefined ? 5 : parseDuration(cache.errorTtl, 'cache.errorTtl'),
  };
}

function resolveAlgorithms(value: unknown): Algorithm[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0) fail('option "algorithms" must be a non-empty array');
  for (const alg of value) {
    if (typeof alg === 'string' && alg.toLowerCase() === 'none') fail('option "algorithms" may never include "none"');
    if (!isSupportedAlgorithm(alg)) fail(`option "algorithms" holds unsupported algorithm ${JSON.stringify(alg)}`);
  }
  return [...new Set(value as Algorithm[])];
}

const REALM = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/; // quoted-string content without '"' and '\'

/**
 * Validate options once and apply defaults. Throws a TypeError naming the option for anything wrong, so that a
 * misconfiguration stops the app at start-up, never at request time. Key-specific checks happen when the key
 * source is built, in the same call to `createTokenAuth`.
 */
export function resolveOptions(input: TokenAuthOptions<never>): ResolvedOptions {
  if (typeof input !== 'object' || input === null) fail('createTokenAuth expects an options object');
  for (const name of Object.keys(input)) if (!KNOWN_OPTIONS.has(name)) fail(`unknown option "${name}"`);
  const key = input.key as unknown;
  const issuerBaseURL = resolveIssuerBaseURL(input, input.allowInsecureHttp === true);
  if (key === undefined && issuerBaseURL === undefined) fail('option "key" is required ({ secret }, { publicKey }, { jwksUri }, { upstream } or a resolver function)');
  if (issuerBaseURL === undefined && typeof key !== 'function' && (typeof key !== 'object' || key === null)) fail('option "key" must be an object or a function');

  const discovery = issuerBaseURL !== undefined;
  const claims = resolveClaimPolicy(input, { discovery, upstream: typeof key === 'object' && key !== null && 'upstream' in key });
  const realm = input.realm ?? 'api';
  if (typeof realm !== 'string' || !REALM.test(realm)) fail('option "realm" must be a string without quotes, backslashes or control characters');
  if (input.clock !== undefined) optionalFunction(input.clock, 'clock');
  if (input.allowInsecureHttp !== undefined && typeof input.allowInsecureHttp !== 'boolean') fail('option "allowInsecureHttp" must be a boolean');

  return {
    key: input.key,
    issuerBaseURL,
    algorithms: resolveAlgorithms(input.algorithms),
    rules: {
      // With discovery, the key source routes by `iss` and requires the discovered issuer exactly.
      issuer: issuerBaseURL === undefined ? acceptedValues(input.issuer, 'issuer') : false,
      audience: acceptedValues(input.audience, 'audience'),
      clockTolerance: input.clockTolerance === undefined ? 5 : parseDuration(input.clockTolerance, 'clockTolerance'),
      maxTokenAge: input.maxTokenAge === undefined ? undefined : parseDuration(input.maxTokenAge, 'maxTokenAge'),
      maxLifetime: input.maxLifetime === undefined ? undefined : parseDuration(input.maxLifetime, 'maxLifetime'),
      requireIat: claims.requireIat,
    },
    claims,
    maxTokenLength: positiveInteger(input.maxTokenLength, 'maxTokenLength', 16_384),
    clock: input.clock ?? systemClock,
    cache: resolveCache(input.cache),
    isRevoked: optionalFunction(input.isRevoked as ResolvedOptions['isRevoked'], 'isRevoked'),
    getToken: optionalFunction(input.getToken, 'getToken'),
    errors: oneOf(input.errors, 'errors', ['respond', 'next'] as const, 'respond'),
    realm,
    onError: optionalFunction(input.onError, 'onError'),
    allowInsecureHttp: input.allowInsecureHttp ?? false,
    dpop: resolveDpop(input.dpop),
    mtls: resolveMtls(input.mtls),
    revocation: resolveRevocation(input.revocation),
    sharedVerdicts: resolveSharedVerdicts(input.cache),
  };
}
