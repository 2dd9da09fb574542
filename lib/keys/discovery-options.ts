// The `issuerBaseURL` and `discovery` options: which authorization servers to discover, and how long one refresh
// of their metadata and keys may take; checked at createTokenAuth (keys/discovery.ts does the discovering).
import { positiveDuration, type Duration } from '../base/duration';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import { optionError } from '../base/option-error';
import { checkRemoteUrl, withoutTrailingSlash } from '../fetch/remote-url';
import { checkIssuerBaseAddress } from './wrong-document';
import { TENANT_PLACEHOLDER, type TenantRule } from '../token/issuer';

/** One configured authorization server: its base URL exactly as given (the issuer it must name) and parsed. */
export interface IssuerBase {
  base: string;
  url: URL;
  /**
   * The issuer template its metadata publishes, known from the base alone: Entra ID's multi-tenant endpoints
   * (first path segment `common`, `organizations` or `consumers`), with `{tenantid}` in that segment's place.
   */
  template?: string;
}

/** Entra ID's multi-tenant endpoints: a base whose first path segment is one of these publishes an issuer template. */
const MULTI_TENANT_SEGMENTS: ReadonlySet<string> = new Set(['common', 'organizations', 'consumers']);

/** The issuer template of a multi-tenant base (docs/enterprise.md): its first path segment made `{tenantid}`. */
export function multiTenantTemplate(base: string): string | undefined {
  const start = base.indexOf('/', base.indexOf('//') + 2);
  if (start < 0) return undefined;
  let end = base.indexOf('/', start + 1);
  if (end < 0) end = base.length;
  if (!MULTI_TENANT_SEGMENTS.has(base.slice(start + 1, end))) return undefined;
  return `${base.slice(0, start + 1)}${TENANT_PLACEHOLDER}${base.slice(end)}`;
}

/**
 * `tenants` against the configured servers: a multi-tenant base (its template known now) needs it, an OptionError
 * naming `tenants` otherwise. A server whose template only discovery reveals is held to the same rule then
 * (keys/discovery.ts), and `tenants` given for servers that turn out to have exact issuers applies to nothing.
 */
export function checkDiscoveryTenants(issuers: readonly IssuerBase[], tenants: TenantRule | undefined): void {
  if (tenants !== undefined) return;
  const multi = issuers.find((issuer) => issuer.template !== undefined);
  if (multi !== undefined)
    optionError(
      'tenants',
      `option "issuerBaseURL" names the multi-tenant endpoint ${JSON.stringify(multi.base)}, whose issuer is the template ${JSON.stringify(multi.template)}: option "tenants" must say which tenants to accept (tenant IDs, a function, or 'any' on purpose)`,
    );
}

/** Default `discovery.timeout` (seconds). */
export const DEFAULT_DISCOVERY_TIMEOUT = 5;

/** `discovery` option: how discovery's fetches are bounded (with `issuerBaseURL` only). */
export interface DiscoveryOptions {
  /** One refresh of an issuer's metadata and key set together, bodies included (default 5 s). */
  timeout?: Duration;
}

const DISCOVERY_FIELDS: FieldList<DiscoveryOptions> = { timeout: true };

/**
 * Validate the `discovery` option at set-up: only with `issuerBaseURL`, only `timeout`, a duration above zero.
 * Its timeout in seconds (the default when the option is absent).
 */
export function resolveDiscoveryTimeout(options: { discovery?: unknown; issuerBaseURL?: unknown }): number {
  const value = options.discovery;
  if (value === undefined) return DEFAULT_DISCOVERY_TIMEOUT;
  if (options.issuerBaseURL === undefined)
    optionError('discovery', 'option "discovery" applies only with issuerBaseURL');
  if (!isObject(value)) optionError('discovery', 'option "discovery" must be an object');
  knownFields(value, DISCOVERY_FIELDS, 'discovery');
  return positiveDuration(value.timeout, 'discovery.timeout', DEFAULT_DISCOVERY_TIMEOUT);
}

/**
 * Validate the `issuerBaseURL` option once, at set-up: a URL string or a non-empty array of them, each `https:`
 * (plain `http:` only on loopback or with `allowInsecureHttp`), without query or fragment (RFC 8414 §2: an issuer
 * has neither), no two naming the same issuer. It replaces `key` and `issuer`, so giving either as well is a
 * TypeError. Undefined when the option is absent.
 */
export function resolveIssuerBaseURL(
  options: { issuerBaseURL?: unknown; key?: unknown; issuer?: unknown },
  allowInsecureHttp: boolean,
): readonly IssuerBase[] | undefined {
  const value = options.issuerBaseURL;
  if (value === undefined) return undefined;
  if (options.key !== undefined)
    optionError(
      'key',
      'option "issuerBaseURL" replaces "key" (the keys come from the discovered jwks_uri): give only one',
    );
  if (options.issuer !== undefined)
    optionError(
      'issuer',
      'option "issuerBaseURL" replaces "issuer" (the discovered issuer is the accepted one): give only one',
    );
  const list: unknown[] = Array.isArray(value) ? value : [value];
  if (list.length === 0)
    optionError('issuerBaseURL', 'option "issuerBaseURL" must be a URL string or a non-empty array of them');
  const seen = new Set<string>();
  const templates = new Set<string>();
  return list.map((entry, index) => {
    const name = Array.isArray(value) ? `issuerBaseURL[${index}]` : 'issuerBaseURL';
    const url = checkRemoteUrl(entry, name, allowInsecureHttp);
    checkIssuerBaseAddress(url, name);
    const base = entry as string;
    if (url.search !== '') optionError(name, `option "${name}" must not contain a query string`);
    const same = withoutTrailingSlash(base);
    if (seen.has(same)) optionError(name, `option "issuerBaseURL" names ${JSON.stringify(base)} twice`);
    seen.add(same);
    const template = multiTenantTemplate(base);
    if (template === undefined) return { base, url };
    // Two multi-tenant bases of one template (common and organizations) would both claim every tenant's token.
    if (templates.has(withoutTrailingSlash(template)))
      optionError(
        name,
        `option "issuerBaseURL" names two endpoints of the issuer template ${JSON.stringify(template)}`,
      );
    templates.add(withoutTrailingSlash(template));
    return { base, url, template };
  });
}
