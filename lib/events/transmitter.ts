// One transmitter at run time: its metadata and keys, its token, its stream, its poll loop and the lease that lets
// one instance of a fleet manage and poll the stream (taken over when its holder dies), and its counters.
import { TokenAuthError } from '../base/errors';
import { digestOf } from '../remote/answer-memory';
import { transmitterToken, type TransmitterToken } from './access-token';
import { transmitterMetadata } from './metadata';
import { createPollLoop, type PollState } from './poll';
import type { PushTarget } from './push';
import { receiveSet, type ReceiveContext, type TransmitterSource } from './receive';
import { EventBook, recordOutcome, type EventCounts } from './report';
import { createStreamManager } from './stream';
import type { ReceiverState } from './state';
import type { ResolvedTransmitter } from './transmitter-options';

/** How long a lease lasts without renewal (seconds): a dead holder's stream is taken over within this. */
export const LEASE_TTL = 15;

/** What `events.stats()` tells of one transmitter. */
export interface TransmitterStats extends EventCounts {
  issuer: string;
  delivery: 'push' | 'poll';
  /** With `stream`: its id, the status a stream-updated event last reported, whether it was verified here. */
  stream?: { id: string | undefined; status: string | undefined; verified: boolean };
  /** With `poll`: whether this instance polls now (it holds the lease), and how the polls went. */
  poll?: PollState & { polling: boolean };
}

/** What every transmitter shares. */
export interface TransmitterContext {
  receive: ReceiveContext;
  state: ReceiverState;
  /** This receiver's name in leases (a random id per securityEvents()). */
  owner: string;
  allowInsecureHttp: boolean;
  report(err: TokenAuthError): void;
}

const unavailable = (reason: string, cause?: unknown) =>
  new TokenAuthError('verification_unavailable', { reason, retryAfter: 5, cause });

/** Build one transmitter; its lease and poll loop start at once. */
export function createTransmitter(config: ResolvedTransmitter, context: TransmitterContext) {
  const { receive: receiveContext, state } = context;
  const clock = receiveContext.clock;
  const closing = new AbortController();
  const key = `stream:${digestOf(config.issuer)}`;
  const metadata = transmitterMetadata(config.issuer, {
    clock,
    allowInsecureHttp: context.allowInsecureHttp,
    named: `${config.path}.issuer`,
  });
  const tokenOf = (client: NonNullable<ResolvedTransmitter['stream']>['client']): TransmitterToken =>
    transmitterToken(config.issuer, client, {
      clock,
      allowInsecureHttp: context.allowInsecureHttp,
      signal: closing.signal,
    });
  const streamToken = config.stream === undefined ? undefined : tokenOf(config.stream.client);
  const pollToken =
    config.poll === undefined
      ? undefined
      : config.poll.client === config.stream?.client
        ? streamToken
        : tokenOf(config.poll.client);
  const stream = createStreamManager({
    transmitter: config,
    metadata,
    token: streamToken,
    state,
    key,
    signal: closing.signal,
  });
  const book = new EventBook();

  const source: TransmitterSource = {
    issuer: config.issuer,
    audience: config.audience,
    keys: metadata.keys,
    criticalMembers: () => metadata.held()?.criticalSubjectMembers ?? [],
    verification: (given) => stream.verification(given),
    streamUpdated(status) {
      stream.streamUpdated(status);
      // A stream the transmitter paused or disabled delivers nothing: worth a look (SSF 1.0 §8.1.5).
      if (status === 'paused' || status === 'disabled')
        context.report(
          new TokenAuthError('verification_unavailable', {
            reason: `ssf-stream-${status}`,
            retryAfter: 60,
            hint: `${config.issuer} ${status} the stream: no security events arrive until it is enabled again`,
          }),
        );
    },
  };
  const receive = async (text: string, via: 'push' | 'poll') => {
    const outcome = await receiveSet(text, source, receiveContext);
    recordOutcome(outcome, { via, transmitter: config.issuer, book, now: clock(), report: context.report });
    return outcome;
  };

  // The lease: only for what one instance does for all (manage the stream, poll); a pushing transmitter without a
  // stream to manage needs none.
  const leased = config.poll !== undefined || config.stream !== undefined;
  let holding = !leased;
  let leaseTimer: NodeJS.Timeout | undefined;
  const tick = async () => {
    holding = await state.lease(`${key}:lease`, context.owner, LEASE_TTL).catch(() => false);
  };
  const firstTick = leased ? tick() : Promise.resolve();
  if (leased) {
    leaseTimer = setInterval(() => void tick(), (LEASE_TTL * 1000) / 3);
    leaseTimer.unref();
  }

  const poll =
    config.poll === undefined || pollToken === undefined
      ? undefined
      : createPollLoop({
          interval: config.poll.interval,
          timeout: config.poll.timeout,
          async endpoint() {
            if (config.poll?.endpoint !== undefined) return config.poll.endpoint.href;
            const found = (await stream.ensure()).pollEndpoint;
            if (found === undefined) throw unavailable('ssf-poll-no-endpoint');
            return found;
          },
          token: pollToken,
          receive: (text) => receive(text, 'poll'),
          holding: () => holding,
          signal: closing.signal,
        });
  void firstTick.then(() => poll?.start());

  /** Streams read or created and verified (by this instance or the holder), the poll loop answered. */
  async function setup(): Promise<void> {
    const deadline = Date.now() + (config.stream?.timeout ?? 30) * 1000;
    await metadata.get(deadline);
    await metadata.keys.ready?.();
    await firstTick;
    if (config.stream !== undefined) {
      for (;;) {
        if (holding) {
          const requested = await stream.requestVerification(deadline);
          await stream.verifiedBy(requested, deadline);
          break;
        }
        // Another instance manages the stream: its verification, once recorded, is everyone's. Look in short
        // slices, so that an instance that takes the lease over meanwhile does the work itself.
        try {
          await stream.verifiedBy(undefined, Math.min(deadline, Date.now() + (LEASE_TTL * 1000) / 3));
          break;
        } catch (err) {
          if (Date.now() >= deadline) throw err;
        }
      }
    }
    await poll?.ready();
  }

  let attempt: Promise<void> | undefined;
  let done = false;
  return {
    source,
    push:
      config.push === undefined
        ? undefined
        : ({ authorization: config.push.authorization, receive: (text) => receive(text, 'push') } satisfies PushTarget),
    /** Resolves once set up; a failure rejects this call and the next call tries again. */
    ready(): Promise<void> {
      if (done) return Promise.resolve();
      attempt ??= setup().then(
        () => {
          done = true;
        },
        (err: unknown) => {
          attempt = undefined;
          throw err instanceof TokenAuthError ? err : unavailable('ssf-setup-failed', err);
        },
      );
      return attempt;
    },
    stats(): TransmitterStats {
      return {
        issuer: config.issuer,
        delivery: config.delivery,
        ...book.snapshot(),
        ...(config.stream === undefined ? {} : { stream: stream.snapshot() }),
        ...(poll === undefined ? {} : { poll: { ...poll.state(), polling: holding } }),
      };
    },
    async close(): Promise<void> {
      clearInterval(leaseTimer);
      poll?.stop();
      await poll?.flush();
      if (leased) await state.release(`${key}:lease`, context.owner).catch(() => undefined);
      closing.abort();
      metadata.close();
    },
  };
}

/** One transmitter at run time. */
export type Transmitter = ReturnType<typeof createTransmitter>;
