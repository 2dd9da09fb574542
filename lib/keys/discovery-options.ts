// The `issuerBaseURL` and `discovery` options: which authorization servers to discover, and how long one refresh
// of their metadata and keys may take; checked at createTokenAuth (keys/discovery.ts does the discovering).
import { positiveDuration, type Duration } from '../base/duration';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import { optionError } from '../base/option-error';
import { checkRemoteUrl, withoutTrailingSlash } from '../fetch/remote-url';
import { checkIssuerBaseAddress } from './wrong-document';

/** One configured authorization server: its base URL exactly as given (the issuer it must name) and parsed. */
export interface IssuerBase {
  base: string;
  url: URL;
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
  return list.map((entry, index) => {
    const name = Array.isArray(value) ? `issuerBaseURL[${index}]` : 'issuerBaseURL';
    const url = checkRemoteUrl(entry, name, allowInsecureHttp);
    checkIssuerBaseAddress(url, name);
    const base = entry as string;
    if (url.search !== '') optionError(name, `option "${name}" must not contain a query string`);
    const same = withoutTrailingSlash(base);
    if (seen.has(same)) optionError(name, `option "issuerBaseURL" names ${JSON.stringify(base)} twice`);
    seen.add(same);
    return { base, url };
  });
}
