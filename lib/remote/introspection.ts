// RFC 7662 token introspection as a remote claims source (docs/introspection.md): the token is asked about at the authorization
// server's introspection endpoint, like upstream mode asks its service, so shared verdicts and the breaker apply.
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { fetchBounded, type BoundedAnswer } from '../fetch/bounded-fetch';
import { isDiscoverySource, type DiscoveredMetadata, type DiscoverySource } from '../keys/discovery';
import { countAsOutage, fetchFailure, outage, statusFailure } from './answer-class';
import { AnswerMemory, digestOf } from './answer-memory';
import {
  INTROSPECTION_JWT_MEDIA_TYPE,
  readAnswer,
  readJsonAnswer,
  readSignedAnswer,
  unbelievable,
} from './introspection-answer';
import type { ResolvedIntrospection } from './introspection-options';
import { guardRemoteCall } from './remote-call';
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

/**
 * The Accept header of `introspection.signed`: RFC 9701 asks for a JWT with its media type; for `'preferred'` only
 * when the metadata lists `introspection_signing_alg_values_supported`, plain JSON welcome too; always and alone for
 * `'required'`; never for `false`.
 */
function acceptOf(signed: ResolvedIntrospection['signed'], metadata: DiscoveredMetadata): string {
  if (signed === 'required') return INTROSPECTION_JWT_MEDIA_TYPE;
  const offered = Array.isArray(metadata.introspectionSigningAlgs) && metadata.introspectionSigningAlgs.length > 0;
  return signed === 'preferred' && offered
    ? `${INTROSPECTION_JWT_MEDIA_TYPE}, application/json;q=0.5`
    : 'application/json';
}

/** The `error` of an OAuth error answer (RFC 6749 §5.2), if its body is one. */
function oauthError(answer: BoundedAnswer): unknown {
  try {
    const body: unknown = JSON.parse(answer.text);
    return isObject(body) ? body.error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A status other than 200. `unsupported_token_type` is about the token (401); our client authentication refused
 * (a 401, or RFC 6749 §5.2's `invalid_client` and `unauthorized_client`, which may come as a 400) is this app's
 * configuration, a fault for every token: an outage. The rest goes by its class (remote/answer-class.ts): another
 * 400 or a 413 about this token, a 429 a throttle, anything else an outage.
 */
function refusal(answer: BoundedAnswer): TokenAuthError {
  const error = oauthError(answer);
  if (answer.status === 400 && error === 'unsupported_token_type')
    return new TokenAuthError('invalid_token', { reason: 'introspection-unsupported-token-type' });
  if (
    answer.status === 401 ||
    (answer.status === 400 && (error === 'invalid_client' || error === 'unauthorized_client'))
  )
    return outage('introspection-client-auth', { retryAfter: retryAfterOf(answer) });
  return statusFailure('introspection', answer);
}

/**
 * `introspection`: each new token is POSTed to the introspection endpoint with this client's authentication,
 * asking for an RFC 9701 signed answer as `introspection.signed` says. `active: false` → 401 (cached `errorTtl` by
 * the verifier); `active: true` → the claims, which the verifier holds to every JWT rule. How each other answer
 * counts (an outage, an answer about this token, a throttle) is remote/answer-class.ts's rule; answers that cannot
 * be believed and refusals of our client → 503, never cached. A signed answer is believed only within the call's
 * window (`timeout` + `clockTolerance`, by its `iat`), and with `signed: 'required'` about one token only
 * (remote/answer-memory.ts).
 */
export function introspectionSource(config: IntrospectionSourceConfig): RemoteClaimsSource {
  const { settings, server, clock } = config;
  const timeoutMs = settings.timeout * 1000;
  const window = settings.timeout + config.clockTolerance;
  const closing = new AbortController();
  // Single use is what 'required' promises: 'preferred' believes whatever plain JSON the same path sends, so a
  // signed answer repeated about another token is believed as that plain answer would be. Legitimately repeated
  // answers (two tokens with the same claims asked about in one second: RS256 is deterministic, and they name no
  // jti) then cost no second call, which had broken one call per new token (docs/fleet.md).
  const memory = settings.signed === 'required' ? new AnswerMemory() : undefined;
  let issuer: string | undefined;
  const sameBase = (iss: unknown) =>
    typeof iss === 'string' && withoutTrailingSlash(iss) === withoutTrailingSlash(settings.server.base);

  const metadataOf = async (): Promise<DiscoveredMetadata> => {
    try {
      return await server.metadata();
    } catch (err) {
      throw countAsOutage(err);
    }
  };

  /** POST the token, asking for `accept`: the 200 answer, or its refusal. */
  const post = async (token: string, endpoint: string, accept: string): Promise<BoundedAnswer> => {
    const form = new URLSearchParams({ token, token_type_hint: 'access_token' });
    const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: accept };
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
      throw fetchFailure('introspection', err);
    }
    if (answer.status !== 200) throw refusal(answer);
    return answer;
  };

  /**
   * The claims of a 200 answer, signed (RFC 9701: believed within the window, and with 'required' about one token
   * only) or, unless signed answers are required, plain JSON.
   */
  const read = async (answer: BoundedAnswer, token: string, signer: string): Promise<RemoteClaims> => {
    const type = answer.headers.get('content-type')?.split(';')[0].trim().toLowerCase();
    if (type !== INTROSPECTION_JWT_MEDIA_TYPE) {
      // Only a signed answer will do: plain JSON could be a downgrade on the path, or a client not registered for them.
      if (settings.signed === 'required')
        throw unbelievable('introspection-unsigned', {
          hint: "introspection.signed is 'required' and the answer was not an RFC 9701 JWT",
        });
      return { payload: readAnswer(readJsonAnswer(answer.text), signer), size: answer.bytes };
    }
    const { clockTolerance } = config;
    const context = {
      issuer: signer,
      audiences: settings.audiences,
      keys: server,
      now: clock(),
      clockTolerance,
      window,
    };
    const signed = await readSignedAnswer(answer.text, context).catch((err: unknown) => {
      // The AS's keys out of reach is an outage; any other refusal of the answer is not.
      throw err instanceof TokenAuthError && err.reason?.startsWith('introspection-jwt-') === true
        ? err
        : countAsOutage(err);
    });
    const payload = readAnswer(signed.answer, signer);
    // The very answer believed about another token: a replay, or an AS whose answers name nothing of the token
    // (no `jti`) answering two tokens with the same claims in the same second; refused (503, Retry-After 1: the
    // next second's answer differs).
    if (
      memory !== undefined &&
      !memory.claim(digestOf(answer.text.trim()), digestOf(token), signed.iat + window, clock())
    )
      throw unbelievable('introspection-jwt-replayed', { retryAfter: 1 });
    return { payload, size: answer.bytes };
  };

  const ask = async (token: string): Promise<RemoteClaims> => {
    const metadata = await metadataOf();
    issuer = metadata.issuer;
    const endpoint = endpointOf(settings, metadata, config.allowInsecureHttp);
    return read(await post(token, endpoint, acceptOf(settings.signed, metadata)), token, metadata.issuer);
  };

  const guarded = guardRemoteCall(ask, {
    prefix: 'introspection',
    breaker: settings.breaker,
    maxInflight: settings.maxInflight,
    timeout: settings.timeout,
  });

  return {
    kind: 'remote',
    claimsFor: guarded.call,
    breakerStats: guarded.breakerStats,
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
