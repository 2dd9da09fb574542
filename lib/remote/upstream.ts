// Upstream mode: the service's GET /auth/@users/verify answers for each new token (Shape B), behind the breaker.
import { shapeBViolation } from '../token/claims';
import { TokenAuthError } from '../base/errors';
import { fetchBounded, type BoundedAnswer } from '../fetch/bounded-fetch';
import type { Duration } from '../base/duration';
import type { BreakerConfig, BreakerOptions } from './breaker';
import { aboutToken, fetchFailure, statusFailure } from './answer-class';
import { DEFAULT_MAX_INFLIGHT } from './inflight';
import { guardRemoteCall } from './remote-call';
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
 * answers about the token and pass through (with our body); so is any other answer about this one token (a 400 or
 * 413, a 200 that is not a Shape B payload: remote/answer-class.ts), a 401. A 429 holds every new token's call for
 * its Retry-After; the rest (unreachable, a timeout, a 5xx, a redirect, another status) is an outage: 503, counted
 * by the breaker, never cached. The verifier then applies this instance's time, issuer and audience rules to the
 * payload.
 */
export function upstreamSource(config: UpstreamSourceConfig): RemoteClaimsSource {
  const endpoint = verifyEndpoint(config.base);
  const timeoutMs = config.timeout * 1000;
  const closing = new AbortController();

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
      throw fetchFailure('upstream', err);
    }
    if (answer.status === 401) throw new TokenAuthError('invalid_token', { reason: 'upstream-401' });
    if (answer.status === 403) {
      throw new TokenAuthError('insufficient_scope', { reason: 'upstream-403', scope: challengedScope(answer) });
    }
    if (answer.status !== 200) throw statusFailure('upstream', answer);

    let payload: unknown;
    try {
      payload = JSON.parse(answer.text);
    } catch {
      throw aboutToken('upstream-not-json');
    }
    if (!isObject(payload)) throw aboutToken('upstream-not-object');
    const wrong = shapeBViolation(payload);
    if (wrong !== undefined) throw aboutToken(`upstream-shape:${wrong}`);
    return { payload, size: answer.bytes };
  };

  const guarded = guardRemoteCall(ask, {
    prefix: 'upstream',
    breaker: config.breaker ?? false,
    maxInflight: config.maxInflight ?? DEFAULT_MAX_INFLIGHT,
    timeout: config.timeout,
  });

  return {
    kind: 'remote',
    claimsFor: guarded.call,
    breakerStats: guarded.breakerStats,
    answerFault: shapeBViolation,
    // The verify endpoint (the base, its trailing slashes dropped) names this upstream for shared verdicts.
    identity: JSON.stringify(['upstream', endpoint]),
    timeout: config.timeout,
    close() {
      closing.abort();
    },
  };
}
