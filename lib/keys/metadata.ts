// One authorization server's metadata (OpenID Connect Discovery, then RFC 8414): fetched within a deadline, its
// issuer held to the base it was asked under (RFC 8414 §3.3, and issuer templates as docs/enterprise.md says) and to
// `tenants`, its jwks_uri checked. keys/discovery.ts decides when to fetch it.
import { fetchWellKnown } from '../fetch/well-known';
import { checkRemoteUrl, withoutTrailingSlash } from '../fetch/remote-url';
import { isObject } from '../base/values';
import { isIssuerTemplate, isTenantId, templateSegment, type TenantRule } from '../token/issuer';
import { jwksInsteadOfMetadata, quoted } from './wrong-document';
import type { IssuerBase } from './discovery-options';

/** Largest metadata document read (256 KiB); real ones are a few kilobytes. */
export const MAX_METADATA_BYTES = 256 * 1024;

/** The metadata this package reads from an authorization server. */
export interface DiscoveredMetadata {
  /** The issuer as the server names itself: exact, or a template holding `{tenantid}`. */
  issuer: string;
  jwksUri: URL;
  /** RFC 8414 `introspection_endpoint` as published (checked where it is used: remote/introspection.ts). */
  introspectionEndpoint: unknown;
  /** RFC 9701 §6 `introspection_signing_alg_values_supported` as published. */
  introspectionSigningAlgs: unknown;
  /** RFC 8414 `token_endpoint` as published (checked where it is used: remote/exchange.ts). */
  tokenEndpoint: unknown;
}

/** Why discovery failed: a short reason for logs (`TokenAuthError.reason`), and what to change; never for clients. */
export class DiscoveryError extends Error {
  constructor(
    readonly reason: string,
    cause?: unknown,
    readonly hint?: string,
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

/** What fetching one server's metadata needs. */
export interface MetadataRequest {
  /** When the fetch must be done (a `Date.now()` time). */
  deadline: number;
  signal: AbortSignal;
  allowInsecureHttp: boolean;
}

/**
 * The discovered issuer against the base asked (RFC 8414 §3.3: identical, give or take one trailing slash). An
 * issuer template fits a base that is the template with one segment in its place (Entra ID's `organizations` for
 * `{tenantid}`); a multi-tenant base (`consumers`) fits its server naming one tenant's issuer.
 */
function checkIssuer(found: string, issuer: IssuerBase): void {
  const base = withoutTrailingSlash(issuer.base);
  const named = withoutTrailingSlash(found);
  if (named === base) return;
  if (isIssuerTemplate(found)) {
    if (templateSegment(named, base) !== undefined) return;
    throw new DiscoveryError(
      'discovery-issuer-mismatch',
      undefined,
      `the metadata names the issuer template ${quoted(found)}, which ${quoted(issuer.base)} does not fit: give key: { jwksUri } and issuer: that template, with tenants`,
    );
  }
  const tenant =
    issuer.template === undefined ? undefined : templateSegment(withoutTrailingSlash(issuer.template), named);
  if (tenant === undefined || !isTenantId(tenant)) throw new DiscoveryError('discovery-issuer-mismatch');
}

/**
 * What `tenants` says of a discovered issuer: a template needs the option; one tenant's issuer found at a
 * multi-tenant base needs it to allow that tenant. The refusal, or undefined when the issuer may be held.
 */
export function tenantsFault(
  metadata: DiscoveredMetadata,
  issuer: IssuerBase,
  tenants: TenantRule | undefined,
): DiscoveryError | undefined {
  const found = metadata.issuer;
  if (isIssuerTemplate(found)) {
    if (tenants !== undefined) return undefined;
    return new DiscoveryError(
      'discovery-tenants',
      undefined,
      `the discovered issuer ${quoted(found)} is a template: set option "tenants" (tenant IDs, a function, or 'any' on purpose); until then no token is accepted`,
    );
  }
  if (withoutTrailingSlash(found) === withoutTrailingSlash(issuer.base) || issuer.template === undefined)
    return undefined;
  const tenant = templateSegment(withoutTrailingSlash(issuer.template), withoutTrailingSlash(found)) as string;
  if (tenants !== undefined && tenants(tenant)) return undefined;
  return new DiscoveryError(
    'discovery-tenants',
    undefined,
    `the server at ${quoted(issuer.base)} names the issuer of tenant ${tenant}, which option "tenants" does not allow`,
  );
}

/** Fetch and check one server's metadata; rejects with a DiscoveryError (or a WrongDocumentError) saying why. */
export async function fetchMetadata(issuer: IssuerBase, request: MetadataRequest): Promise<DiscoveredMetadata> {
  const urls = metadataUrls(issuer.url);
  const { document } = await fetchWellKnown([urls.openid, urls.oauth], {
    deadline: request.deadline,
    signal: request.signal,
    kind: 'discovery',
    maxBytes: MAX_METADATA_BYTES,
    prefix: 'discovery',
    fail: (reason, cause) => new DiscoveryError(reason, cause),
  });
  if (!isObject(document) || typeof document.issuer !== 'string')
    throw jwksInsteadOfMetadata(document) ?? new DiscoveryError('discovery-issuer');
  checkIssuer(document.issuer, issuer);
  let jwksUri: URL;
  try {
    jwksUri = checkRemoteUrl(document.jwks_uri, 'jwks_uri', request.allowInsecureHttp);
  } catch {
    throw new DiscoveryError('discovery-jwks-uri');
  }
  return {
    issuer: document.issuer,
    jwksUri,
    introspectionEndpoint: document.introspection_endpoint,
    introspectionSigningAlgs: document.introspection_signing_alg_values_supported,
    tokenEndpoint: document.token_endpoint,
  };
}
