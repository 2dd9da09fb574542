// Keys from discovery (`issuerBaseURL`): OpenID Connect Discovery, then RFC 8414; the metadata issuer checked
// exactly; its jwks_uri becomes a JWKS source; tokens routed to their issuer by exact `iss`.
import { TokenAuthError } from '../base/errors';
import { issuerRefused } from '../token/registered';
import type { JwsHeader } from '../jose/jws';
import type { Algorithm } from '../jose/algorithms';
import { fetchBounded, RemoteFetchError } from '../fetch/bounded-fetch';
import { jwksKeySource } from './jwks';
import { checkRemoteUrl, withoutTrailingSlash } from '../fetch/remote-url';
import { jwksBaseHint, jwksInsteadOfMetadata } from './wrong-document';
import type { IssuerBase } from './discovery-options';
import type { KeyChoice, SigningKeySource } from './source';
import { isObject } from '../base/values';

/** Largest metadata document read (256 KiB); real ones are a few kilobytes. */
export const MAX_METADATA_BYTES = 256 * 1024;

/** The metadata this package reads from an authorization server. */
export interface DiscoveredMetadata {
  issuer: string;
  jwksUri: URL;
  /** RFC 8414 `introspection_endpoint` as published (checked where it is used: keys/introspection.ts). */
  introspectionEndpoint: unknown;
  /** RFC 9701 §6 `introspection_signing_alg_values_supported` as published. */
  introspectionSigningAlgs: unknown;
}

/** A discovery key source that also answers its (first) server's metadata, fetching it when none is held yet. */
export interface DiscoverySource extends SigningKeySource {
  metadata(): Promise<DiscoveredMetadata>;
}

type Metadata = DiscoveredMetadata;

/** Why discovery failed, as a short reason for logs (`TokenAuthError.reason`), never for clients. */
class DiscoveryError extends Error {
  constructor(
    readonly reason: string,
    cause?: unknown,
  ) {
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

/** Where the expected issuer comes from, once discovered: the metadata's `issuer`. */
const DISCOVERED = 'the metadata found at option "issuerBaseURL"';

/** One authorization server's key source, its metadata, and its issuer as discovered. */
interface IssuerKeySource extends DiscoverySource {
  /** The discovered issuer; fetches the metadata when none is held (through the one refresh path). */
  discoveredIssuer(): Promise<string | undefined>;
}

/** One authorization server: its metadata, fetched with its key set, and the key set itself. */
function issuerKeySource(issuer: IssuerBase, config: DiscoveryConfig): IssuerKeySource {
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
        kind: 'discovery',
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
    if (!isObject(document) || typeof document.issuer !== 'string')
      throw jwksInsteadOfMetadata(document) ?? new DiscoveryError('discovery-issuer');
    // RFC 8414 §3.3: the issuer must be the one asked for; only a trailing slash may differ.
    if (withoutTrailingSlash(document.issuer) !== withoutTrailingSlash(issuer.base))
      throw new DiscoveryError('discovery-issuer-mismatch');
    let jwksUri: URL;
    try {
      jwksUri = checkRemoteUrl(document.jwks_uri, 'jwks_uri', config.allowInsecureHttp);
    } catch {
      throw new DiscoveryError('discovery-jwks-uri');
    }
    return {
      issuer: document.issuer,
      jwksUri,
      introspectionEndpoint: document.introspection_endpoint,
      introspectionSigningAlgs: document.introspection_signing_alg_values_supported,
    };
  }

  // The one refresh path: every caller (first use, unknown kid, periodic refresh, introspection's metadata, the
  // resource's authorization_servers) shares the fetch under way, and none starts another within `cooldown` of
  // the last one, whatever it asks. A failed refresh keeps the metadata already held.
  let refreshing: Promise<Metadata> | undefined;
  let refreshedAt = -Infinity;
  let failure: unknown;

  function cooling(): number {
    return refreshedAt + config.cooldown - config.clock();
  }

  /** The metadata: fetched now (or the fetch under way joined), or within the cooldown the metadata held. */
  function refresh(deadline: number): Promise<Metadata> {
    if (refreshing !== undefined) return refreshing;
    if (cooling() > 0) return metadata !== undefined ? Promise.resolve(metadata) : Promise.reject(failure);
    refreshedAt = config.clock();
    const run = fetchMetadata(deadline).then(
      (found) => {
        metadata = found;
        failure = undefined;
        refreshing = undefined;
        return found;
      },
      (err: unknown) => {
        failure = err;
        refreshing = undefined;
        if (metadata === undefined) throw err;
        return metadata;
      },
    );
    refreshing = run;
    return run;
  }

  /** The metadata held, else a refresh; an outage with none held is a 503 (never cached) until the cooldown ends. */
  function discover(): Promise<Metadata> {
    if (metadata !== undefined) return Promise.resolve(metadata);
    return refresh(Date.now() + config.timeout * 1000).catch((err: unknown) => {
      const reason = err instanceof DiscoveryError ? err.reason : 'discovery';
      const retryAfter = Math.max(1, Math.ceil(cooling()));
      throw new TokenAuthError('verification_unavailable', { reason, retryAfter, cause: err });
    });
  }

  // The metadata is refreshed before each key fetch (first use, unknown kid, periodic refresh), so both share one
  // `timeout`; the key set's own cooldown paces these. With metadata held, its refresh may take half of what is
  // left, so a hanging metadata endpoint never starves the key set's refresh.
  const keys = jwksKeySource({
    url: issuer.url,
    cooldown: config.cooldown,
    timeout: config.timeout,
    algorithms: config.algorithms,
    clock: config.clock,
    named: `the jwks_uri in the metadata of issuerBaseURL ${JSON.stringify(issuer.base)}`,
    async locate(deadline) {
      const now = Date.now();
      const found = await refresh(metadata === undefined ? deadline : now + (deadline - now) / 2);
      return found.jwksUri;
    },
  });

  /** A token's `iss` must equal the discovered issuer exactly; the trailing-slash tolerance is the metadata's. */
  function confirmed(key: KeyChoice, payload: Readonly<Record<string, unknown>>): KeyChoice {
    if (metadata === undefined || payload.iss !== metadata.issuer)
      throw issuerRefused([metadata?.issuer ?? issuer.base], DISCOVERED);
    return key;
  }

  return {
    kind: 'jws',
    algorithms: keys.algorithms,
    keyFor(header: JwsHeader, payload: Readonly<Record<string, unknown>>) {
      if (metadata !== undefined && payload.iss !== metadata.issuer) throw issuerRefused([metadata.issuer], DISCOVERED);
      const key = keys.keyFor(header, payload);
      return key instanceof Promise ? key.then((found) => confirmed(found, payload)) : confirmed(key, payload);
    },
    metadata: discover,
    async discoveredIssuer() {
      // Asked by the unauthenticated metadata route: the refresh path's cooldown bounds what a flood costs.
      if (metadata === undefined) await refresh(Date.now() + config.timeout * 1000).catch(() => undefined);
      return metadata?.issuer;
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
export function discoveryKeySource(config: DiscoveryConfig): DiscoverySource {
  const sources = config.issuers.map((issuer) => issuerKeySource(issuer, config));
  const routes = new Map<string, SigningKeySource>();
  const bases = config.issuers.map((issuer) => issuer.base);
  const jwksHint = jwksBaseHint(config.issuers.map((issuer) => issuer.url));
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
      if (source === undefined) throw issuerRefused(bases, 'option "issuerBaseURL"', jwksHint);
      return source.keyFor(header, payload);
    },
    metadata: () => sources[0].metadata(),
    async discoveredIssuers() {
      const found = await Promise.all(sources.map((source) => source.discoveredIssuer()));
      return {
        issuers: found.map((issuer, index) => issuer ?? config.issuers[index].base),
        final: found.every((issuer) => issuer !== undefined),
      };
    },
    close() {
      for (const source of sources) source.close();
    },
  };
}

/** Whether a key source is a discovery source (one that can answer its server's metadata). */
export function isDiscoverySource(source: { readonly kind: string }): source is DiscoverySource {
  return source.kind === 'jws' && typeof (source as Partial<DiscoverySource>).metadata === 'function';
}
