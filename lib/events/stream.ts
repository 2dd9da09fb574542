// SSF 1.0 §8 stream management for one transmitter: read this receiver's stream, create it when there is none (or
// bring its delivery in line), ask for a verification event and know when it came (§8.1.4), and keep the status a
// stream-updated event reports (§8.1.5); the state requested and the verification seen are shared through the store.
import { randomBytes } from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { outage } from '../remote/answer-class';
import { namedRetryAfter } from '../remote/retry-after';
import type { TransmitterToken } from './access-token';
import type { TransmitterMetadata } from './metadata';
import type { VerificationAnswer } from './receive';
import type { ReceiverState } from './state';
import { callTransmitter, jsonOf } from './transmitter-call';
import type { ResolvedTransmitter } from './transmitter-options';

/** RFC 8935 and RFC 8936 as SSF 1.0 §6 names them in a stream's `delivery.method`. */
export const PUSH_METHOD = 'urn:ietf:rfc:8935';
export const POLL_METHOD = 'urn:ietf:rfc:8936';
/** Largest stream management answer read. */
const MAX_STREAM_BYTES = 256 * 1024;
/** Limit of one stream management call. */
const CALL_TIMEOUT_MS = 10_000;
/** How long a recorded verification counts for instances that start later. */
const VERIFIED_TTL = 24 * 3600;
/** How often an instance that does not manage the stream looks for the verification in the store. */
const WATCH_MS = 250;

/** The stream as the receiver uses it. */
export interface StreamRecord {
  id: string;
  /** Poll: the transmitter's poll endpoint (`delivery.endpoint_url`). */
  pollEndpoint: string | undefined;
}

/** What a stream's manager needs. */
export interface StreamContext {
  transmitter: ResolvedTransmitter;
  metadata: TransmitterMetadata;
  /** The stream credentials' token, when `stream` is configured. */
  token: TransmitterToken | undefined;
  state: ReceiverState;
  /** Names in the receiver state: `{key}:state`, `{key}:verified`. */
  key: string;
  signal: AbortSignal;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
const failed = (reason: string, hint?: string) => outage(reason, { hint });

/** The stream of one transmitter. */
export function createStreamManager(context: StreamContext) {
  const { transmitter, state, key } = context;
  const push = transmitter.delivery === 'push';
  let record: StreamRecord | undefined;
  let requested: string | undefined;
  let verified: string | undefined;
  let status: string | undefined;

  const call = (url: string, method: 'GET' | 'POST' | 'PATCH', body?: unknown) => {
    if (context.token === undefined) throw failed('ssf-stream-no-credentials');
    return callTransmitter(
      context.token,
      {
        url,
        method,
        body,
        kind: 'ssf',
        timeoutMs: CALL_TIMEOUT_MS,
        maxBytes: MAX_STREAM_BYTES,
        signal: context.signal,
      },
      'ssf-stream',
    );
  };

  /** The delivery this receiver wants (SSF 1.0 §6.1). */
  const delivery = () =>
    push
      ? {
          method: PUSH_METHOD,
          endpoint_url: transmitter.stream?.endpointUrl?.href,
          authorization_header: transmitter.push?.authorization,
        }
      : { method: POLL_METHOD };

  /** Whether a stream already delivers as wanted (a push stream's Authorization is never echoed back: updated). */
  const fits = (stream: Record<string, unknown>) => {
    const given = isObject(stream.delivery) ? stream.delivery : {};
    if (given.method !== delivery().method) return false;
    return (
      !push ||
      (given.endpoint_url === delivery().endpoint_url && given.authorization_header === transmitter.push?.authorization)
    );
  };

  /** A stream configuration checked (SSF 1.0 §8.1.1.1: its `iss` is the transmitter's; its `aud` names us). */
  function checked(value: unknown): Record<string, unknown> {
    if (!isObject(value) || typeof value.stream_id !== 'string' || value.stream_id === '')
      throw failed('ssf-stream-answer');
    if (value.iss !== undefined && value.iss !== transmitter.issuer) throw failed('ssf-stream-issuer');
    const aud = value.aud;
    if (
      aud !== undefined &&
      aud !== transmitter.audience &&
      !(Array.isArray(aud) && aud.includes(transmitter.audience))
    )
      throw failed('ssf-stream-audience', `the stream's aud does not name ${JSON.stringify(transmitter.audience)}`);
    return value;
  }

  async function answered(method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown): Promise<unknown> {
    const answer = await call(url, method, body);
    if (answer.status === 409) return 'conflict';
    if (answer.status < 200 || answer.status > 299) throw failed(`ssf-stream-status-${answer.status}`);
    return jsonOf(answer);
  }

  /** Read this receiver's streams; create one, or update the one there, until one delivers as wanted. */
  async function ensure(): Promise<StreamRecord> {
    if (record !== undefined) return record;
    const metadata = await context.metadata.get();
    const endpoint = metadata.configurationEndpoint?.href;
    if (endpoint === undefined) throw failed('ssf-stream-no-configuration-endpoint');
    const wanted = { delivery: delivery(), events_requested: transmitter.stream?.events };
    let stream: Record<string, unknown> | undefined;
    for (let attempt = 0; attempt < 2 && stream === undefined; attempt++) {
      const read = await answered('GET', endpoint);
      const list = (Array.isArray(read) ? read : isObject(read) ? [read] : []).map(checked);
      const existing = list.find(fits) ?? list[0];
      if (existing !== undefined && fits(existing)) stream = existing;
      else if (existing !== undefined)
        stream = checked(await answered('PATCH', endpoint, { stream_id: existing.stream_id, ...wanted }));
      else {
        const created = await answered('POST', endpoint, {
          ...wanted,
          ...(transmitter.stream?.description === undefined ? {} : { description: transmitter.stream.description }),
        });
        // 409: another receiver instance created it meanwhile (one stream per receiver): read it again.
        if (created !== 'conflict') stream = checked(created);
      }
    }
    if (stream === undefined) throw failed('ssf-stream-conflict');
    const given = isObject(stream.delivery) ? stream.delivery : {};
    record = {
      id: stream.stream_id as string,
      pollEndpoint: typeof given.endpoint_url === 'string' && !push ? given.endpoint_url : undefined,
    };
    return record;
  }

  /** Ask for a verification event with a fresh `state`, recorded for every instance; retried after a 429. */
  async function requestVerification(deadline: number): Promise<string> {
    const stream = await ensure();
    const endpoint = (await context.metadata.get()).verificationEndpoint?.href;
    if (endpoint === undefined) throw failed('ssf-stream-no-verification-endpoint');
    const fresh = randomBytes(18).toString('base64url');
    await state.put(`${key}:state`, fresh, VERIFIED_TTL);
    requested = fresh;
    for (;;) {
      const answer = await call(endpoint, 'POST', { stream_id: stream.id, state: fresh });
      if (answer.status >= 200 && answer.status <= 299) return fresh;
      const wait = answer.status === 429 ? (namedRetryAfter(answer) ?? 5) * 1000 : undefined;
      if (wait === undefined || Date.now() + wait >= deadline) throw failed(`ssf-verification-status-${answer.status}`);
      await sleep(wait);
    }
  }

  /** Resolve once the verification with `wanted` (any one, for `undefined`) is recorded, or reject at `deadline`. */
  async function verifiedBy(wanted: string | undefined, deadline: number): Promise<void> {
    while (Date.now() < deadline) {
      if (context.signal.aborted) break;
      if (verified !== undefined && (wanted === undefined || verified === wanted)) return;
      const stored = await state.get(`${key}:verified`).catch(() => undefined);
      if (stored !== undefined && (wanted === undefined || stored === wanted)) return;
      await sleep(WATCH_MS);
    }
    throw new TokenAuthError('verification_unavailable', {
      reason: 'ssf-stream-unverified',
      retryAfter: 5,
      hint: `no verification event from ${transmitter.issuer} arrived within ${transmitter.stream?.timeout ?? 30} s`,
    });
  }

  return {
    ensure,
    requestVerification,
    verifiedBy,
    /** SSF 1.0 §8.1.4.1: a verification event's `state` against the one requested here or by another instance. */
    async verification(given: string | undefined): Promise<VerificationAnswer> {
      if (given === undefined) return 'unrequested';
      const stored = await state.get(`${key}:state`);
      if (stored === undefined && requested === undefined) return 'unrequested';
      if (given !== stored && given !== requested) return 'mismatch';
      verified = given;
      await state.put(`${key}:verified`, given, VERIFIED_TTL);
      return 'verified';
    },
    streamUpdated(reported: string | undefined): void {
      status = reported === 'enabled' || reported === 'paused' || reported === 'disabled' ? reported : 'unknown';
    },
    snapshot: () => ({ id: record?.id, status, verified: verified !== undefined }),
  };
}
