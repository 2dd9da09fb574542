// What became of each SET and logout token: its outcome, counted per transmitter for `events.stats()`, published
// on the diagnostics channel and the NODE_DEBUG line, and handed to `onError` when it is a failure to look at.
import { TokenAuthError } from '../base/errors';
import { publishSecurityEvent } from '../observe/security-events';
import type { SetErrorCode } from './set';

/** An event handled and answered 202 / acknowledged, and what it did. */
export type AcceptedOutcome =
  'applied' | 'no-rule' | 'ignored' | 'subject-unmapped' | 'replayed' | 'verified' | 'verification' | 'stream-updated';

/** What became of one SET or logout token. */
export type Outcome = { eventType?: string; subjectFormat?: string } & (
  | { status: 'accepted'; outcome: AcceptedOutcome; rules: number }
  | { status: 'refused'; err: SetErrorCode; reason: string }
  | { status: 'unavailable'; error: TokenAuthError }
);

/** Counters of one transmitter (or of Back-Channel Logout). */
export interface EventCounts {
  /** SETs or logout tokens received (delivered by push, by poll, or POSTed). */
  received: number;
  /** Those whose rules were stored. */
  applied: number;
  /** Those acknowledged without a rule: no rule needed, an event type ignored, a subject the rules cannot name. */
  ignored: number;
  /** Those whose `jti` was seen before: acknowledged, nothing changed. */
  replayed: number;
  /** Refused, by reason (`set-signature`, `set-audience`, `logout-nonce`, …). */
  refused: Record<string, number>;
  /** Not stored now (the store full or unreachable, the keys out of reach): answered 503 or left unacknowledged. */
  unavailable: number;
  /** When the last one was received (seconds since the epoch), if any. */
  lastEventAt: number | undefined;
}

/** The counters of one source of events. */
export class EventBook {
  private readonly counts: EventCounts = {
    received: 0,
    applied: 0,
    ignored: 0,
    replayed: 0,
    refused: {},
    unavailable: 0,
    lastEventAt: undefined,
  };

  record(outcome: Outcome, now: number): void {
    const counts = this.counts;
    counts.received++;
    counts.lastEventAt = now;
    if (outcome.status === 'refused') counts.refused[outcome.reason] = (counts.refused[outcome.reason] ?? 0) + 1;
    else if (outcome.status === 'unavailable') counts.unavailable++;
    else if (outcome.outcome === 'applied') counts.applied++;
    else if (outcome.outcome === 'replayed') counts.replayed++;
    else counts.ignored++;
  }

  snapshot(): EventCounts {
    return { ...this.counts, refused: { ...this.counts.refused } };
  }
}

/** The failure `onError` gets for an outcome worth a look, or undefined: refusals, outages, unmapped subjects. */
function failureOf(outcome: Outcome): TokenAuthError | undefined {
  if (outcome.status === 'unavailable') return outcome.error;
  if (outcome.status === 'refused')
    return new TokenAuthError('invalid_request', { reason: outcome.reason, hint: `answered ${outcome.err}` });
  if (outcome.outcome === 'subject-unmapped')
    return new TokenAuthError('invalid_request', {
      reason: 'subject-unmapped',
      hint: 'the event names a subject no rule can name: map its format to a token claim with option "subjects", or ignore its type with "actions"',
    });
  return undefined;
}

/** Count, publish and report one outcome. `report` is the TokenAuth's `onError`. */
export function recordOutcome(
  outcome: Outcome,
  context: {
    via: 'push' | 'poll' | 'logout';
    transmitter: string;
    book: EventBook;
    now: number;
    report: (err: TokenAuthError) => void;
  },
): void {
  context.book.record(outcome, context.now);
  publishSecurityEvent(() => ({
    via: context.via,
    transmitter: context.transmitter,
    outcome: outcome.status === 'accepted' ? outcome.outcome : outcome.status,
    ...(outcome.eventType === undefined ? {} : { eventType: outcome.eventType }),
    ...(outcome.subjectFormat === undefined ? {} : { subjectFormat: outcome.subjectFormat }),
    ...(outcome.status === 'refused' ? { reason: outcome.reason } : {}),
    ...(outcome.status === 'unavailable' && outcome.error.reason !== undefined ? { reason: outcome.error.reason } : {}),
    rules: outcome.status === 'accepted' ? outcome.rules : 0,
  }));
  const failure = failureOf(outcome);
  if (failure !== undefined) context.report(failure);
}
