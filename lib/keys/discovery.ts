// Keys from discovery (`issuerBaseURL`): each server's metadata (keys/metadata.ts) and key set, refreshed together;
// tokens routed to their server by `iss` (exact, or an issuer template's form) and held to its issuer rule.
import { TokenAuthError } from '../base/errors';
import { isIssuerTemplate, issuerRefused, issuerRule, type IssuerRule, type TenantRule } from '../token/issuer';
import type { JwsHeader } from '../jose/jws';
import type { Algorithm } from '../jose/algorithms';
import { jwksKeySource } from './jwks';
import { withoutTrailingSlash } from '../fetch/remote-url';
import { jwksBaseHint } from './wrong-document';
import type { IssuerBase } from './discovery-options';
import type { KeyChoice, SigningKeySource } from './source';
import { DiscoveryError, fetchMetadata, tenantsFault, type DiscoveredMetadata } from './metadata';
import { isThenable } from '../base/values';

export { metadataUrls, MAX_METADATA_BYTES, type DiscoveredMetadata } from './metadata';

/** A discovery key source that also answers its (first) server's metadata, fetching it when none is held yet. */
export interface DiscoverySource extends SigningKeySource {
  metadata(): Promise<DiscoveredMetadata>;
}

type Metadata = DiscoveredMetadata;

/** Settings shared by the issuers of one TokenAuth; durations in seconds. */
export interface DiscoveryConfig {
  issuers: readonly IssuerBase[];
  cooldown: number;
  timeout: number;
  algorithms: readonly Algorithm[] | undefined;
  clock: () => number;
  allowInsecureHttp: boolean;
  /** The `tenants` option: which tenants an issuer template accepts. */
  tenants: TenantRule | undefined;
}

/** Where the expected issuer comes from, once discovered: the metadata's `issuer`. */
const DISCOVERED = 'the metadata found at option "issuerBaseURL"';

/** One authorization server's key source, its metadata, and its issuer as discovered. */
interface IssuerKeySource extends DiscoverySource {
  /**
   * The issuer to name as its authorization server (RFC 9728): the discovered one, or the configured base when
   * the server names a template; fetches the metadata when none is held (through the one refresh path).
   */
  discoveredIssuer(): Promise<string | undefined>;
  /** Whether `iss` has the form of this server's issuer (a template's, too): routing, before anything is fetched. */
  names(iss: string): boolean;
  /** The issuers a token of this server may name, for a hint. */
  expected(): readonly string[];
  ready(): Promise<void>;
}

/** One authorization server: its metadata, fetched with its key set, and the key set itself. */
function issuerKeySource(issuer: IssuerBase, config: DiscoveryConfig): IssuerKeySource {
  const closing = new AbortController();
  let metadata: Metadata | undefined;
  // The issuer rule: the discovered issuer's, or before discovery the template a multi-tenant base names, if any.
  let rule: IssuerRule | undefined =
    issuer.template === undefined ? undefined : issuerRule([issuer.template], config.tenants, 'option "issuerBaseURL"');
  // A template discovery revealed and `tenants` did not allow holding: its tokens come here to be refused (503,
  // reason discovery-tenants, naming the option), rather than as an unknown `iss`.
  let withheld: IssuerRule | undefined;

  async function fetchChecked(deadline: number): Promise<Metadata> {
    const found = await fetchMetadata(issuer, {
      deadline,
      signal: closing.signal,
      allowInsecureHttp: config.allowInsecureHttp,
    });
    const fault = tenantsFault(found, issuer, config.tenants);
    if (fault !== undefined) {
      withheld = issuerRule([found.issuer], undefined, DISCOVERED);
      throw fault;
    }
    withheld = undefined;
    // The rule already held when it names this issuer (the base's template, or an earlier refresh): a token that
    // passed it before its key was sought is not asked again.
    if (rule?.issuers.length !== 1 || rule.issuers[0] !== found.issuer)
      rule = issuerRule([found.issuer], config.tenants, DISCOVERED);
    return found;
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
    const run = fetchChecked(deadline).then(
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
      const hint = err instanceof DiscoveryError ? err.hint : undefined;
      throw new TokenAuthError('verification_unavailable', { reason, retryAfter, cause: err, hint });
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
    // Microsoft's check holds a key's issuer to the discovered one too (a v1.0 token signed with a v2.0 key).
    served: () => (metadata === undefined ? [] : [metadata.issuer]),
    async locate(deadline) {
      const now = Date.now();
      const found = await refresh(metadata === undefined ? deadline : now + (deadline - now) / 2);
      return found.jwksUri;
    },
  });

  /**
   * A token's `iss` must fit the discovered issuer (exactly, or a template with its own `tid`: token/issuer.ts);
   * `checked` is the rule it already passed before its key was sought, asked once only.
   */
  function confirmed(key: KeyChoice, payload: Readonly<Record<string, unknown>>, checked?: IssuerRule): KeyChoice {
    if (metadata === undefined || rule === undefined) throw issuerRefused([issuer.base], DISCOVERED);
    if (rule !== checked) rule.check(payload);
    return key;
  }

  return {
    kind: 'jws',
    algorithms: keys.algorithms,
    keyFor(header: JwsHeader, payload: Readonly<Record<string, unknown>>) {
      // Refused before any fetch when the rule is known (discovered, or the template of a multi-tenant base).
      const checked = rule;
      checked?.check(payload);
      const key = keys.keyFor(header, payload);
      return isThenable(key)
        ? key.then((found) => confirmed(found, payload, checked))
        : confirmed(key, payload, checked);
    },
    metadata: discover,
    async discoveredIssuer() {
      // Asked by the unauthenticated metadata route: the refresh path's cooldown bounds what a flood costs.
      if (metadata === undefined) await refresh(Date.now() + config.timeout * 1000).catch(() => undefined);
      if (metadata === undefined) return undefined;
      // A template names no server a client could discover; the configured (multi-tenant) base is one.
      return isIssuerTemplate(metadata.issuer) ? issuer.base : metadata.issuer;
    },
    names: (iss) => rule?.names(iss) === true || withheld?.names(iss) === true,
    expected: () => rule?.issuers ?? [issuer.base],
    ready: () => keys.ready?.() ?? Promise.resolve(),
    close() {
      closing.abort();
      keys.close();
    },
  };
}

/**
 * `issuerBaseURL`: keys of one or several authorization servers found by discovery (docs/any-issuer.md). A token is
 * routed by its unverified `iss`: it must name one of the configured base URLs (give or take one trailing slash),
 * or have the form of a server's issuer template (known from a multi-tenant base, or once discovered), before
 * anything is fetched; then it must fit that server's discovered `issuer` (exactly, or the template with its own
 * `tid`, allowed by `tenants`: docs/enterprise.md). Each server has its own key set, so one server's keys never
 * verify another's tokens, whatever their `kid`s.
 */
export function discoveryKeySource(config: DiscoveryConfig): DiscoverySource {
  const sources = config.issuers.map((issuer) => issuerKeySource(issuer, config));
  const routes = new Map<string, IssuerKeySource>();
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
      const source =
        typeof iss === 'string' ? (routes.get(iss) ?? sources.find((candidate) => candidate.names(iss))) : undefined;
      if (source === undefined)
        throw issuerRefused(
          sources.flatMap((candidate) => candidate.expected()),
          'option "issuerBaseURL"',
          jwksHint,
        );
      return source.keyFor(header, payload);
    },
    metadata: () => sources[0].metadata(),
    ready: () => Promise.all(sources.map((source) => source.ready())).then(() => undefined),
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
