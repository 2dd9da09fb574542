// The `introspection` and `introspect` options (docs/introspection.md): who we are at the authorization server, where its
// introspection endpoint is, and which tokens are asked about. Checked once, at createTokenAuth.
import { positiveDuration, type Duration } from '../base/duration';
import { knownFields, type FieldList } from '../base/option-checks';
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';
import { resolveBreaker, type BreakerConfig, type BreakerOptions } from './breaker';
import { CLIENT_FIELDS, resolveClientAuth, type ClientAuth, type ClientCredentials } from './client-auth';
import type { IssuerBase } from '../keys/discovery-options';
import { DEFAULT_MAX_INFLIGHT, resolveMaxInflight } from './inflight';
import { checkRemoteUrl } from '../fetch/remote-url';

/** `introspection`: RFC 7662 token introspection at the authorization server named by `issuerBaseURL`. */
export interface IntrospectionOptions extends ClientCredentials {
  /** The introspection endpoint; default: `introspection_endpoint` of the discovered metadata. */
  endpoint?: string;
  /** Limit of one call, body included (default 5 s). */
  timeout?: Duration;
  /** Circuit breaker: fail fast after consecutive outages (default 5 failures, 5 s cooldown); `false` turns it off. */
  breaker?: BreakerOptions | false;
  /** Most calls under way at once (default 100); a new token beyond them is answered 503 at once, never queued. */
  maxInflight?: number;
  /**
   * RFC 9701 signed answers: `'preferred'` (default) asks for one when the server offers them and accepts plain JSON
   * too (TLS already authenticates the server); `'required'` refuses any other answer; `false` never asks.
   */
  signed?: SignedIntrospection;
}

/** `introspection.signed`: whether RFC 9701 signed answers are asked for, and whether they are required. */
export type SignedIntrospection = 'required' | 'preferred' | false;

/** `introspect`: `'opaque'` (default) introspects every token but the JWTs of the configured issuer; `'always'` every token. */
export type IntrospectMode = 'opaque' | 'always';

/** The introspection settings after validation; durations in seconds. */
export interface ResolvedIntrospection {
  client: ClientAuth;
  /** The configured endpoint, or undefined to take the discovered one. */
  endpoint: URL | undefined;
  timeout: number;
  breaker: BreakerConfig | false;
  maxInflight: number;
  mode: IntrospectMode;
  /** The authorization server: its base URL, whose discovered issuer answers and signs. */
  server: IssuerBase;
  signed: SignedIntrospection;
  /**
   * Who this resource server is, for a signed answer's `aud` (RFC 9701 §5): `clientId`, then the configured
   * `audience` and `resource`.
   */
  audiences: readonly string[];
}

const FIELDS: FieldList<IntrospectionOptions> = {
  ...CLIENT_FIELDS,
  endpoint: true,
  timeout: true,
  breaker: true,
  maxInflight: true,
  signed: true,
};
const DEFAULT_TIMEOUT = 5;
const SIGNED: readonly SignedIntrospection[] = ['required', 'preferred', false];

/** The resource server's own names besides its client id: the `audience` strings and the `resource`. */
function namesOf(audience: unknown, resource: unknown): string[] {
  const names = [...(Array.isArray(audience) ? audience : [audience]), resource];
  return names.filter((name): name is string => typeof name === 'string' && name !== '');
}

/**
 * Validate `introspection` and `introspect` (a TypeError naming the option for anything wrong). Introspection
 * needs exactly one `issuerBaseURL`: the server whose issuer, keys (for its own JWTs and its signed answers) and
 * introspection endpoint are discovered. Undefined when `introspection` is absent.
 */
export function resolveIntrospection(
  input: { introspection?: unknown; introspect?: unknown; audience?: unknown; resource?: unknown },
  issuerBaseURL: readonly IssuerBase[] | undefined,
  allowInsecureHttp: boolean,
): ResolvedIntrospection | undefined {
  const value = input.introspection;
  if (value === undefined) {
    if (input.introspect !== undefined)
      optionError('introspect', 'option "introspect" applies only with option "introspection"');
    return undefined;
  }
  if (!isObject(value))
    optionError(
      'introspection',
      'option "introspection" must be an object ({ clientId, clientSecret } or { clientId, privateKey })',
    );
  knownFields(value, FIELDS, 'introspection');
  const mode = input.introspect ?? 'opaque';
  if (mode !== 'opaque' && mode !== 'always')
    optionError('introspect', `option "introspect" must be 'opaque' or 'always'`);
  if (issuerBaseURL === undefined) {
    optionError(
      'introspection',
      'option "introspection" needs option "issuerBaseURL": the authorization server whose issuer, keys and introspection_endpoint are discovered',
    );
  }
  if (issuerBaseURL.length !== 1)
    optionError(
      'introspection',
      'option "introspection" applies to one authorization server: "issuerBaseURL" must name exactly one',
    );
  const client = resolveClientAuth(value, 'introspection');
  const timeout = positiveDuration(value.timeout, 'introspection.timeout', DEFAULT_TIMEOUT);
  const endpoint =
    value.endpoint === undefined
      ? undefined
      : checkRemoteUrl(value.endpoint, 'introspection.endpoint', allowInsecureHttp);
  const maxInflight = resolveMaxInflight(value.maxInflight, 'introspection.maxInflight') ?? DEFAULT_MAX_INFLIGHT;
  const breaker = resolveBreaker(value.breaker, 'introspection.breaker');
  const signed = value.signed ?? 'preferred';
  if (!SIGNED.includes(signed as SignedIntrospection))
    optionError('introspection.signed', `option "introspection.signed" must be 'required', 'preferred' or false`);
  const audiences = [...new Set([client.clientId, ...namesOf(input.audience, input.resource)])];
  return {
    client,
    endpoint,
    timeout,
    breaker,
    maxInflight,
    mode,
    server: issuerBaseURL[0],
    signed: signed as SignedIntrospection,
    audiences,
  };
}
