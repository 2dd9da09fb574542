// The protected resource (RFC 8707, RFC 9728): the `resource` option and what its metadata document says
// (`scopesSupported`, `resourceName`, `resourceDocumentation`), validated once; the audience rule it sets.
import { optionError } from '../base/option-error';
import { checkRemoteUrl } from '../fetch/remote-url';
import type { AudienceRule } from '../token/registered';
import { parseScopeRequirement } from '../token/scopes';
import { asciiLowerCase } from '../base/values';

/** Where RFC 9728 §3.1 puts the metadata document: this, then the resource's path. */
export const METADATA_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The options of this room, as `createTokenAuth` takes them. */
export interface ResourceOptions {
  /**
   * The canonical URI of this protected resource (RFC 8707, RFC 9728): absolute `https:` (plain `http:` on
   * loopback or with `allowInsecureHttp`), no query, no fragment. It is the default `audience`, and challenges
   * point to its metadata document.
   */
  resource?: string;
  /** `scopes_supported` of the metadata document. */
  scopesSupported?: string[];
  /** `resource_name` of the metadata document: a name for people. */
  resourceName?: string;
  /** `resource_documentation` of the metadata document: a URL of documentation for developers. */
  resourceDocumentation?: string;
}

/** The resource after validation. */
export interface ResolvedResource {
  /** Exactly as configured: the document's `resource` (RFC 9728 §3.3) and the default audience. */
  readonly resource: string;
  /** The metadata document's URL, built from `resource` alone (never from a request's Host). */
  readonly metadataUrl: string;
  /** Paths the document is served at: the path form, and the root form when the resource has a path. */
  readonly metadataPaths: readonly string[];
  readonly scopesSupported: readonly string[] | undefined;
  readonly name: string | undefined;
  readonly documentation: string | undefined;
}

/** `scheme://authority` of an absolute URI as written, and the rest (path), without parsing anything else. */
function splitOrigin(uri: string): { origin: string; rest: string } {
  const start = uri.indexOf('//') + 2;
  let end = uri.indexOf('/', start);
  if (end < 0) end = uri.length;
  return { origin: uri.slice(0, end), rest: uri.slice(end) };
}

/**
 * The audience a `resource` sets: a token's `aud` equals it with scheme and host compared case-insensitively
 * (RFC 3986 §6.2.2.1, ASCII letters only), and nothing else loosened: a trailing slash, another port or path is
 * another resource.
 */
export function resourceAudience(resource: string): AudienceRule {
  const { origin, rest } = splitOrigin(resource);
  const lowerOrigin = asciiLowerCase(origin);
  return {
    accepted: [resource],
    has(aud) {
      if (aud === resource) return true;
      if (aud.length !== resource.length || !aud.endsWith(rest)) return false;
      return asciiLowerCase(aud.slice(0, origin.length)) === lowerOrigin;
    },
  };
}

function optionalString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    optionError(name, `option "${name}" must be a non-empty string`);
  return value;
}

/**
 * Validate `resource` and its document's options (a TypeError naming the option); undefined without `resource`,
 * and then the document's options are refused, since nothing would publish them.
 */
export function resolveResource(
  input: Record<string, unknown>,
  allowInsecureHttp: boolean,
): ResolvedResource | undefined {
  const value = input.resource;
  if (value === undefined) {
    for (const name of ['scopesSupported', 'resourceName', 'resourceDocumentation']) {
      if (input[name] !== undefined)
        optionError(name, `option "${name}" needs option "resource" (it belongs to the resource's metadata document)`);
    }
    return undefined;
  }
  const url = checkRemoteUrl(value, 'resource', allowInsecureHttp);
  const resource = value as string;
  if (!/^https?:\/\//i.test(resource))
    optionError('resource', 'option "resource" must be an absolute URI such as "https://api.example.com/mcp"');
  if (resource.includes('#')) optionError('resource', 'option "resource" must not contain a fragment (RFC 8707 §2)');
  // RFC 8707 §2 advises against a query; its metadata URL would need one, which no router can tell apart.
  if (resource.includes('?')) optionError('resource', 'option "resource" must not contain a query string');
  const { origin, rest } = splitOrigin(resource);
  // The document's URL is the configured text with the well-known part inserted: a path that URL parsing would
  // rewrite (dot segments, unescaped characters) would make the document's address differ from the route's.
  if ((rest === '' ? '/' : rest) !== url.pathname) {
    optionError(
      'resource',
      `option "resource" must be a URI in normal form (its path as written must equal ${JSON.stringify(url.pathname)})`,
    );
  }
  // RFC 9728 §3.1: a terminating slash after the host is removed before inserting the well-known part.
  const path = rest === '/' ? '' : rest;
  const scopes =
    input.scopesSupported === undefined
      ? undefined
      : parseScopeRequirement(input.scopesSupported, 'scopesSupported', 'option "scopesSupported"').all;
  // MCP 2026-07-28 Authorization, "Refresh Tokens" (SEP-2207): servers SHOULD NOT list `offline_access`.
  if (scopes?.includes('offline_access'))
    optionError('scopesSupported', 'option "scopesSupported" must not list "offline_access" (a client asks for it)');
  const documentation = optionalString(input.resourceDocumentation, 'resourceDocumentation');
  if (documentation !== undefined && !URL.canParse(documentation))
    optionError('resourceDocumentation', 'option "resourceDocumentation" must be an absolute URL');
  return Object.freeze({
    resource,
    metadataUrl: `${origin}${METADATA_WELL_KNOWN}${path}`,
    metadataPaths: Object.freeze(
      path === '' ? [METADATA_WELL_KNOWN] : [`${METADATA_WELL_KNOWN}${path}`, METADATA_WELL_KNOWN],
    ),
    scopesSupported: scopes,
    name: optionalString(input.resourceName, 'resourceName'),
    documentation,
  });
}
