// A circuit breaker for a remote verifier: after consecutive outages it fails fast with 503 + Retry-After.
import { positiveDuration, type Duration } from '../base/duration';
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { knownFields, positiveInteger, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';

/**
 * A circuit breaker for a remote dependency (docs/fleet.md): after `failures` outages in a row it opens, and
 * calls are refused at once with 503 `verification_unavailable` (reason `breaker-open`) and a `Retry-After`,
 * instead of each new token waiting the whole fetch timeout. After `cooldown` it lets one probe through at a time
 * (half-open); the first success closes it, a failed probe opens it for another `cooldown`. A `Retry-After` the
 * remote sends with an outage is one failure like any other; once the breaker opens, it stays open for the longest
 * such wait the failures that opened it asked for (see `run`).
 *
 * Slow calls: when `failures` calls have been under way for `slowAfter` (a tenth of the remote's timeout) and none
 * has been answered meanwhile, it opens before any of them has timed out, so that a hanging remote holds a handful
 * of callers for the whole timeout, not every caller of that timeout's span. The first answer closes it again.
 *
 * Remote-agnostic: every remote source's calls run through it (remote/remote-call.ts), counting only outages (not
 * answers about a token, nor throttles: remote/answer-class.ts) as failures.
 */

/** `breaker` option: `false` turns it off. */
export interface BreakerOptions {
  /** Outages in a row that open the breaker (default 5). */
  failures?: number;
  /** How long it stays open before letting a probe through (default 5 s). */
  cooldown?: Duration;
}

/** Resolved breaker settings; `cooldown` in seconds. */
export interface BreakerConfig {
  failures: number;
  cooldown: number;
}

/** The breaker's state, for `stats()`. */
export interface BreakerStats {
  /** `closed`: calls pass; `open`: refused at once; `half-open`: one probe is allowed through. */
  state: 'closed' | 'open' | 'half-open';
  /** Outages in a row so far. */
  failures: number;
  /** When it last opened (milliseconds since the epoch), or undefined while it never has. */
  openedAt: number | undefined;
}

const DEFAULTS: BreakerConfig = { failures: 5, cooldown: 5 };

const BREAKER_FIELDS: FieldList<BreakerOptions> = { failures: true, cooldown: true };

/** Validate a `breaker` option at set-up (`name` is its path, e.g. `key.breaker`); `false` → no breaker. */
export function resolveBreaker(value: unknown, name: string): BreakerConfig | false {
  if (value === false) return false;
  if (value === undefined) return DEFAULTS;
  if (!isObject(value)) optionError(name, `option "${name}" must be an object or false`);
  knownFields(value, BREAKER_FIELDS, name);
  return {
    failures: positiveInteger(value.failures, `${name}.failures`, DEFAULTS.failures),
    cooldown: positiveDuration(value.cooldown, `${name}.cooldown`, DEFAULTS.cooldown),
  };
}

/** The fraction of a remote's timeout after which calls under way with no answer count as slow. */
export const SLOW_CALL_FRACTION = 0.1;

/** One breaker guarding one remote dependency. */
export class CircuitBreaker {
  private failures = 0;
  private openedAt: number | undefined;
  private open = false;
  private probing = false;
  /** While open: no probe before this moment (milliseconds since the epoch). */
  private openUntil = 0;
  /** While open, the end of a wait the remote itself asked for (`Retry-After`): nothing closes the breaker before it. */
  private holdUntil = 0;
  /** The end of the longest wait asked for by the outages of the current run (0: none); applied once it opens. */
  private demandedUntil = 0;
  /** When each call under way started (milliseconds), oldest first. */
  private readonly underway = new Map<object, number>();
  /** When a call was last answered (anything but an outage), or -Infinity while none has been. */
  private answeredAt = -Infinity;

  /**
   * `slowAfter`: milliseconds after which a call under way counts as slow (none: no slow-call rule); a tenth of
   * the remote's timeout (`SLOW_CALL_FRACTION`) by the sources.
   */
  constructor(
    private readonly config: BreakerConfig,
    private readonly now: () => number = Date.now,
    private readonly slowAfter?: number,
  ) {}

  /**
   * Run `call` unless the breaker refuses it. `isOutage(err)` tells which failures count against the remote (a
   * timeout, a 5xx) and which are answers (a 401 about a token: the remote is up). `demanded(err)`, when given,
   * is the wait in seconds the remote asked for with that failure (a 503 with `Retry-After`). Such a failure
   * counts once, like any outage: one answer (perhaps about one abusive client) never opens the breaker for
   * everyone. When the breaker opens, or a failure finds it open, it stays open until the end of the longest wait
   * the failures of that run asked for (or the cooldown, if longer), lets no probe through before, and tells every
   * refused call the time that is left of it.
   */
  async run<T>(
    call: () => Promise<T>,
    isOutage: (err: unknown) => boolean,
    demanded?: (err: unknown) => number | undefined,
  ): Promise<T> {
    let probe = false;
    if (!this.open && this.callsAreSlow()) this.openFor(this.now(), this.config.cooldown * 1000);
    if (this.open) {
      const left = this.openUntil - this.now();
      if (left > 0) throw refused(left);
      if (this.probing) throw refused(1000);
      this.probing = true;
      probe = true;
    }
    const handle = {};
    this.underway.set(handle, this.now());
    try {
      const result = await call();
      this.succeeded();
      return result;
    } catch (err) {
      if (isOutage(err)) this.failed(demanded?.(err));
      else this.succeeded();
      throw err;
    } finally {
      this.underway.delete(handle);
      if (probe) this.probing = false;
    }
  }

  stats(): BreakerStats {
    const state = !this.open ? 'closed' : this.probing || this.now() >= this.openUntil ? 'half-open' : 'open';
    return { state, failures: this.failures, openedAt: this.openedAt };
  }

  /** `failures` calls under way for `slowAfter` or longer, and no answer for as long: the remote hangs. */
  private callsAreSlow(): boolean {
    if (this.slowAfter === undefined || this.underway.size < this.config.failures) return false;
    const since = this.now() - this.slowAfter;
    if (this.answeredAt > since) return false;
    let slow = 0;
    // Oldest first: stop at the first call younger than `slowAfter`.
    for (const started of this.underway.values()) {
      if (started > since) break;
      if (++slow >= this.config.failures) return true;
    }
    return false;
  }

  private openFor(now: number, ms: number): void {
    this.open = true;
    this.openedAt = now;
    this.openUntil = Math.max(this.openUntil, now + ms);
  }

  private succeeded(): void {
    this.answeredAt = this.now();
    this.failures = 0;
    this.demandedUntil = 0;
    // A call that was under way before the remote asked for a wait does not cut the wait short.
    if (this.now() >= this.holdUntil) this.open = false;
  }

  private failed(demand: number | undefined): void {
    this.failures++;
    const now = this.now();
    if (demand !== undefined) this.demandedUntil = Math.max(this.demandedUntil, now + demand * 1000);
    // A failed probe or the threshold reached: (re)open for the cooldown or the longest wait this run of outages
    // asked for, never for less than is left. A wait asked for alone, below the threshold, opens nothing.
    if (this.open || this.failures >= this.config.failures) {
      this.holdUntil = Math.max(this.holdUntil, this.demandedUntil);
      this.openFor(now, Math.max(this.config.cooldown * 1000, this.holdUntil - now));
    }
  }
}

function refused(leftMs: number): TokenAuthError {
  return new TokenAuthError('verification_unavailable', {
    reason: 'breaker-open',
    retryAfter: Math.max(1, Math.ceil(leftMs / 1000)),
  });
}
