// RFC 7662 token introspection as a remote claims source (docs/introspection.md): the token is asked about at the authorization
// server's introspection endpoint, like upstream mode asks its service, so shared verdicts and the breaker apply.
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { fetchBounded, RemoteFetchError, type BoundedAnswer } from '../fetch/bounded-fetch';
import { CircuitBreaker } from './breaker';
import { isDiscoverySource, type DiscoveredMetadata, type DiscoverySource } from '../keys/discovery';
import {
  INTROSPECTION_JWT_MEDIA_TYPE,
  readAnswer,
  readJsonAnswer,
  readSignedAnswer,
  unbelievable,
} from './introspection-answer';
import type { ResolvedIntrospection } from './introspection-options';
import { limitInflight } from './inflight';
import { checkRemoteUrl, withoutTrailingSlash } from '../fetch/remote-url';
import type { RemoteClaims, RemoteClaimsSource, TokenSource } from './source';
import { retryAfterOf } from './retry-after';

/** Largest introspection answer read (64 KiB); a real one is well under a kilobyte, a signed one a few. */
export const MAX_INTROSPECTION_BYTES = 64 * 1024;

/** What the introspection source needs besides its settings. */
export interface IntrospectionSourceConfig {
  settings: ResolvedIntrospection;
  /** The discovered authorization server: its metadata, and its keys (which check its signed answers). */
  server: DiscoverySource;
  clock: () => number;
  clockTolerance: number;
  allowInsecureHttp: boolean;
}

/** Where to ask: the configured endpoint, else the discovered one (which must pass the rule for remote URLs). */
function endpointOf(settings: ResolvedIntrospection, metadata: DiscoveredMetadata, allowInsecureHttp: boolean): string {
  if (settings.endpoint !== undefined) return settings.endpoint.href;
  // Known only once discovery answered: a server without the endpoint fails every introspection, loudly (onError).
  if (metadata.introspectionEndpoint === undefined) throw unbelievable('introspection-endpoint-missing');
  try {
    return checkRemoteUrl(metadata.introspectionEndpoint, 'introspection_endpoint', allowInsecureHttp).href;
  } catch {
    throw unbelievable('introspection-endpoint-invalid');
  }
}

/** RFC 9701 §6: the metadata lists the algorithms it signs answers with; we then ask for, and require, a JWT. */
function offersSignedAnswers(metadata: DiscoveredMetadata): boolean {
  const algs = metadata.introspectionSigningAlgs;
  return Array.isArray(algs) && algs.length > 0;
}

/** A status other than 200: only an `unsupported_token_type` is about the token; the rest is the AS or us. */
function refusal(answer: BoundedAnswer): TokenAuthError {
  if (answer.status === 400) {
    let error: unknown;
    try {
      const body: unknown = JSON.parse(answer.text);
      error = isObject(body) ? body.error : undefined;
    } catch {
      error = undefined;
    }
    if (error === 'unsupported_token_type')
      return new TokenAuthError('invalid_token', { reason: 'introspection-unsupported-token-type' });
  }
  // 401: our client credentials were refused (wrong secret or key, or aud): a configuration fault, never the token's.
  const reason = answer.status === 401 ? 'introspection-client-auth' : `introspection-status-${answer.status}`;
  return new TokenAuthError('verification_unavailable', { reason, retryAfter: retryAfterOf(answer) });
}

/**
 * `introspection`: each new token is POSTed to the introspection endpoint with this client's authentication,
 * asking for an RFC 9701 signed answer when the server offers one. `active: false` → 401 (cached `errorTtl` by the
 * verifier); `active: true` → the claims, which the verifier holds to every JWT rule. Outages, refusals of our
 * client and answers that cannot be believed → 503, never cached, counted by the breaker. Beyond
 * `maxInflight` calls under way a new token gets 503 `introspection-busy` at once, with no call.
 */
export function introspectionSource(config: IntrospectionSourceConfig): RemoteClaimsSource {
  const { settings, server, clock } = config;
  const timeoutMs = settings.timeout * 1000;
  const closing = new AbortController();
  const breaker = settings.breaker === false ? undefined : new CircuitBreaker(settings.breaker);
  // A server that lists no usable endpoint is a configuration fault, not an outage: no call is made, so the
  // breaker stays shut and every refusal keeps its own reason for onError.
  const isOutage = (err: unknown) =>
    err instanceof TokenAuthError &&
    err.code === 'verification_unavailable' &&
    err.reason !== 'introspection-endpoint-missing' &&
    err.reason !== 'introspection-endpoint-invalid';
  let issuer: string | undefined;
  const sameBase = (iss: unknown) =>
    typeof iss === 'string' && withoutTrailingSlash(iss) === withoutTrailingSlash(settings.server.base);

  const ask = async (token: string): Promise<RemoteClaims> => {
    const metadata = await server.metadata();
    issuer = metadata.issuer;
    const endpoint = endpointOf(settings, metadata, config.allowInsecureHttp);
    const signed = offersSignedAnswers(metadata);
    const form = new URLSearchParams({ token, token_type_hint: 'access_token' });
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: signed ? INTROSPECTION_JWT_MEDIA_TYPE : 'application/json',
    };
    settings.client.apply(form, headers, endpoint, clock());
    let answer: BoundedAnswer;
    try {
      answer = await fetchBounded(endpoint, {
        headers,
        body: form.toString(),
        timeoutMs,
        maxBytes: MAX_INTROSPECTION_BYTES,
        signal: closing.signal,
        kind: 'introspection',
        readErrorBody: true,
      });
    } catch (err) {
      const failure = err instanceof RemoteFetchError ? err.failure : 'network';
      throw new TokenAuthError('verification_unavailable', {
        reason: `introspection-${failure}`,
        retryAfter: 5,
        cause: err,
      });
    }
    if (answer.status !== 200) throw refusal(answer);
    let body: unknown;
    if (signed) {
      // Asked for a signed answer: anything else (plain JSON included) could be a downgrade on the path.
      const type = answer.headers.get('content-type')?.split(';')[0].trim().toLowerCase();
      if (type !== INTROSPECTION_JWT_MEDIA_TYPE) throw unbelievable('introspection-unsigned');
      body = await readSignedAnswer(answer.text, {
        issuer: metadata.issuer,
        clientId: settings.client.clientId,
        keys: server,
        now: clock(),
        clockTolerance: config.clockTolerance,
      });
    } else {
      body = readJsonAnswer(answer.text);
    }
    return { payload: readAnswer(body, metadata.issuer), size: answer.bytes };
  };

  return {
    kind: 'remote',
    // The cap stands outside the breaker: a busy refusal makes no call, so it is no outage.
    claimsFor: limitInflight(
      breaker === undefined ? ask : (token) => breaker.run(() => ask(token), isOutage),
      settings.maxInflight,
      'introspection-busy',
    ),
    breakerStats: breaker === undefined ? undefined : () => breaker.stats(),
    async ready() {
      const metadata = await server.metadata();
      try {
        endpointOf(settings, metadata, config.allowInsecureHttp);
      } catch (err) {
        const hint = `the metadata of ${settings.server.base} lists no usable introspection_endpoint: give option "introspection.endpoint"`;
        throw new TokenAuthError('verification_unavailable', {
          reason: (err as TokenAuthError).reason,
          hint,
          cause: err,
        });
      }
    },
    // The longest one call may take: a fleet's single-flight lock outlives it (verify/single-flight.ts).
    timeout: settings.timeout,
    // The server and who we are to it name whose verdicts these are, for shared verdicts (JSON: no NUL inside).
    identity: JSON.stringify(['introspection', withoutTrailingSlash(settings.server.base), settings.client.clientId]),
    // A verdict read back from a fleet store (perhaps before this instance discovered anything): its `iss`, if
    // any, is this server's: the discovered issuer, or before discovery the configured base, give or take its slash.
    answerFault: (payload) =>
      payload.iss === undefined || payload.iss === issuer || (issuer === undefined && sameBase(payload.iss))
        ? undefined
        : 'iss',
    close() {
      closing.abort();
    },
  };
}

/** What the composition hands over to build the introspection source. */
export interface IntrospectionContext {
  clock: () => number;
  clockTolerance: number;
  allowInsecureHttp: boolean;
}

/** The introspection source of the resolved `introspection` option over the discovery source `keys`, if configured. */
export function createIntrospectionSource(
  settings: ResolvedIntrospection | undefined,
  keys: TokenSource,
  context: IntrospectionContext,
): RemoteClaimsSource | undefined {
  if (settings === undefined) return undefined;
  // resolveOptions let `introspection` through only with `issuerBaseURL`, whose key source is a discovery one.
  if (!isDiscoverySource(keys)) throw new Error('express-verified-user: introspection built without discovery');
  return introspectionSource({ settings, server: keys, ...context });
}
