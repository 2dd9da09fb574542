// Upstream mode: the service's GET /auth/@users/verify answers for each new token (Shape B), behind the breaker.
import { shapeBViolation } from '../token/claims';
import { TokenAuthError } from '../base/errors';
import { fetchBounded, RemoteFetchError, type BoundedAnswer } from '../fetch/bounded-fetch';
import type { Duration } from '../base/duration';
import { CircuitBreaker, type BreakerConfig, type BreakerOptions } from './breaker';
import { DEFAULT_MAX_INFLIGHT, limitInflight } from './inflight';
import { DEFAULT_RETRY_AFTER, namedRetryAfter } from './retry-after';
import type { RemoteClaims, RemoteClaimsSource } from './source';
import { isObject } from '../base/values';

/** Upstream mode: tokens are checked by `{upstream}/auth/@users/verify` and the answers cached. */
export interface UpstreamKeyOption {
  upstream: string;
  /** Request timeout (default 5 s). */
  timeout?: Duration;
  /** Circuit breaker: fail fast after consecutive outages (default 5 failures, 5 s cooldown); `false` turns it off. */
  breaker?: BreakerOptions | false;
  /** Most upstream calls under way at once; new tokens beyond them get 503 at once, never a queue (default 100). */
  maxInflight?: number;
}

/** Largest upstream answer read (256 KiB); a Shape B payload is a few kilobytes. */
export const MAX_UPSTREAM_BYTES = 256 * 1024;

/** Path of the verify endpoint, relative to the upstream base address (the service's `{base_url}`). */
export const UPSTREAM_VERIFY_PATH = '/auth/@users/verify';

/** Resolved settings of the upstream source; durations in seconds. */
export interface UpstreamSourceConfig {
  /** The upstream base address (`{base_url}`), already checked by checkRemoteUrl. */
  base: URL;
  /** Limit for one call, body included. */
  timeout: number;
  /** Circuit breaker settings, or false for none. */
  breaker?: BreakerConfig | false;
  /**
   * Most calls under way at once; a new token beyond them is answered 503 at once (reason `upstream-busy`),
   * never queued: a hanging upstream holds this many sockets, not one per new token.
   */
  maxInflight?: number;
}

/** `{base}/auth/@users/verify`, keeping any path prefix the base carries. */
export function verifyEndpoint(base: URL): string {
  const root = new URL(base.href);
  root.pathname = root.pathname.replace(/\/+$/, '') + UPSTREAM_VERIFY_PATH;
  return root.href;
}

function unavailable(reason: string, retryAfter = DEFAULT_RETRY_AFTER, cause?: unknown): TokenAuthError {
  return new TokenAuthError('verification_unavailable', { reason, retryAfter, cause });
}

// RFC 6750 §3 scope-token characters: %x21 / %x23-5B / %x5D-7E, space-separated.
const SCOPE_LIST = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/;

/** The scopes an upstream 403 challenge names, if it names them in a form safe to repeat. */
function challengedScope(answer: BoundedAnswer): string | undefined {
  const challenge = answer.headers.get('www-authenticate');
  const scope = challenge === null ? undefined : /\bscope="([^"]*)"/.exec(challenge)?.[1];
  return scope !== undefined && SCOPE_LIST.test(scope) ? scope : undefined;
}

/**
 * `{ upstream }`: the token is checked by the identity service's own verify endpoint. Its 401 and 403 are
 * answers about the token and pass through (with our body); anything else that is not a 200 with a Shape B
 * payload — outage, timeout, 5xx, a redirect, other statuses, non-JSON, another shape — says nothing about the
 * token, so it becomes `verification_unavailable` (503), which the verifier never caches. The verifier then
 * applies this instance's time, issuer and audience rules to the payload.
 */
export function upstreamSource(config: UpstreamSourceConfig): RemoteClaimsSource {
  const endpoint = verifyEndpoint(config.base);
  const timeoutMs = config.timeout * 1000;
  const closing = new AbortController();
  const breaker =
    config.breaker === false || config.breaker === undefined ? undefined : new CircuitBreaker(config.breaker);
  // Only outages count against the upstream; a 401 or 403 is an answer, so it is alive.
  // An outage of the upstream, counted by the breaker. Not a 429 (the upstream is alive and limiting one client, whose
  // own answer carries its Retry-After) nor an answer of the wrong shape for one token: both are about that client
  // or token, and counting them would let one client open the breaker for everyone (its 429s for 300 s at a time).
  const isOutage = (err: unknown) =>
    err instanceof TokenAuthError &&
    err.code === 'verification_unavailable' &&
    err.reason !== 'upstream-status-429' &&
    err.reason?.startsWith('upstream-shape:') !== true;
  /** Outages whose answer (a 429 or 503) asked for a wait: each counts once; an opened breaker then stays open that long. */
  const demands = new WeakMap<object, number>();
  const demanded = (err: unknown) => (typeof err === 'object' && err !== null ? demands.get(err) : undefined);

  const ask = async (token: string): Promise<RemoteClaims> => {
    let answer: BoundedAnswer;
    try {
      answer = await fetchBounded(endpoint, {
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
        timeoutMs,
        maxBytes: MAX_UPSTREAM_BYTES,
        signal: closing.signal,
        kind: 'upstream',
      });
    } catch (err) {
      const failure = err instanceof RemoteFetchError ? err.failure : 'network';
      throw unavailable(`upstream-${failure}`, DEFAULT_RETRY_AFTER, err);
    }
    if (answer.status === 401) throw new TokenAuthError('invalid_token', { reason: 'upstream-401' });
    if (answer.status === 403) {
      throw new TokenAuthError('insufficient_scope', { reason: 'upstream-403', scope: challengedScope(answer) });
    }
    if (answer.status !== 200) {
      const named = namedRetryAfter(answer);
      const err = unavailable(`upstream-status-${answer.status}`, named ?? DEFAULT_RETRY_AFTER);
      if (named !== undefined && answer.status === 503) demands.set(err, named);
      throw err;
    }

    let payload: unknown;
    try {
      payload = JSON.parse(answer.text);
    } catch {
      throw unavailable('upstream-not-json');
    }
    if (!isObject(payload)) throw unavailable('upstream-not-object');
    const wrong = shapeBViolation(payload);
    if (wrong !== undefined) throw unavailable(`upstream-shape:${wrong}`);
    return { payload, size: answer.bytes };
  };

  const call = breaker === undefined ? ask : (token: string) => breaker.run(() => ask(token), isOutage, demanded);

  return {
    kind: 'remote',
    claimsFor: limitInflight(call, config.maxInflight ?? DEFAULT_MAX_INFLIGHT, 'upstream-busy'),
    breakerStats: breaker === undefined ? undefined : () => breaker.stats(),
    answerFault: shapeBViolation,
    // The verify endpoint (the base, its trailing slashes dropped) names this upstream for shared verdicts.
    identity: JSON.stringify(['upstream', endpoint]),
    timeout: config.timeout,
    close() {
      closing.abort();
    },
  };
}
