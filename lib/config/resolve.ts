// Validates createTokenAuth's options once and applies the defaults. Each room resolves and checks its own part
// (the token source in remote/ and keys/, claims modes, DPoP, revocation, shared verdicts, introspection, token
// exchange, the resource); this file checks the few options no room owns and assembles ResolvedOptions. Building the pipeline
// from ResolvedOptions never throws an option error.
import { parseDuration } from '../base/duration';
import { optionError } from '../base/option-error';
import { undefinedOptionMessage } from '../base/env-names';
import { knownFields, positiveInteger, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import { resolveClaimPolicy } from '../token/claim-modes';
import { isSupportedAlgorithm, type Algorithm } from '../jose/algorithms';
import { resolveTokenSource } from '../remote';
import { resolveRevocation } from '../verify/revocation';
import { resolveSharedVerdicts } from '../verify/shared-verdicts';
import { resolveDpop, resolveMtls } from '../dpop/options';
import { resolveIntrospection } from '../remote/introspection-options';
import { resolveTokenExchange } from '../remote/exchange-options';
import type { CacheOptions, ResolvedOptions, TokenAuthOptions } from './options';
import { resolveResource, resourceAudience } from './resource';
import { resolveValueSources } from '../authorize/claim-values';
import { resolveScopeImplies } from '../token/scope-implies';
import type { AudienceRule } from '../token/registered';
import {
  checkIssuerTemplate,
  checkTenantsFit,
  issuerRule,
  resolveTenants,
  type IssuerRule,
  type TenantRule,
} from '../token/issuer';

/** Every option of createTokenAuth: one added to TokenAuthOptions and not listed here fails type-checking. */
const TOKEN_AUTH_OPTIONS: FieldList<TokenAuthOptions> = {
  key: true,
  issuer: true,
  audience: true,
  algorithms: true,
  claims: true,
  clockTolerance: true,
  maxTokenAge: true,
  maxLifetime: true,
  maxTokenLength: true,
  clock: true,
  cache: true,
  isRevoked: true,
  getToken: true,
  errors: true,
  realm: true,
  onError: true,
  allowInsecureHttp: true,
  typ: true,
  scopeClaim: true,
  requiredClaims: true,
  validateClaims: true,
  issuerBaseURL: true,
  discovery: true,
  tenants: true,
  dpop: true,
  mtls: true,
  revocation: true,
  introspection: true,
  introspect: true,
  tokenExchange: true,
  resource: true,
  scopesSupported: true,
  resourceName: true,
  resourceDocumentation: true,
  roleClaim: true,
  groupClaim: true,
  permissionClaim: true,
  scopeImplies: true,
};
const CACHE_OPTIONS: FieldList<CacheOptions> = { max: true, maxBytes: true, ttl: true, errorTtl: true, shared: true };

function systemClock(): number {
  return Date.now() / 1000;
}

function acceptedValues(value: unknown, name: 'issuer' | 'audience', given = false): ReadonlySet<string> | false {
  if (value === undefined && given)
    optionError(name, undefinedOptionMessage(name, '', `pass false to leave the ${name} unchecked on purpose`));
  if (value === undefined) {
    const or = name === 'audience' ? ' unless "resource" is given' : '';
    optionError(name, `option "${name}" is required${or} (pass false to leave the ${name} unchecked on purpose)`);
  }
  if (value === false) return false;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || list.some((v) => typeof v !== 'string' || v === '')) {
    optionError(name, `option "${name}" must be a non-empty string, an array of them, or false`);
  }
  return new Set(list as string[]);
}

/**
 * The issuer rule of `issuer` (with `key`): exact issuers, and templates (`{tenantid}`) that need `tenants`, which
 * applies to templates only (token/issuer.ts).
 */
function resolveIssuer(value: unknown, tenants: TenantRule | undefined, given: boolean): IssuerRule | false {
  const accepted = acceptedValues(value, 'issuer', given);
  const issuers = accepted === false ? [] : [...accepted];
  if (accepted !== false) {
    const list = Array.isArray(value) ? (value as string[]) : [value as string];
    list.forEach((issuer, index) => checkIssuerTemplate(issuer, Array.isArray(value) ? `issuer[${index}]` : 'issuer'));
  }
  checkTenantsFit(issuers, tenants, 'option "issuer"');
  return accepted === false ? false : issuerRule(issuers, tenants);
}

/**
 * The audience rule: `audience` as given, or the resource's own rule when only `resource` is (an `audience` that
 * names the resource too keeps that rule for it).
 */
function resolveAudience(value: unknown, resource: string | undefined, given: boolean): AudienceRule | false {
  if (resource === undefined) return acceptedValues(value, 'audience', given);
  if (value === undefined) return resourceAudience(resource);
  const accepted = acceptedValues(value, 'audience');
  if (accepted === false || !accepted.has(resource)) return accepted;
  const rule = resourceAudience(resource);
  return { has: (aud) => accepted.has(aud) || rule.has(aud), accepted: [...accepted] };
}

function optionalFunction<T>(value: T, name: string): T {
  if (value !== undefined && typeof value !== 'function') optionError(name, `option "${name}" must be a function`);
  return value;
}

function oneOf<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T))
    optionError(name, `option "${name}" must be ${allowed.map((a) => `'${a}'`).join(' or ')}`);
  return value as T;
}

function optionalDuration(value: unknown, name: string): number | undefined {
  return value === undefined ? undefined : parseDuration(value, name);
}

function resolveCache(value: unknown): ResolvedOptions['cache'] {
  if (value === false) return false;
  if (value !== undefined && !isObject(value)) optionError('cache', 'option "cache" must be an object or false');
  const cache = value ?? {};
  knownFields(cache, CACHE_OPTIONS, 'cache');
  return {
    max: positiveInteger(cache.max, 'cache.max', 10_000),
    maxBytes: positiveInteger(cache.maxBytes, 'cache.maxBytes', 16 * 1024 * 1024),
    ttl: optionalDuration(cache.ttl, 'cache.ttl') ?? 600,
    errorTtl: optionalDuration(cache.errorTtl, 'cache.errorTtl') ?? 5,
  };
}

function resolveAlgorithms(value: unknown): Algorithm[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0)
    optionError('algorithms', 'option "algorithms" must be a non-empty array');
  for (const alg of value) {
    if (typeof alg === 'string' && alg.toLowerCase() === 'none')
      optionError('algorithms', 'option "algorithms" may never include "none"');
    if (!isSupportedAlgorithm(alg))
      optionError('algorithms', `option "algorithms" holds unsupported algorithm ${JSON.stringify(alg)}`);
  }
  return [...new Set(value as Algorithm[])];
}

const REALM = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/; // quoted-string content without '"' and '\'

function resolveRealm(value: unknown): string {
  if (value === undefined) return 'api';
  if (typeof value !== 'string' || !REALM.test(value))
    optionError('realm', 'option "realm" must be a string without quotes, backslashes or control characters');
  return value;
}

/**
 * Validate every option once and apply defaults: an OptionError (a TypeError) naming the option by its dotted
 * path for anything wrong, so that a misconfiguration stops the app at start-up, never at request time. Keys are
 * read here too (secrets and public keys parsed, algorithms fitted), so building the pipeline afterwards cannot fail.
 */
export function resolveOptions(input: TokenAuthOptions<never>): ResolvedOptions {
  if (!isObject(input as unknown)) optionError('', 'createTokenAuth expects an options object');
  knownFields(input, TOKEN_AUTH_OPTIONS, '');
  if (input.allowInsecureHttp !== undefined && typeof input.allowInsecureHttp !== 'boolean')
    optionError('allowInsecureHttp', 'option "allowInsecureHttp" must be a boolean');
  const allowInsecureHttp = input.allowInsecureHttp ?? false;
  const algorithms = resolveAlgorithms(input.algorithms);
  const tenants = resolveTenants(input.tenants);
  const source = resolveTokenSource(input, { algorithms, allowInsecureHttp, tenants });
  const issuerBaseURL = source.form === 'discovery' ? source.issuers : undefined;
  const introspection = resolveIntrospection(input, issuerBaseURL, allowInsecureHttp);
  // Claims with no JOSE header to check: upstream mode, and introspection of every token.
  const headerless = source.form === 'upstream' || introspection?.mode === 'always';
  const claims = resolveClaimPolicy(input, { discovery: issuerBaseURL !== undefined, upstream: headerless });
  const resource = resolveResource(input as unknown as Record<string, unknown>, allowInsecureHttp);

  return {
    source,
    rules: {
      // With discovery, the key source routes by `iss` and holds each token to its server's discovered issuer.
      issuer: issuerBaseURL === undefined ? resolveIssuer(input.issuer, tenants, 'issuer' in input) : false,
      audience: resolveAudience(input.audience, resource?.resource, 'audience' in input),
      clockTolerance: optionalDuration(input.clockTolerance, 'clockTolerance') ?? 5,
      maxTokenAge: optionalDuration(input.maxTokenAge, 'maxTokenAge'),
      maxLifetime: optionalDuration(input.maxLifetime, 'maxLifetime'),
      requireIat: claims.requireIat,
    },
    claims,
    maxTokenLength: positiveInteger(input.maxTokenLength, 'maxTokenLength', 16_384),
    clock: optionalFunction(input.clock, 'clock') ?? systemClock,
    cache: resolveCache(input.cache),
    isRevoked: optionalFunction(input.isRevoked as ResolvedOptions['isRevoked'], 'isRevoked'),
    getToken: optionalFunction(input.getToken, 'getToken'),
    errors: oneOf(input.errors, 'errors', ['respond', 'next'] as const, 'respond'),
    realm: resolveRealm(input.realm),
    onError: optionalFunction(input.onError, 'onError'),
    allowInsecureHttp,
    dpop: resolveDpop(input.dpop),
    mtls: resolveMtls(input.mtls),
    revocation: resolveRevocation(input.revocation, input.maxLifetime),
    sharedVerdicts: resolveSharedVerdicts(input.cache, source.form === 'upstream' || introspection !== undefined),
    introspection,
    tokenExchange: resolveTokenExchange(input.tokenExchange, issuerBaseURL, allowInsecureHttp),
    resource,
    mtlsConfigured: input.mtls !== undefined,
    valueSources: resolveValueSources(input),
    scopeImplies: resolveScopeImplies(input.scopeImplies),
  };
}
