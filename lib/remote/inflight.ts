// A cap on remote calls under way at once (upstream mode, introspection, exchange): a new token beyond it is answered 503 at
// once, never queued, so a hanging server holds at most this many sockets, not one per new token.
import { TokenAuthError } from '../base/errors';
import { positiveInteger } from '../base/option-checks';

/** Default most calls under way at once (`key.maxInflight`, `introspection.maxInflight`). */
export const DEFAULT_MAX_INFLIGHT = 100;

/** `maxInflight` as given (a positive integer), or undefined when absent; an OptionError at `name` otherwise. */
export function resolveMaxInflight(value: unknown, name: string): number | undefined {
  return positiveInteger(value, name, undefined);
}

/**
 * `call`, counted: beyond `max` calls under way, a call is refused at once with a 503 `verification_unavailable`
 * (reason `busy`, Retry-After 1) and never made. The refusal happens outside any breaker `call` runs behind, so it
 * is not an outage, and as a 503 the verifier never caches it.
 */
export function limitInflight<T, A = string>(
  call: (token: A) => Promise<T>,
  max: number,
  busy: string,
): (token: A) => Promise<T> {
  let inflight = 0;
  return (token) => {
    if (inflight >= max)
      return Promise.reject(new TokenAuthError('verification_unavailable', { reason: busy, retryAfter: 1 }));
    inflight++;
    let pending: Promise<T>;
    try {
      pending = call(token);
    } catch (err) {
      inflight--;
      return Promise.reject(err);
    }
    return pending.finally(() => inflight--);
  };
}
