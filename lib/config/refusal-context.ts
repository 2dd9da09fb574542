// The configuration as refusal hints name it: the key source by its option, the algorithms it allows, the accepted
// audiences and issuers, and who answers remote questions; read once per TokenAuth (config/refusal-hints.ts).
import type { TokenAuthError } from '../base/errors';
import { proxyAssertionOf, type ProxyAssertion } from '../extract/proxy-assertion';
import { quoted } from '../base/printable';
import { JWKS_DEFAULT_ALGORITHMS } from '../keys/jwks';
import { acceptedList } from '../token/issuer';
import type { ResolvedOptions } from './options';

/** The configuration as hints name it, read once when a TokenAuth is built. */
export interface Described {
  readonly options: ResolvedOptions;
  /** The key source, as the option that names it: `option "key.secret"`, `option "issuerBaseURL" (…)`. */
  readonly key: string;
  /** Algorithms a token's header may name (none with upstream mode, where another service checks signatures). */
  readonly algorithms: readonly string[];
  /** The accepted audiences and the option(s) they come from, or undefined when the audience is unchecked. */
  readonly audience: string | undefined;
  /** The accepted issuers and their option. */
  readonly issuer: string;
  /** Where remote answers come from: `option "introspection" (…)`, or `option "key.upstream" (…)`. */
  readonly remote: string;
  /** Where granted scopes are read: `from claim "scope", "scp" or "scopes" (option "scopeClaim")`. */
  readonly scopes: string;
  /** The proxy header the token is read from, with an edge preset's `getToken` (extract/proxy-assertion.ts). */
  readonly proxy: ProxyAssertion | undefined;
}

export type Hint = (c: Described, err: TokenAuthError) => string;

/** A configured value (a route's scopes, a claim name) quoted and escaped, not cut: its length is the app's. */
export const quote = (value: string) => quoted(value, Infinity);

/** The key source as its option names it, with the address it points at. */
function keyOption(options: ResolvedOptions): string {
  const source = options.source;
  switch (source.form) {
    case 'held':
      return source.held.key.type === 'secret' ? 'option "key.secret"' : 'option "key.publicKey"';
    case 'resolver':
      return 'option "key" (the app\'s key resolver)';
    case 'jwks':
      return 'option "key.jwks"';
    case 'jwksUri':
      return `option "key.jwksUri" (${source.url.href})`;
    case 'discovery':
      return `option "issuerBaseURL" (${acceptedList(source.issuers.map((issuer) => issuer.base))})`;
    case 'upstream':
      return `option "key.upstream" (${source.base.href})`;
    case 'preset':
      return "the edge preset's keys (express-verified-user/edge)";
  }
}

function algorithmsOf(options: ResolvedOptions): readonly string[] {
  const source = options.source;
  switch (source.form) {
    case 'held':
      return [...source.held.algorithms];
    case 'resolver':
      return [...source.algorithms];
    case 'jwks':
      return [...source.jwks.algorithms];
    case 'jwksUri':
    case 'discovery':
    case 'preset':
      return source.algorithms ?? JWKS_DEFAULT_ALGORITHMS;
    case 'upstream':
      return [];
  }
}

function audienceOf(options: ResolvedOptions): string | undefined {
  const rule = options.rules.audience;
  if (rule === false) return undefined;
  const resource = options.resource?.resource;
  if (rule instanceof Set) return `${acceptedList(rule as ReadonlySet<string>)}, from option "audience"`;
  const named = rule.accepted ?? [];
  const from =
    resource !== undefined && named.length === 1 && named[0] === resource
      ? 'option "resource" (scheme and host in any case)'
      : 'options "audience" and "resource"';
  return `${acceptedList(named)}, from ${from}`;
}

function issuerOf(options: ResolvedOptions, key: string): string {
  const issuer = options.rules.issuer;
  if (issuer !== false) return `${acceptedList(issuer.issuers)}, from option "issuer"`;
  return options.source.form === 'discovery' ? `the issuer discovered from ${key}` : 'any (option "issuer" is false)';
}

function remoteOf(options: ResolvedOptions, key: string): string {
  const introspection = options.introspection;
  if (introspection === undefined) return key;
  const at = introspection.endpoint?.href ?? `the introspection_endpoint of ${introspection.server.base}`;
  return `option "introspection" (${at})`;
}

function scopesOf(options: ResolvedOptions): string {
  const claims = options.claims.scopeClaims;
  return claims === undefined
    ? 'by the option "scopeClaim" function'
    : `from claim ${acceptedList(claims)} (option "scopeClaim")`;
}

/** What hints name of one TokenAuth's configuration. */
export function describeConfiguration(options: ResolvedOptions): Described {
  const key = keyOption(options);
  return {
    options,
    key,
    algorithms: algorithmsOf(options),
    audience: audienceOf(options),
    issuer: issuerOf(options, key),
    remote: remoteOf(options, key),
    scopes: scopesOf(options),
    proxy: proxyAssertionOf(options.getToken),
  };
}

/** A duration option's value, as hints print it. */
export const seconds = (value: number) => `${value} s`;
