// The one HTTP GET/POST used by every remote source: a deadline, a byte cap, no redirects, and a fetch event on the
// diagnostics channel of its kind.
import { fetchStarted, publishFetch, type FetchKind } from '../observe/diagnostics';

/** Why a remote call gave no usable answer; for logs (`TokenAuthError.reason`), never for clients. */
export type FetchFailure = 'timeout' | 'closed' | 'network' | 'too-large';

/** A remote call that failed before an HTTP answer could be read whole. */
export class RemoteFetchError extends Error {
  /** What went wrong, as a short stable word. */
  readonly failure: FetchFailure;
  /** The HTTP status of an answer whose body was too large (`too-large`); undefined otherwise. */
  readonly status: number | undefined;

  constructor(failure: FetchFailure, cause?: unknown, status?: number) {
    super(`remote fetch failed: ${failure}`, cause === undefined ? undefined : { cause });
    this.name = 'RemoteFetchError';
    this.failure = failure;
    this.status = status;
  }
}

/** An HTTP answer: its status and headers, and its body text when the status was 200 (or `readErrorBody`). */
export interface BoundedAnswer {
  status: number;
  headers: Headers;
  /** UTF-8 body text of a 200 answer; empty for any other status (never read) unless `readErrorBody`. */
  text: string;
  /** Size of the body in bytes. */
  bytes: number;
}

/** What a transport is given to send: fetchBounded's request, its redirects refused, ended by `signal`. */
export interface TransportInit {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly signal: AbortSignal;
}

/** How one request is sent: global fetch by default; `check`'s probe pins its address (pinned-transport.ts). */
export type Transport = (url: string, init: TransportInit) => Promise<Response>;

const fetchTransport: Transport = (url, init) => fetch(url, { ...init, redirect: 'error' });

/** Limits of one remote call. */
export interface BoundedFetchOptions {
  headers: Record<string, string>;
  /** Whole-call limit (connect, answer and body), in milliseconds. */
  timeoutMs: number;
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  /** Aborts the call from outside (the source being closed). */
  signal: AbortSignal;
  /** What the fetch is for, naming its diagnostics channel (lib/observe/diagnostics.ts); `key` when not given. */
  kind?: FetchKind;
  /** A body (a form, or JSON: its Content-Type set by the caller): the call is then a POST of it. */
  body?: string;
  /** The method of a call with a body, when not POST (SSF 1.0 §8.1.1.3 updates a stream with PATCH). */
  method?: 'PATCH';
  /** Read the body of any status too, within `maxBytes` (an OAuth error's JSON, RFC 6749 §5.2); default: 200 only. */
  readErrorBody?: boolean;
  /** How the request is sent (default: global fetch, redirects refused); its answer is bounded the same. */
  transport?: Transport;
}

// setTimeout fires at once for delays past 2^31-1 ms; a longer timeout than that means "practically none".
const LONGEST_TIMER = 2 ** 31 - 1;

/**
 * GET a URL (or POST a form body) with a timeout that covers the body too, no redirects (a redirect could lead a key fetch anywhere),
 * and a body size cap enforced while reading, so a hostile or broken server cannot hold or flood the process.
 * Rejects with RemoteFetchError; only a 200's body is read (any status's with `readErrorBody`), others are
 * discarded unread.
 */
export async function fetchBounded(url: string, options: BoundedFetchOptions): Promise<BoundedAnswer> {
  const kind = options.kind ?? 'key';
  const started = fetchStarted(kind);
  if (started === undefined) return fetchOnce(url, options);
  try {
    const answer = await fetchOnce(url, options);
    publishFetch(kind, started, url, answer.status === 200 ? 'ok' : 'http-error', answer.status);
    return answer;
  } catch (err) {
    publishFetch(kind, started, url, err instanceof RemoteFetchError ? err.failure : 'network');
    throw err;
  }
}

async function fetchOnce(url: string, options: BoundedFetchOptions): Promise<BoundedAnswer> {
  if (options.signal.aborted) throw new RemoteFetchError('closed');
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort();
    },
    Math.min(Math.max(options.timeoutMs, 1), LONGEST_TIMER),
  );
  // One signal for the call: its own timeout and caps, and the source's closing. AbortSignal.any (Node 20.3+) adds
  // no listener to the long-lived closing signal, which had one per call under way (a warning past 10 at once).
  const linked =
    typeof AbortSignal.any === 'function' ? AbortSignal.any([options.signal, controller.signal]) : undefined;
  const onClose = () => controller.abort();
  if (linked === undefined) options.signal.addEventListener('abort', onClose, { once: true });
  const failure = (err: unknown): RemoteFetchError => {
    if (err instanceof RemoteFetchError) return err;
    if (timedOut) return new RemoteFetchError('timeout', err);
    if (options.signal.aborted) return new RemoteFetchError('closed', err);
    return new RemoteFetchError('network', err);
  };
  // The timer ends the call itself, not only through fetch's signal: undici's Request follows that signal through a
  // WeakRef, so once a garbage collection has taken the Request (after the headers came), an abort no longer reaches
  // the body, and a server dripping it held the call past any timeout. `controller` is held by the timer.
  const stopped = new Promise<never>((_resolve, reject) => {
    controller.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
  stopped.catch(() => undefined);

  try {
    const method = options.body === undefined ? 'GET' : (options.method ?? 'POST');
    const request = (options.transport ?? fetchTransport)(url, {
      method,
      headers: options.headers,
      body: options.body,
      signal: linked ?? controller.signal,
    });
    // An answer that comes after the call ended is discarded unread.
    request.then((late) => (controller.signal.aborted ? late.body?.cancel() : undefined)).catch(() => undefined);
    const response = await Promise.race([request, stopped]);
    if (response.status !== 200 && options.readErrorBody !== true) {
      await response.body?.cancel().catch(() => undefined);
      return { status: response.status, headers: response.headers, text: '', bytes: 0 };
    }
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > options.maxBytes) {
      controller.abort();
      throw new RemoteFetchError('too-large', undefined, response.status);
    }
    const body = await readCapped(response, options.maxBytes, controller, stopped);
    return { status: response.status, headers: response.headers, text: body.toString('utf8'), bytes: body.length };
  } catch (err) {
    throw failure(err);
  } finally {
    clearTimeout(timer);
    if (linked === undefined) options.signal.removeEventListener('abort', onClose);
  }
}

async function readCapped(
  response: Response,
  maxBytes: number,
  controller: AbortController,
  stopped: Promise<never>,
): Promise<Buffer> {
  if (response.body === null) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await Promise.race([reader.read(), stopped]);
    } catch (err) {
      await reader.cancel().catch(() => undefined);
      throw err;
    }
    const { done, value } = next;
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Stop reading at once: the rest of an oversized body is never buffered.
      controller.abort();
      await reader.cancel().catch(() => undefined);
      throw new RemoteFetchError('too-large', undefined, response.status);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}
