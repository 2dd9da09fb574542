// A transmitter's SSF configuration metadata (SSF 1.0 §7): found at the well-known path inserted after the host
// (§7.2), or appended to the issuer's path where Keycloak serves it; its issuer held to the configured one; its
// jwks_uri handed to the package's JWKS key source (keys/jwks.ts), which keeps the SET signing keys.
import { isObject, isStringArray } from '../base/values';
import { checkRemoteUrl, withoutTrailingSlash } from '../fetch/remote-url';
import { fetchWellKnown } from '../fetch/well-known';
import { DEFAULT_COOLDOWN } from '../keys';
import { jwksKeySource } from '../keys/jwks';
import { DiscoveryError } from '../keys/metadata';
import type { SigningKeySource } from '../keys/source';

/** Largest metadata document read (64 KiB). */
export const MAX_SSF_METADATA_BYTES = 64 * 1024;
/** How long metadata is used before it is read again (on the next need): a transmitter's endpoints rarely move. */
const METADATA_MAX_AGE = 3600;
/** Limit of one metadata read, and of one key set fetch after it. */
const METADATA_TIMEOUT = 5;

/** What the receiver reads from a transmitter's metadata (SSF 1.0 §7.1). */
export interface SsfMetadata {
  issuer: string;
  jwksUri: URL;
  configurationEndpoint: URL | undefined;
  verificationEndpoint: URL | undefined;
  deliveryMethods: readonly string[];
  /** `critical_subject_members`: complex subject members a receiver must act on or discard the event (§3.6). */
  criticalSubjectMembers: readonly string[];
}

/**
 * The two addresses of an issuer's metadata: SSF 1.0 §7.2 inserts `/.well-known/ssf-configuration` between the host
 * and the issuer's path; Keycloak (docs/continuous-access.md) publishes that form only at the web root and always
 * `{issuer}/.well-known/ssf-configuration`, tried when the first answers 404.
 */
export function ssfMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = withoutTrailingSlash(url.pathname);
  const inserted = `${url.origin}/.well-known/ssf-configuration${path}`;
  const appended = `${url.origin}${path}/.well-known/ssf-configuration`;
  return inserted === appended ? [inserted] : [inserted, appended];
}

function optionalUrl(value: unknown, name: string, allowInsecureHttp: boolean): URL | undefined {
  if (value === undefined) return undefined;
  try {
    return checkRemoteUrl(value, name, allowInsecureHttp);
  } catch {
    throw new DiscoveryError(`ssf-metadata-${name.replace(/_/g, '-')}`);
  }
}

/** Read and check one transmitter's metadata; rejects with a DiscoveryError (`reason` `ssf-metadata-…`). */
export async function fetchSsfMetadata(
  issuer: string,
  request: { deadline: number; signal: AbortSignal; allowInsecureHttp: boolean },
): Promise<SsfMetadata> {
  const { document } = await fetchWellKnown(ssfMetadataUrls(issuer), {
    ...request,
    kind: 'ssf',
    maxBytes: MAX_SSF_METADATA_BYTES,
    prefix: 'ssf-metadata',
    fail: (reason, cause) => new DiscoveryError(reason, cause),
  });
  if (!isObject(document)) throw new DiscoveryError('ssf-metadata-json');
  // §7.2.3: the issuer named must be the one asked for (give or take a trailing slash, as RFC 8414 §3.3 allows).
  if (typeof document.issuer !== 'string' || withoutTrailingSlash(document.issuer) !== withoutTrailingSlash(issuer))
    throw new DiscoveryError('ssf-metadata-issuer');
  const jwksUri = optionalUrl(document.jwks_uri, 'jwks_uri', request.allowInsecureHttp);
  if (jwksUri === undefined) throw new DiscoveryError('ssf-metadata-jwks-uri');
  const list = (value: unknown) => (isStringArray(value) ? value.slice(0, 64) : []);
  return {
    issuer: document.issuer,
    jwksUri,
    configurationEndpoint: optionalUrl(
      document.configuration_endpoint,
      'configuration_endpoint',
      request.allowInsecureHttp,
    ),
    verificationEndpoint: optionalUrl(
      document.verification_endpoint,
      'verification_endpoint',
      request.allowInsecureHttp,
    ),
    deliveryMethods: list(document.delivery_methods_supported),
    criticalSubjectMembers: list(document.critical_subject_members),
  };
}

/** A transmitter's metadata, read when first needed and again once an hour; the last one read serves meanwhile. */
export interface TransmitterMetadata {
  /** The metadata, read now if none is held or it is old; rejects when none can be had by `deadline`. */
  get(deadline?: number): Promise<SsfMetadata>;
  /** The last metadata read, if any (no waiting). */
  held(): SsfMetadata | undefined;
  /** The transmitter's SET signing keys: its jwks_uri through the JWKS key source (cooldown, caps, rotation). */
  readonly keys: SigningKeySource;
  close(): void;
}

/** The metadata and keys of the transmitter with `issuer`. */
export function transmitterMetadata(
  issuer: string,
  options: { clock: () => number; allowInsecureHttp: boolean; named: string },
): TransmitterMetadata {
  const closing = new AbortController();
  let held: { metadata: SsfMetadata; at: number } | undefined;
  let reading: Promise<SsfMetadata> | undefined;
  const read = (deadline: number) => {
    reading ??= fetchSsfMetadata(issuer, {
      deadline,
      signal: closing.signal,
      allowInsecureHttp: options.allowInsecureHttp,
    })
      .then((metadata) => {
        held = { metadata, at: options.clock() };
        return metadata;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const get = async (deadline = Date.now() + METADATA_TIMEOUT * 1000) => {
    if (held !== undefined && options.clock() - held.at < METADATA_MAX_AGE) return held.metadata;
    try {
      return await read(deadline);
    } catch (err) {
      // An old document is still the transmitter's best word: its keys keep verifying while the read fails.
      if (held !== undefined) return held.metadata;
      throw err;
    }
  };
  const keys = jwksKeySource({
    url: new URL(ssfMetadataUrls(issuer)[0]),
    cooldown: DEFAULT_COOLDOWN,
    timeout: METADATA_TIMEOUT * 2,
    algorithms: undefined,
    clock: options.clock,
    locate: async (deadline) => (await get(deadline)).jwksUri,
    named: `${options.named} (its jwks_uri)`,
  });
  return {
    get,
    held: () => held?.metadata,
    keys,
    close() {
      closing.abort();
      keys.close();
    },
  };
}
