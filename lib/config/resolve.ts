// Validates createTokenAuth's options once and applies the defaults: each room checks its own part (keys,
// claims modes, DPoP, revocation, shared verdicts); this file checks the rest and assembles ResolvedOptions.
import { parseDuration } from '../base/duration';
import { optionError } from '../base/option-error';
import { resolveClaimPolicy } from '../token/claim-modes';
import { isSupportedAlgorithm, type Algorithm } from '../jose/algorithms';
import { resolveDiscoveryTimeout, resolveIssuerBaseURL } from '../keys/discovery-options';
import { resolveRevocation } from '../verify/revocation';
import { resolveSharedVerdicts } from '../verify/shared-verdicts';
import { resolveDpop, resolveMtls } from '../dpop/options';
import { resolveIntrospection } from '../remote/introspection-options';
import type { ResolvedOptions, TokenAuthOptions } from './options';
import { resolveResource, resourceAudience } from './resource';
import type { AudienceRule } from '../token/registered';

const KNOWN_OPTIONS = new Set([
  'key',
  'issuer',
  'audience',
  'algorithms',
  'claims',
  'clockTolerance',
  'maxTokenAge',
  'maxLifetime',
  'maxTokenLength',
  'clock',
  'cache',
  'isRevoked',
  'getToken',
  'errors',
  'realm',
  'onError',
  'allowInsecureHttp',
  'typ',
  'scopeClaim',
  'requiredClaims',
  'validateClaims',
  'issuerBaseURL',
  'discovery',
  'dpop',
  'mtls',
  'revocation',
  'introspection',
  'introspect',
  'resource',
  'scopesSupported',
  'resourceName',
  'resourceDocumentation',
]);
const KNOWN_CACHE_OPTIONS = new Set(['max', 'maxBytes', 'ttl', 'errorTtl', 'shared']);

function systemClock(): number {
  return Date.now() / 1000;
}

function acceptedValues(value: unknown, name: 'issuer' | 'audience'): ReadonlySet<string> | false {
  if (value === undefined) {
    const or = name === 'audience' ? ' unless "resource" is given' : '';
    optionError(`option "${name}" is required${or} (pass false to leave the ${name} unchecked on purpose)`);
  }
  if (value === false) return false;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || list.some((v) => typeof v !== 'string' || v === '')) {
    optionError(`option "${name}" must be a non-empty string, an array of them, or false`);
  }
  return new Set(list as string[]);
}

/**
 * The audience rule: `audience` as given, or the resource's own rule when only `resource` is (an `audience` that
 * names the resource too keeps that rule for it).
 */
function resolveAudience(value: unknown, resource: string | undefined): AudienceRule | false {
  if (resource === undefined) return acceptedValues(value, 'audience');
  if (value === undefined) return resourceAudience(resource);
  const accepted = acceptedValues(value, 'audience');
  if (accepted === false || !accepted.has(resource)) return accepted;
  const rule = resourceAudience(resource);
  return { has: (aud) => accepted.has(aud) || rule.has(aud) };
}

function positiveInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    optionError(`option "${name}" must be a positive integer`);
  return value;
}

function optionalFunction<T>(value: T, name: string): T {
  if (value !== undefined && typeof value !== 'function') optionError(`option "${name}" must be a function`);
  return value;
}

function oneOf<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T))
    optionError(`option "${name}" must be ${allowed.map((a) => `'${a}'`).join(' or ')}`);
  return value as T;
}

function resolveCache(value: unknown): ResolvedOptions['cache'] {
  if (value === false) return false;
  if (value !== undefined && (typeof value !== 'object' || value === null))
    optionError('option "cache" must be an object or false');
  const cache = (value ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(cache))
    if (!KNOWN_CACHE_OPTIONS.has(name)) optionError(`unknown option "cache.${name}"`);
  return {
    max: positiveInteger(cache.max, 'cache.max', 10_000),
    maxBytes: positiveInteger(cache.maxBytes, 'cache.maxBytes', 16 * 1024 * 1024),
    ttl: cache.ttl === undefined ? 600 : parseDuration(cache.ttl, 'cache.ttl'),
    errorTtl: cache.errorTtl === undefined ? 5 : parseDuration(cache.errorTtl, 'cache.errorTtl'),
  };
}

function resolveAlgorithms(value: unknown): Algorithm[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0) optionError('option "algorithms" must be a non-empty array');
  for (const alg of value) {
    if (typeof alg === 'string' && alg.toLowerCase() === 'none')
      optionError('option "algorithms" may never include "none"');
    if (!isSupportedAlgorithm(alg))
      optionError(`option "algorithms" holds unsupported algorithm ${JSON.stringify(alg)}`);
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
  if (typeof input !== 'object' || input === null) optionError('createTokenAuth expects an options object');
  for (const name of Object.keys(input)) if (!KNOWN_OPTIONS.has(name)) optionError(`unknown option "${name}"`);
  const key = input.key as unknown;
  const issuerBaseURL = resolveIssuerBaseURL(input, input.allowInsecureHttp === true);
  if (key === undefined && issuerBaseURL === undefined)
    optionError(
      'option "key" is required ({ secret }, { publicKey }, { jwksUri }, { upstream } or a resolver function)',
    );
  if (issuerBaseURL === undefined && typeof key !== 'function' && (typeof key !== 'object' || key === null))
    optionError('option "key" must be an object or a function');

  const discovery = issuerBaseURL !== undefined;
  const introspection = resolveIntrospection(input, issuerBaseURL, input.allowInsecureHttp === true);
  // Claims with no JOSE header to check: upstream mode, and introspection of every token.
  const headerless = (typeof key === 'object' && key !== null && 'upstream' in key) || introspection?.mode === 'always';
  const claims = resolveClaimPolicy(input, { discovery, upstream: headerless });
  const realm = input.realm ?? 'api';
  if (typeof realm !== 'string' || !REALM.test(realm))
    optionError('option "realm" must be a string without quotes, backslashes or control characters');
  if (input.clock !== undefined) optionalFunction(input.clock, 'clock');
  if (input.allowInsecureHttp !== undefined && typeof input.allowInsecureHttp !== 'boolean')
    optionError('option "allowInsecureHttp" must be a boolean');
  const resource = resolveResource(input as unknown as Record<string, unknown>, input.allowInsecureHttp === true);

  return {
    key: input.key,
    issuerBaseURL,
    discoveryTimeout: resolveDiscoveryTimeout(input),
    algorithms: resolveAlgorithms(input.algorithms),
    rules: {
      // With discovery, the key source routes by `iss` and requires the discovered issuer exactly.
      issuer: issuerBaseURL === undefined ? acceptedValues(input.issuer, 'issuer') : false,
      audience: resolveAudience(input.audience, resource?.resource),
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
    introspection,
    resource,
    mtlsConfigured: input.mtls !== undefined,
  };
}
