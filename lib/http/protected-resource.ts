// The RFC 9728 metadata document of a protected resource, served by `auth.protectedResourceMetadata()` at its
// well-known paths: what a client (an MCP client, say) reads to find the authorization server and the scopes.
import type { RequestHandler, Response } from 'express';
import { TokenAuthError } from '../base/errors';
import type { ResolvedResource } from '../config/resource';
import { sendError } from './respond';

/** The issuers a document lists, and whether they are final (discovered or configured) or a stand-in. */
export interface AuthorizationServers {
  readonly issuers: readonly string[];
  /** False while discovery has not answered: the configured base URLs stand in, and the answer is not cached. */
  readonly final: boolean;
}

/** What the document is made of, from the resolved options and the key source. */
export interface MetadataSources {
  readonly resource: ResolvedResource;
  /** Configured issuers at once; with `issuerBaseURL`, the discovered ones (fetched on first need). */
  authorizationServers(): AuthorizationServers | Promise<AuthorizationServers>;
  /** With `dpop`: the proof algorithms accepted and whether Bearer is refused. */
  readonly dpop: { readonly algorithms: readonly string[]; readonly required: boolean } | undefined;
  /** With `mtls`: certificate-bound tokens are supported (RFC 8705). */
  readonly mtls: boolean;
}

/** How long a client may keep the document (seconds); it changes only with the app's configuration. */
export const METADATA_MAX_AGE = 3600;
const ALLOW = 'GET, HEAD, OPTIONS';

/** The RFC 9728 §2 document: only fields this configuration can vouch for. */
function metadataDocument(sources: MetadataSources, issuers: readonly string[]): string {
  const { resource, dpop } = sources;
  const document: Record<string, unknown> = { resource: resource.resource };
  if (issuers.length > 0) document.authorization_servers = issuers;
  if (resource.scopesSupported !== undefined) document.scopes_supported = resource.scopesSupported;
  document.bearer_methods_supported = ['header'];
  if (resource.name !== undefined) document.resource_name = resource.name;
  if (resource.documentation !== undefined) document.resource_documentation = resource.documentation;
  if (sources.mtls) document.tls_client_certificate_bound_access_tokens = true;
  if (dpop !== undefined) {
    document.dpop_signing_alg_values_supported = dpop.algorithms;
    document.dpop_bound_access_tokens_required = dpop.required;
  }
  return JSON.stringify(document);
}

function cors(res: Response): void {
  // Public metadata: any web client may read it (RFC 9728 §3 leaves CORS to the server; MCP browser clients need it).
  res.setHeader('Access-Control-Allow-Origin', '*');
}

/**
 * The handler behind `auth.protectedResourceMetadata()`: `GET`/`HEAD` of the document's paths answer JSON with
 * CORS and a `Cache-Control` max-age, `OPTIONS` a CORS preflight, other methods 405; any other path goes to
 * `next()`. Mount it at the application's root (well-known URIs live there).
 */
export function protectedResourceMetadataRouter(sources: MetadataSources): RequestHandler {
  const paths = new Set(sources.resource.metadataPaths);
  let finalBody: string | undefined;

  function send(res: Response, body: string, final: boolean): void {
    cors(res);
    res.setHeader('Cache-Control', final ? `public, max-age=${METADATA_MAX_AGE}` : 'no-store');
    res.type('application/json').send(body);
  }

  function answer(res: Response): void {
    if (finalBody !== undefined) return send(res, finalBody, true);
    const servers = sources.authorizationServers();
    const write = (found: AuthorizationServers) => {
      const body = metadataDocument(sources, found.issuers);
      if (found.final) finalBody = body;
      if (!res.headersSent) send(res, body, found.final);
    };
    // Discovery never rejects here (it stands in with the base URLs); a request must not hang if it ever did.
    if (servers instanceof Promise) void servers.then(write, () => write({ issuers: [], final: false }));
    else write(servers);
  }

  return function protectedResourceMetadata(req, res, next) {
    if (!paths.has(req.path)) {
      next();
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      answer(res);
      return;
    }
    if (req.method === 'OPTIONS') {
      cors(res);
      res.setHeader('Access-Control-Allow-Methods', ALLOW);
      res.setHeader('Access-Control-Allow-Headers', '*');
      res.setHeader('Access-Control-Max-Age', '86400');
      res.status(204).end();
      return;
    }
    sendError(res, new TokenAuthError('method_not_allowed', { headers: { Allow: ALLOW } }));
  };
}
