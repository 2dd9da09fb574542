// RFC 8936 poll: one loop per transmitter, every `interval`, `returnImmediately: true`; each SET acknowledged in the
// next request only once its rule is stored, refused ones returned in `setErrs`, unstored ones left to come again;
// backoff on errors; in a fleet only the holder of the stream's lease polls (receiver-state.ts).
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { countedAs, statusFailure } from '../remote/answer-class';
import { guardRemoteCall } from '../remote/remote-call';
import type { TransmitterToken } from './access-token';
import type { Outcome } from './report';
import { MAX_SET_BYTES, type SetErrorCode } from './set';
import { callTransmitter, jsonOf } from './transmitter-call';

/** SETs asked for in one poll (RFC 8936 §2.4 `maxEvents`): what one answer may hold, and so its byte bound. */
export const MAX_EVENTS_PER_POLL = 16;
/** Largest poll answer read: that many SETs at their largest, and their JSON around them. */
export const MAX_POLL_BYTES = MAX_EVENTS_PER_POLL * (MAX_SET_BYTES + 512) + 1024;
/** Longest wait between polls after repeated errors. */
const MAX_BACKOFF = 300;
/** Polls made at once without waiting while the transmitter says `moreAvailable`. */
const MAX_BACK_TO_BACK = 8;

/** What one loop needs. */
export interface PollConfig {
  /** `transmitters[i].poll`, for reasons and hints. */
  interval: number;
  timeout: number;
  /** The poll endpoint: configured, or the stream's (read when first needed). */
  endpoint(): Promise<string>;
  token: TransmitterToken;
  /** Receive one SET (receive.ts): its outcome. */
  receive(text: string): Promise<Outcome>;
  /** Whether this instance holds the stream's lease now (always, alone). */
  holding(): boolean;
  signal: AbortSignal;
}

/** A loop's state, for `stats()` and `ready()`. */
export interface PollState {
  /** Polls answered, and failed in a row. */
  polls: number;
  failures: number;
  /** When the last poll was answered (seconds since the epoch). */
  lastPollAt: number | undefined;
  /** The last failure's reason, while failing. */
  lastError: string | undefined;
}

/** The acknowledgements a poll carries (RFC 8936 §2.1): `ack` and `setErrs`. */
interface Pending {
  ack: string[];
  setErrs: Record<string, { err: SetErrorCode; description: string }>;
}

/** One poll loop; `start()` runs it until the signal aborts. */
export function createPollLoop(config: PollConfig) {
  const state: PollState = { polls: 0, failures: 0, lastPollAt: undefined, lastError: undefined };
  // `setErrs` has no prototype: a transmitter's jti of "__proto__" is a key like any other, not the object's prototype.
  const fresh = (): Pending => ({ ack: [], setErrs: Object.create(null) as Pending['setErrs'] });
  let pending: Pending = fresh();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const waiters: Array<{ resolve(): void; reject(err: unknown): void }> = [];
  const settle = (err?: TokenAuthError) => {
    for (const waiter of waiters.splice(0))
      if (err === undefined) waiter.resolve();
      else waiter.reject(err);
  };

  /** One request: the acknowledgements due, and up to MAX_EVENTS_PER_POLL SETs back. */
  const poll = guardRemoteCall(
    async (ask: { maxEvents: number }) => {
      const sent = pending;
      const body = {
        returnImmediately: true,
        maxEvents: ask.maxEvents,
        ...(sent.ack.length > 0 ? { ack: sent.ack } : {}),
        ...(Object.keys(sent.setErrs).length > 0 ? { setErrs: sent.setErrs } : {}),
      };
      const answer = await callTransmitter(
        config.token,
        {
          url: await config.endpoint(),
          method: 'POST',
          body,
          kind: 'ssf-poll',
          timeoutMs: config.timeout * 1000,
          maxBytes: MAX_POLL_BYTES,
          signal: config.signal,
        },
        'ssf-poll',
      );
      if (answer.status !== 200) throw statusFailure('ssf-poll', answer);
      // Acknowledged: what was sent is done with, even if the rest of the answer cannot be read.
      if (pending === sent) pending = fresh();
      const document = jsonOf(answer);
      if (!isObject(document) || !isObject(document.sets))
        throw new TokenAuthError('verification_unavailable', { reason: 'ssf-poll-answer', retryAfter: 5 });
      return { sets: document.sets, more: document.moreAvailable === true };
    },
    { prefix: 'ssf-poll', breaker: false, maxInflight: 1, timeout: config.timeout },
  );

  /** Handle one answer's SETs; true when every one was settled (stored, ignored or refused). */
  async function handle(sets: Record<string, unknown>): Promise<boolean> {
    let settled = true;
    for (const jti of Object.keys(sets).slice(0, MAX_EVENTS_PER_POLL)) {
      const text = sets[jti];
      const outcome: Outcome =
        typeof text === 'string'
          ? await config.receive(text)
          : { status: 'refused', err: 'invalid_request', reason: 'set-not-jws' };
      if (outcome.status === 'accepted') pending.ack.push(jti);
      else if (outcome.status === 'refused')
        pending.setErrs[jti] = { err: outcome.err, description: `refused by the receiver (${outcome.reason})` };
      else settled = false; // not acknowledged: the transmitter sends it again
    }
    return settled;
  }

  /** One cycle: poll while more is available and all is settled; the wait before the next. */
  async function cycle(): Promise<number> {
    if (!config.holding()) return config.interval;
    try {
      for (let round = 0; round < MAX_BACK_TO_BACK; round++) {
        const { sets, more } = await poll.call({ maxEvents: MAX_EVENTS_PER_POLL });
        state.polls++;
        state.failures = 0;
        state.lastPollAt = Date.now() / 1000;
        state.lastError = undefined;
        settle();
        const settled = await handle(sets);
        if (!settled) return config.interval;
        if (!more) break;
      }
      return config.interval;
    } catch (err) {
      const failure =
        err instanceof TokenAuthError
          ? err
          : new TokenAuthError('verification_unavailable', { reason: 'ssf-poll-failed', cause: err });
      state.failures++;
      state.lastError = failure.reason;
      settle(failure);
      const backoff = Math.min(MAX_BACKOFF, config.interval * 2 ** Math.min(state.failures, 16));
      // The transmitter's own wait (a 429's or a 503's Retry-After) is honoured; no wait of ours is added to it.
      const counted = countedAs(failure);
      const asked =
        counted?.kind === 'throttle' ? counted.wait : counted?.kind === 'outage' ? counted.demand : undefined;
      return Math.max(backoff, Math.min(asked ?? 0, MAX_BACKOFF));
    }
  }

  function schedule(seconds: number): void {
    if (stopped) return;
    timer = setTimeout(() => void cycle().then(schedule), seconds * 1000);
    timer.unref();
  }

  return {
    start: () => schedule(0),
    state: (): PollState => ({ ...state }),
    /** Resolves at the next answered poll once one was answered; rejects with the failure of the next one that fails. */
    ready(): Promise<void> {
      if (state.polls > 0 || !config.holding()) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    /** The acknowledgements not sent yet (they go with the next poll; a closing instance sends them once). */
    pending: () => pending.ack.length + Object.keys(pending.setErrs).length,
    /** Stop polling (a poll under way finishes). */
    stop(): void {
      stopped = true;
      clearTimeout(timer);
      settle(new TokenAuthError('verification_unavailable', { reason: 'ssf-poll-closed' }));
    },
    /** Send what is due without asking for more (`maxEvents: 0`), once; for close(). */
    async flush(): Promise<void> {
      if (pending.ack.length + Object.keys(pending.setErrs).length === 0 || !config.holding()) return;
      await poll.call({ maxEvents: 0 }).catch(() => undefined);
    },
  };
}
