// One call to a transmitter's poll, stream or verification endpoint (SSF 1.0 §7.1.1): JSON, `Authorization: Bearer`
// with the receiver's token (fetched again once when the transmitter answers 401), bounded in time and bytes, no
// redirects; a failure counted by the one remote-answer rule (remote/answer-class.ts).
import type { TokenAuthError } from '../base/errors';
import { fetchBounded, type BoundedAnswer } from '../fetch/bounded-fetch';
import type { FetchKind } from '../observe/diagnostics';
import { fetchFailure } from '../remote/answer-class';
import type { TransmitterToken } from './access-token';

/** One call. */
export interface TransmitterRequest {
  url: string;
  method: 'GET' | 'POST' | 'PATCH';
  /** A JSON body (POST, PATCH). */
  body?: unknown;
  kind: FetchKind;
  timeoutMs: number;
  maxBytes: number;
  signal: AbortSignal;
}

/**
 * Make the call with the token; a 401 forgets the token and tries once more with a new one. Resolves with any HTTP
 * answer (its body read whatever its status, within `maxBytes`); rejects with a `verification_unavailable`
 * TokenAuthError (`{prefix}-timeout`, `-network`, `-too-large`, or the token's own failure) when none came.
 */
export async function callTransmitter(
  token: TransmitterToken,
  request: TransmitterRequest,
  prefix: string,
): Promise<BoundedAnswer> {
  const deadline = Date.now() + request.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const bearer = await token.get();
    const headers: Record<string, string> = { Authorization: `Bearer ${bearer}`, Accept: 'application/json' };
    if (request.body !== undefined) headers['Content-Type'] = 'application/json';
    let answer: BoundedAnswer;
    try {
      answer = await fetchBounded(request.url, {
        headers,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        ...(request.method === 'PATCH' ? { method: 'PATCH' as const } : {}),
        timeoutMs: Math.max(1, deadline - Date.now()),
        maxBytes: request.maxBytes,
        signal: request.signal,
        kind: request.kind,
        readErrorBody: true,
      });
    } catch (err) {
      throw fetchFailure(prefix, err) as TokenAuthError;
    }
    if (answer.status !== 401 || attempt > 0) return answer;
    // The token expired early or was revoked: one new token, one more try.
    token.forget();
  }
}

/** The JSON body of an answer, or undefined when it is none. */
export function jsonOf(answer: BoundedAnswer): unknown {
  try {
    return JSON.parse(answer.text) as unknown;
  } catch {
    return undefined;
  }
}
