// How a remote server's answer counts, for every remote source (upstream, introspection, exchange): an outage, an
// answer about one token, or a throttle addressed to this client as a whole (docs/fleet.md, the breaker).
import { TokenAuthError } from '../base/errors';
import { RemoteFetchError, type BoundedAnswer } from '../fetch/bounded-fetch';
import { DEFAULT_RETRY_AFTER, namedRetryAfter, retryAfterOf } from './retry-after';

/**
 * - `outage`: unreachable, a timeout, a 5xx, a status no rule knows: 503, counted by the breaker.
 * - `token`: an answer about the one token asked about (a wrong shape, a 400 or 413 for that request): that token's
 *   fault, a 401, never an outage: one client's tokens must not open the breaker for everyone.
 * - `throttle`: a 429 (RFC 6585 §4): this client sent too many requests; its Retry-After holds every new call.
 */
export type AnswerClass = 'outage' | 'token' | 'throttle';

/** How a failure counts against its server: an outage (with the wait a 503 asked for), or a throttle's wait. */
export type Counted = { kind: 'outage'; demand: number | undefined } | { kind: 'throttle'; wait: number };

const counted = new WeakMap<TokenAuthError, Counted>();

/**
 * The class of a status other than 200 that a source has no rule of its own for: 400 (RFC 6749 §5.2: the request,
 * which is this token) and 413 (RFC 9110 §15.5.14: the request, this token, too large) are about the token; 429 is a
 * throttle; anything else (5xx, 3xx, 404, an unexpected status) is an outage.
 */
export function classOfStatus(status: number): AnswerClass {
  if (status === 400 || status === 413) return 'token';
  if (status === 429) return 'throttle';
  return 'outage';
}

/**
 * An outage: 503 `verification_unavailable` with `retryAfter`, counted by the breaker. `demand` is the wait the
 * server asked for with it (a 503's own Retry-After), which keeps the breaker open that long once it opens.
 */
export function outage(
  reason: string,
  options: { retryAfter?: number; demand?: number; cause?: unknown; hint?: string } = {},
): TokenAuthError {
  const err = new TokenAuthError('verification_unavailable', {
    reason,
    retryAfter: options.retryAfter ?? options.demand ?? DEFAULT_RETRY_AFTER,
    cause: options.cause,
    hint: options.hint,
  });
  counted.set(err, { kind: 'outage', demand: options.demand });
  return err;
}

/**
 * `err`, thrown on the way (the server's discovery or keys out of reach): a 503 is counted as an outage by the
 * breaker; anything else is handed back as it is.
 */
export function countAsOutage<E>(err: E): E {
  if (err instanceof TokenAuthError && err.code === 'verification_unavailable' && !counted.has(err))
    counted.set(err, { kind: 'outage', demand: undefined });
  return err;
}

/** An answer about this one token: 401 `invalid_token` (remembered `errorTtl` like any token fault), never an outage. */
export function aboutToken(reason: string, hint?: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason, hint });
}

/**
 * A throttle: 503 with the server's wait (`wait` seconds, already capped by retry-after.ts), which holds every new
 * call to that server until it has passed (remote/remote-call.ts).
 */
export function throttled(reason: string, wait: number): TokenAuthError {
  const err = new TokenAuthError('verification_unavailable', { reason, retryAfter: wait });
  counted.set(err, { kind: 'throttle', wait });
  return err;
}

/**
 * The failure of a status other than 200, by its class (`classOfStatus`), reason `{prefix}-status-{status}`: a 401
 * about the token, a throttle for the server's Retry-After (or the default), or an outage whose 503 Retry-After is
 * the breaker's demand.
 */
export function statusFailure(prefix: string, answer: BoundedAnswer): TokenAuthError {
  const reason = `${prefix}-status-${answer.status}`;
  switch (classOfStatus(answer.status)) {
    case 'token':
      return aboutToken(reason);
    case 'throttle':
      return throttled(reason, retryAfterOf(answer));
    default:
      return outage(reason, {
        retryAfter: retryAfterOf(answer),
        demand: answer.status === 503 ? namedRetryAfter(answer) : undefined,
      });
  }
}

/**
 * A call that gave no answer to read (`{prefix}-timeout`, `-network`, `-closed`): an outage. One exception: a 200
 * whose body is over the source's bound is an answer about this token (its claims too large), a 401.
 */
export function fetchFailure(prefix: string, err: unknown): TokenAuthError {
  const failure = err instanceof RemoteFetchError ? err.failure : 'network';
  if (failure === 'too-large' && err instanceof RemoteFetchError && err.status === 200)
    return aboutToken(`${prefix}-too-large`);
  return outage(`${prefix}-${failure}`, { cause: err });
}

/**
 * How a failure counts: an outage or a throttle made here, or undefined for anything else (an answer about a
 * token, an answer that cannot be believed, a refusal made with no call): the server answered, or was not asked.
 */
export function countedAs(err: unknown): Counted | undefined {
  return err instanceof TokenAuthError ? counted.get(err) : undefined;
}
