// A key address that serves the other kind of document: a JWKS given as `issuerBaseURL`, or discovery metadata
// given as `key.jwksUri`. Caught at set-up when the path says so, else when the answer shows it (for logs).
import { optionError } from '../base/option-error';
import { MAX_SERVER_TEXT, quoted as quotedText } from '../base/printable';
import { isObject } from '../base/values';

const USE_JWKS_URI = 'issuerBaseURL points at a JWKS; use key: { jwksUri } (and issuer) instead';

/** A document of the wrong kind: a short reason for `TokenAuthError.reason`, and a hint saying what to change. */
export class WrongDocumentError extends Error {
  constructor(
    readonly reason: string,
    readonly hint: string,
  ) {
    super(hint);
    this.name = 'WrongDocumentError';
  }
}

/** A value for a hint, remote-supplied ones included: quoted, escaped and cut (base/printable.ts). */
export function quoted(value: unknown): string {
  return quotedText(String(value), MAX_SERVER_TEXT);
}

/**
 * A metadata document's name under `/.well-known/`: RFC 8414's `oauth-authorization-server`, or any
 * `<name>-configuration` (OpenID Connect's `openid-configuration`, Keycloak's `uma2-configuration`, …).
 */
const METADATA_NAME =
  /^(.*?)\/\.well-known\/(oauth-authorization-server|[a-z0-9][a-z0-9._-]*-configuration)(\/.+?)?\/?$/i;

/**
 * A metadata address: its document's name, and its issuer, the path around `/.well-known/<name>` (before it, as
 * OpenID Connect places it, or after it, as RFC 8414 §3.1 inserts it); undefined for any other address.
 */
function metadataPath(url: URL): { issuer: string; name: string } | undefined {
  const found = METADATA_NAME.exec(url.pathname);
  if (found === null) return undefined;
  return { issuer: `${url.origin}${found[1]}${found[3] ?? ''}`, name: found[2] };
}

/** Whether a path reads as a key set's address (`…/jwks`, `…/jwks.json`, `…/certs`, anything under `/.well-known/` but metadata). */
export function looksLikeJwksPath(url: URL): boolean {
  if (metadataPath(url) !== undefined) return false;
  return /\/\.well-known\//.test(url.pathname) || /\/(jwks(\.json)?|certs|keys)\/?$/i.test(url.pathname);
}

/**
 * Set-up check of an `issuerBaseURL` entry: an issuer never lies under `/.well-known/`, so a metadata or JWKS
 * address there is a mix-up, named at once.
 */
export function checkIssuerBaseAddress(url: URL, option: string): void {
  const metadata = metadataPath(url);
  if (metadata !== undefined) {
    const named = /^(openid-configuration|oauth-authorization-server)$/i.test(metadata.name)
      ? ''
      : ` (a /.well-known/${metadata.name} document, not the issuer)`;
    optionError(
      option,
      `option "${option}" is a discovery metadata address${named}: give the issuer itself (${quoted(metadata.issuer)}); the metadata path is added by discovery`,
    );
  }
  if (/\/\.well-known\/oauth-protected-resource(\/|$)/.test(url.pathname))
    optionError(
      option,
      `option "${option}" is a protected resource's metadata address (RFC 9728), not an issuer: give the authorization server its "authorization_servers" names`,
    );
  if (/\/\.well-known\//.test(url.pathname)) optionError(option, `option "${option}": ${USE_JWKS_URI}`);
}

/** Set-up check of `key.jwksUri`: a discovery metadata address there is a mix-up, named at once. */
export function checkJwksAddress(url: URL, option: string): void {
  const metadata = metadataPath(url);
  if (metadata !== undefined) {
    optionError(
      option,
      `option "${option}" is a discovery metadata address, not a JWKS: use issuerBaseURL: ${quoted(metadata.issuer)} (instead of key and issuer), or key.jwksUri: the metadata's jwks_uri`,
    );
  }
}

/** A JWKS fetch answered with discovery metadata: the error to fail with, or undefined for any other document. */
export function metadataInsteadOfJwks(document: unknown): WrongDocumentError | undefined {
  if (!isObject(document) || Array.isArray(document.keys)) return undefined;
  if (typeof document.jwks_uri !== 'string' && typeof document.issuer !== 'string') return undefined;
  const jwksUri = typeof document.jwks_uri === 'string' ? ` or key: { jwksUri: ${quoted(document.jwks_uri)} }` : '';
  const issuer = typeof document.issuer === 'string' ? `issuerBaseURL: ${quoted(document.issuer)}` : 'issuerBaseURL';
  return new WrongDocumentError(
    'jwks-is-metadata',
    `key.jwksUri points at discovery metadata, not a JWKS; use ${issuer}${jwksUri}`,
  );
}

/**
 * A key set address that answered something other than a usable JWKS (a 404, an HTML page, JSON without `keys`):
 * reason `jwks-fetch`, and a hint saying which address (`named`: the option it comes from) answered what, and what
 * was expected; when the address reads as an issuer's base URL rather than a key set's, to give it as issuerBaseURL.
 */
export function notAKeySet(named: string, url: URL, answered: string, contentType: string | null): WrongDocumentError {
  const type = contentType === null || contentType === '' ? '' : ` (content-type ${quoted(contentType)})`;
  const base =
    named === 'key.jwksUri' && !looksLikeJwksPath(url)
      ? `; ${quoted(url.href)} reads as an issuer's base URL: give it as issuerBaseURL (discovery finds its key set), or key.jwksUri: its metadata's jwks_uri`
      : '';
  return new WrongDocumentError(
    'jwks-fetch',
    `${named} (${url.href}) answered ${answered}${type}, not a JWKS: expected JSON { "keys": [...] } with a signing key${base}`,
  );
}

/** A metadata fetch answered with a JWKS: the error to fail with, or undefined for any other document. */
export function jwksInsteadOfMetadata(document: unknown): WrongDocumentError | undefined {
  if (!isObject(document) || !Array.isArray(document.keys) || typeof document.issuer === 'string') return undefined;
  return new WrongDocumentError('discovery-is-jwks', USE_JWKS_URI);
}

/** The hint for an `iss` refusal by issuerBaseURL routing, when a configured base reads as a JWKS address. */
export function jwksBaseHint(bases: readonly URL[]): string | undefined {
  return bases.some(looksLikeJwksPath) ? USE_JWKS_URI : undefined;
}
