// What stands between a new token and a remote server, for every remote source: the server's own 429 wait, the cap
// on calls under way, and the circuit breaker, each failure counted by its class (remote/answer-class.ts).
import { TokenAuthError } from '../base/errors';
import { CircuitBreaker, SLOW_CALL_FRACTION, type BreakerConfig, type BreakerStats } from './breaker';
import { countedAs } from './answer-class';
import { limitInflight } from './inflight';

/** How one remote source's calls are guarded. */
export interface RemoteCallSettings {
  /** Names the source in refusals' reasons: `{prefix}-busy`, `{prefix}-throttled`. */
  prefix: string;
  /** The breaker's settings, or false for none. */
  breaker: BreakerConfig | false;
  /** Most calls under way at once. */
  maxInflight: number;
  /** The limit of one call, in seconds: a call under way for a tenth of it with no answer meanwhile is slow. */
  timeout: number;
}

/** A remote source's call, guarded, and the state of its breaker. */
export interface GuardedCall<T, A = string> {
  call(arg: A): Promise<T>;
  breakerStats: (() => BreakerStats) | undefined;
}

/**
 * Guard `ask` (one call about one token). In order: while a wait a 429 asked for lasts (RFC 6585 §4: this client
 * sent too many requests, so the wait is for every token, capped by retry-after.ts), a new token is refused at
 * once, 503 `{prefix}-throttled` with the time that is left; beyond `maxInflight` calls under way it is refused at
 * once, 503 `{prefix}-busy`; then the breaker, which counts outages only. None of these refusals makes a call, is
 * cached, or counts as an outage; tokens already cached never reach here.
 */
export function guardRemoteCall<T, A = string>(
  ask: (arg: A) => Promise<T>,
  settings: RemoteCallSettings,
  now: () => number = Date.now,
): GuardedCall<T, A> {
  const breaker =
    settings.breaker === false
      ? undefined
      : new CircuitBreaker(settings.breaker, now, settings.timeout * 1000 * SLOW_CALL_FRACTION);
  let heldUntil = 0;
  const isOutage = (err: unknown) => countedAs(err)?.kind === 'outage';
  const demanded = (err: unknown) => {
    const counted = countedAs(err);
    return counted?.kind === 'outage' ? counted.demand : undefined;
  };
  const hold = (err: unknown) => {
    const counted = countedAs(err);
    if (counted?.kind === 'throttle') heldUntil = Math.max(heldUntil, now() + counted.wait * 1000);
    throw err;
  };
  const asked = (arg: A) => ask(arg).catch(hold);
  const counted = breaker === undefined ? asked : (arg: A) => breaker.run(() => asked(arg), isOutage, demanded);
  const capped = limitInflight(counted, settings.maxInflight, `${settings.prefix}-busy`);
  return {
    call(arg) {
      const left = heldUntil - now();
      if (left > 0) {
        const retryAfter = Math.ceil(left / 1000);
        return Promise.reject(
          new TokenAuthError('verification_unavailable', { reason: `${settings.prefix}-throttled`, retryAfter }),
        );
      }
      return capped(arg);
    },
    breakerStats: breaker === undefined ? undefined : () => breaker.stats(),
  };
}
