// A metadata document read from the first of its well-known addresses that has one (a 404 moves on to the next):
// JSON, within one deadline and a byte cap. Authorization server metadata (keys/metadata.ts) and a security event
// transmitter's (events/metadata.ts) are both read through it.
import { fetchBounded, RemoteFetchError } from './bounded-fetch';
import type { FetchKind } from '../observe/diagnostics';

/** How one document is read. */
export interface WellKnownRequest {
  /** When the whole read must be done (a `Date.now()` time). */
  deadline: number;
  signal: AbortSignal;
  kind: FetchKind;
  maxBytes: number;
  /** Reasons are `{prefix}-timeout`, `{prefix}-status-404`, `{prefix}-json`, … */
  prefix: string;
  /** The error a failure is thrown as, from its reason. */
  fail(reason: string, cause?: unknown): Error;
}

/** The JSON document at the first address that answers other than 404, and that address. */
export async function fetchWellKnown(
  urls: readonly string[],
  request: WellKnownRequest,
): Promise<{ url: string; document: unknown }> {
  const { prefix } = request;
  let answered: { url: string; status: number; text: string } | undefined;
  for (const url of urls) {
    const left = request.deadline - Date.now();
    if (left <= 0) throw request.fail(`${prefix}-timeout`);
    try {
      const answer = await fetchBounded(url, {
        headers: { Accept: 'application/json' },
        timeoutMs: left,
        maxBytes: request.maxBytes,
        signal: request.signal,
        kind: request.kind,
      });
      answered = { url, status: answer.status, text: answer.text };
    } catch (err) {
      throw request.fail(err instanceof RemoteFetchError ? `${prefix}-${err.failure}` : `${prefix}-network`, err);
    }
    if (answered.status !== 404) break;
  }
  if (answered === undefined || answered.status !== 200)
    throw request.fail(`${prefix}-status-${answered?.status ?? 404}`);
  try {
    return { url: answered.url, document: JSON.parse(answered.text) as unknown };
  } catch {
    throw request.fail(`${prefix}-json`);
  }
}
