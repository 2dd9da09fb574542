// Keys from discovery (`issuerBaseURL`): OpenID Connect Discovery, then RFC 8414; the metadata issuer checked
// exactly; its jwks_uri becomes a JWKS source; tokens routed to their issuer by exact `iss`.
import { parseDuration, type Duration } from '../base/duration';
import { TokenAuthError } from '../base/errors';
import type { JwsHeader } from '../token/jws';
import type { Algorithm } from './algorithms';
import { fetchBounded, RemoteFetchError } from './bounded-fetch';
import { jwksKeySource } from './jwks';
import { checkRemoteUrl } from './remote-url';
import type { KeyChoice, SigningKeySource } from './source';
import { isObject } from '../base/values';
import { optionError } from '../base/option-error';

/** One configured authorization server: its base URL exactly as given (the issuer it must name) and parsed. */
export interface IssuerBase {
  base: string;
  url: URL;
}

/** Largest metadata document read (256 KiB); real ones are a few kilobytes. */
export const MAX_METADATA_BYTES = 256 * 1024;

/** Default `discovery.timeout` (seconds). */
export const DEFAULT_DISCOVERY_TIMEOUT = 5;

/** `discovery` option: how discovery's fetches are bounded (with `issuerBaseURL` only). */
export interface DiscoveryOptions {
  /** One refresh of an issuer's metadata and key set together, bodies included (default 5 s). */
  timeout?: Duration;
}

/**
 * Validate the `discovery` option at set-up: only with `issuerBaseURL`, only `timeout`, a duration above zero.
 * Its timeout in seconds (the default when the option is absent).
 */
export function resolveDiscoveryTimeout(options: { discovery?: unknown; issuerBaseURL?: unknown }): number {
  const value = options.discovery;
  if (value === undefined) return DEFAULT_DISCOVERY_TIMEOUT;
  if (options.issuerBaseURL === undefined) optionError('option "discovery" applies only with issuerBaseURL');
  if (typeof value !== 'object' || value === null) optionError('option "discovery" must be an object');
  const { timeout, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) optionError(`unknown option "discovery.${unknown}"`);
  if (timeout === undefined) return DEFAULT_DISCOVERY_TIMEOUT;
  const seconds = parseDuration(timeout, 'discovery.timeout');
  if (!(seconds > 0)) optionError('option "discovery.timeout" must be more than zero');
  return seconds;
}

/** Without its one trailing slash, if it has one: RFC 8414 §3.3 tolerates that difference and no other. */
function withoutTrailingSlash(value: string): string {
  return value.endsWith('/') ? value.slice(0, -1) : value;
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
  if (options.key !== undefined) optionError('option "issuerBaseURL" replaces "key" (the keys come from the discovered jwks_uri): give only one');
  if (options.issuer !== undefined) optionError('option "issuerBaseURL" replaces "issuer" (the discovered issuer is the accepted one): give only one');
  const list: unknown[] = Array.isArray(value) ? value : [value];
  if (list.length === 0) optionError('option "issuerBaseURL" must be a URL string or a non-empty array of them');
  const seen = new Set<string>();
  return list.map((entry, index) => {
    const name = Array.isArray(value) ? `issuerBaseURL[${index}]` : 'issuerBaseURL';
    const url = checkRemoteUrl(entry, name, allowInsecureHttp);
    const base = entry as string;
    if (url.search !== '') optionError(`option "${name}" must not contain a query string`);
    const same = withoutTrailingSlash(base);
    if (seen.has(same)) optionError(`option "issuerBaseURL" names ${JSON.stringify(base)} twice`);
    seen.add(same);
    return { base, url };
  });
}

/** The metadata this package reads from an authorization server. */
interface Metadata {
  issuer: string;
  jwksUri: URL;
}

/** Why discovery failed, as a short reason for logs (`TokenAuthError.reason`), never for clients. */
class DiscoveryError extends Error {
  constructor(readonly reason: string, cause?: unknown) {
    super(`discovery failed: ${reason}`, cause === undefined ? undefined : { cause });
    this.name = 'DiscoveryError';
  }
}

/**
 * The two metadata addresses of a base URL: OpenID Connect Discovery 1.0 §4 appends
 * `/.well-known/openid-configuration` to the issuer; RFC 8414 §3.1 inserts `/.well-known/oauth-authorization-server`
 * between the host and the issuer's path.
 */
export function metadataUrls(base: URL): { openid: string; oauth: string } {
  const path = withoutTrailingSlash(base.pathname);
  return {
    openid: `${base.origin}${path}/.well-known/openid-configuration`,
    oauth: `${base.origin}/.well-known/oauth-authorization-server${path}`,
  };
}

/** Settings shared by the issuers of one TokenAuth; durations in seconds. */
export interface DiscoveryConfig {
  issuers: readonly IssuerBase[];
  cooldown: number;
  timeout: number;
  algorithms: readonly Algorithm[] | undefined;
  clock: () => number;
  allowInsecureHttp: boolean;
}

function invalidIssuer(): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason: 'iss' });
}

/** One authorization server: its metadata, fetched with its key set, and the key set itself. */
function issuerKeySource(issuer: IssuerBase, config: DiscoveryConfig): SigningKeySource {
  const closing = new AbortController();
  const urls = metadataUrls(issuer.url);
  let metadata: Metadata | undefined;

  async function get(url: string, deadline: number): Promise<{ status: number; text: string }> {
    const left = deadline - Date.now();
    if (left <= 0) throw new DiscoveryError('discovery-timeout');
    try {
      return await fetchBounded(url, {
        headers: { Accept: 'application/json' },
        timeoutMs: left,
        maxBytes: MAX_METADATA_BYTES,
        signal: closing.signal,
      });
    } catch (err) {
      throw new DiscoveryError(err instanceof RemoteFetchError ? `discovery-${err.failure}` : 'discovery-network', err);
    }
  }

  async function fetchMetadata(deadline: number): Promise<Metadata> {
    let answer = await get(urls.openid, deadline);
    if (answer.status === 404) answer = await get(urls.oauth, deadline);
    if (answer.status !== 200) throw new DiscoveryError(`discovery-status-${answer.status}`);
    let document: unknown;
    try {
      document = JSON.parse(answer.text);
    } catch {
      throw new DiscoveryError('discovery-json');
    }
    if (!isObject(document) || typeof document.issuer !== 'string') throw new DiscoveryError('discovery-issuer');
    // RFC 8414 §3.3: the issuer must be the one asked for; only a trailing slash may differ.
    if (withoutTrailingSlash(document.issuer) !== withoutTrailingSlash(issuer.base)) throw new DiscoveryError('discovery-issuer-mismatch');
    let jwksUri: URL;
    try {
      jwksUri = checkRemoteUrl(document.jwks_uri, 'jwks_uri', config.allowInsecureHttp);
    } catch {
      throw new DiscoveryError('discovery-jwks-uri');
    }
    return { issuer: document.issuer, jwksUri };
  }

  // The metadata is fetched before each key fetch (first use, unknown kid, periodic refresh), so both share the
  // JWKS cooldown and outage rules, and one `timeout` for both. A failed refresh keeps the metadata already held;
  // with metadata held, its refresh may take half of what is left, so a hanging metadata endpoint never starves
  // the key set's refresh.
  const keys = jwksKeySource({
    url: issuer.url,
    cooldown: config.cooldown,
    timeout: config.timeout,
    algorithms: config.algorithms,
    clock: config.clock,
    async locate(deadline) {
      try {
        metadata = await fetchMetadata(metadata === undefined ? deadline : Date.now() + (deadline - Date.now()) / 2);
      } catch (err) {
        if (metadata === undefined) throw err;
      }
      return metadata.jwksUri;
    },
  });

  /** A token's `iss` must equal the discovered issuer exactly; the trailing-slash tolerance is the metadata's. */
  function confirmed(key: KeyChoice, payload: Readonly<Record<string, unknown>>): KeyChoice {
    if (metadata === undefined || payload.iss !== metadata.issuer) throw invalidIssuer();
    return key;
  }

  return {
    kind: 'jws',
    algorithms: keys.algorithms,
    keyFor(header: JwsHeader, payload: Readonly<Record<string, unknown>>) {
      if (metadata !== undefined && payload.iss !== metadata.issuer) throw invalidIssuer();
      const key = keys.keyFor(header, payload);
      return key instanceof Promise ? key.then((found) => confirmed(found, payload)) : confirmed(key, payload);
    },
    close() {
      closing.abort();
      keys.close();
    },
  };
}

/**
 * `issuerBaseURL`: keys of one or several authorization servers found by discovery (docs/any-issuer.md). A token is routed
 * by its unverified `iss`: it must name one of the configured base URLs (give or take one trailing slash) before
 * anything is fetched, and then equal that server's discovered `issuer` exactly. Each server has its own key set,
 * so one server's keys never verify another's tokens, whatever their `kid`s.
 */
export function discoveryKeySource(config: DiscoveryConfig): SigningKeySource {
  const sources = config.issuers.map((issuer) => issuerKeySource(issuer, config));
  const routes = new Map<string, SigningKeySource>();
  config.issuers.forEach((issuer, index) => {
    const same = withoutTrailingSlash(issuer.base);
    routes.set(same, sources[index]);
    routes.set(`${same}/`, sources[index]);
  });
  return {
    kind: 'jws',
    algorithms: sources[0].algorithms,
    keyFor(header, payload) {
      const iss = payload.iss;
      const source = typeof iss === 'string' ? routes.get(iss) : undefined;
      if (source === undefined) throw invalidIssuer();
      return source.keyFor(header, payload);
    },
    close() {
      for (const source of sources) source.close();
    },
  };
}
