// How long a remote server asks us to wait (its Retry-After), bounded, for the 503s of every remote source.
import type { BoundedAnswer } from '../fetch/bounded-fetch';

/** Retry-After (seconds) on a remote failure that names none of its own. */
export const DEFAULT_RETRY_AFTER = 5;

/**
 * Longest wait a server's own Retry-After may set (seconds): what a 503 keeps the breaker open for, and how long a
 * 429 holds every new call (remote/remote-call.ts).
 */
export const LONGEST_RETRY_AFTER = 300;

/** The server's own Retry-After when it is a sane number of seconds; an HTTP date or nonsense is ignored. */
export function namedRetryAfter(answer: BoundedAnswer): number | undefined {
  const value = answer.headers.get('retry-after');
  if (value === null || !/^\d{1,6}$/.test(value.trim())) return undefined;
  return Math.min(Math.max(Number(value), 1), LONGEST_RETRY_AFTER);
}

/** The server's own Retry-After, else the default. */
export function retryAfterOf(answer: BoundedAnswer): number {
  return namedRetryAfter(answer) ?? DEFAULT_RETRY_AFTER;
}
