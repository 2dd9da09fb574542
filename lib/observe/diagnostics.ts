// diagnostics_channel publication: the verify TracingChannel and the fetch channels. Nothing is built when nobody
// listens; nothing published holds a token or claims.
import * as diagnostics from 'node:diagnostics_channel';
import { asTokenAuthError } from '../base/errors';
import { type MaybePromise } from '../base/values';

/** Name of the TracingChannel that wraps every verification (start, end, asyncStart, asyncEnd, error). */
export const VERIFY_CHANNEL = 'express-verified-user:verify';

/** What a remote fetch was for; each kind has its own channel, `express-verified-user:fetch:<kind>`. */
export type FetchKind = 'key' | 'discovery' | 'upstream' | 'introspection' | 'exchange' | 'ssf' | 'ssf-poll';

/**
 * The context object published on the verify channel. It never holds the token, its signature or its claims:
 * only facts that are safe in a log or a span. `code` and `reason` are set on failure only.
 */
export interface VerifyTrace {
  /**
   * How the answer was reached: `local` (signature checked here) or `upstream` (a remote verifier answered: upstream
   * mode or introspection). With introspection a cached answer reports the TokenAuth's first source, `local`.
   */
  source: 'local' | 'upstream';
  /** True when the answer comes later: `asyncStart` and `asyncEnd` follow `end` (set before `end` is published). */
  async: boolean;
  /** True when the answer came from the result cache (or from a verification another request had under way). */
  cached: boolean;
  /** The token header's `alg`, once decoded. */
  alg?: string;
  /** The token's `iss`, once decoded and a string. */
  iss?: string;
  /** The failure's stable code (`invalid_token`, `token_expired`, …). */
  code?: string;
  /** The failure's internal reason (`signature`, `exp`, …), for logs. */
  reason?: string;
  /** The failure, as a TokenAuthError (set by the tracing protocol on `error`). */
  error?: unknown;
}

/** The message published on a fetch channel when a remote fetch ends. */
export interface FetchEvent {
  kind: FetchKind;
  /** The address fetched, without credentials, query or fragment. */
  url: string;
  /** The HTTP status, when an answer arrived. */
  status?: number;
  /** Milliseconds from the request to the end of the body (or the failure). */
  duration: number;
  /** `ok` (a 200 read whole), `http-error` (any other status), or the failure (`timeout`, `network`, …). */
  outcome: string;
}

/**
 * The verify TracingChannel, for subscribers inside the package (lib/otel.ts). Both type arguments are the
 * context: @types/node ≤ 25 reads them as <store, context> and 26 as <context, store>, and each wants an object.
 */
export const verifyChannel = diagnostics.tracingChannel<VerifyTrace, VerifyTrace>(VERIFY_CHANNEL);
const fetchChannels: Readonly<Record<FetchKind, diagnostics.Channel>> = {
  key: diagnostics.channel('express-verified-user:fetch:key'),
  discovery: diagnostics.channel('express-verified-user:fetch:discovery'),
  upstream: diagnostics.channel('express-verified-user:fetch:upstream'),
  introspection: diagnostics.channel('express-verified-user:fetch:introspection'),
  exchange: diagnostics.channel('express-verified-user:fetch:exchange'),
  // A security event transmitter (docs/continuous-access.md): its metadata, token and stream calls, and each poll.
  ssf: diagnostics.channel('express-verified-user:fetch:ssf'),
  'ssf-poll': diagnostics.channel('express-verified-user:fetch:ssf-poll'),
};

/** Node 20's TracingChannel may lack `hasSubscribers`: then any of its five channels decides. */
const { start, end, asyncStart, asyncEnd, error } = verifyChannel;
const verifyTraced: () => boolean =
  typeof (verifyChannel as { hasSubscribers?: unknown }).hasSubscribers === 'boolean'
    ? () => verifyChannel.hasSubscribers
    : () =>
        start.hasSubscribers ||
        end.hasSubscribers ||
        asyncStart.hasSubscribers ||
        asyncEnd.hasSubscribers ||
        error.hasSubscribers;

/** The channel of each fetch kind. */
export function fetchChannel(kind: FetchKind): diagnostics.Channel {
  return fetchChannels[kind];
}

/** Whether anyone listens to verifications; checked before anything is built for them. */
export function isVerifyTraced(): boolean {
  return verifyTraced();
}

/** What a verdict shows the trace: its header's `alg` and its claims' `iss` when it succeeded (verify/cache.ts). */
export type TracedVerdict = { ok: true; claims: { iss?: unknown }; header?: { alg: string } } | { ok: false };

/** Record what a verdict tells (whether it came from the cache, its alg and iss); never the token or claims. */
export function noteVerdict(trace: VerifyTrace | undefined, verdict: TracedVerdict, cached: boolean): void {
  if (trace === undefined) return;
  trace.cached = cached;
  if (verdict.ok) {
    if (verdict.header !== undefined) trace.alg = verdict.header.alg;
    if (typeof verdict.claims.iss === 'string') trace.iss = verdict.claims.iss;
  }
}

function noteFailure(trace: VerifyTrace, err: unknown): void {
  const error = asTokenAuthError(err);
  trace.error = error;
  trace.code = error.code;
  trace.reason = error.reason;
  if (error.facts?.alg !== undefined) trace.alg ??= error.facts.alg;
  if (error.facts?.iss !== undefined) trace.iss ??= error.facts.iss;
}

/**
 * Run one verification inside the verify TracingChannel: start, then error and end when it answers at once, or
 * end, then error, asyncStart and asyncEnd when it answers later (the order of Node's traceSync/tracePromise).
 * Arguments are passed through rather than captured, so that the untraced path allocates nothing.
 */
export function traceVerify<A, B, T>(
  source: VerifyTrace['source'],
  run: (a: A, b: B, trace: VerifyTrace) => MaybePromise<T>,
  a: A,
  b: B,
): MaybePromise<T> {
  const trace: VerifyTrace = { source, async: false, cached: false };
  verifyChannel.start.publish(trace);
  let result: MaybePromise<T>;
  try {
    result = run(a, b, trace);
  } catch (err) {
    noteFailure(trace, err);
    verifyChannel.error.publish(trace);
    verifyChannel.end.publish(trace);
    throw err;
  }
  if (!(result instanceof Promise)) {
    verifyChannel.end.publish(trace);
    return result;
  }
  trace.async = true;
  verifyChannel.end.publish(trace);
  return result.then(
    (value) => {
      verifyChannel.asyncStart.publish(trace);
      verifyChannel.asyncEnd.publish(trace);
      return value;
    },
    (err: unknown) => {
      noteFailure(trace, err);
      verifyChannel.error.publish(trace);
      verifyChannel.asyncStart.publish(trace);
      verifyChannel.asyncEnd.publish(trace);
      throw err;
    },
  );
}

/** The start time of a fetch for `publishFetch`, or undefined (no clock read) when nobody listens to its kind. */
export function fetchStarted(kind: FetchKind): number | undefined {
  return fetchChannels[kind].hasSubscribers ? performance.now() : undefined;
}

/** An address as safe to publish: origin and path only (no user info, query or fragment). */
function publicAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '';
  }
}

/** Publish the end of a fetch that `fetchStarted` timed; a no-op when nobody listened at its start. */
export function publishFetch(
  kind: FetchKind,
  started: number | undefined,
  url: string,
  outcome: string,
  status?: number,
): void {
  if (started === undefined) return;
  const event: FetchEvent = { kind, url: publicAddress(url), duration: performance.now() - started, outcome };
  if (status !== undefined) event.status = status;
  fetchChannels[kind].publish(event);
}
