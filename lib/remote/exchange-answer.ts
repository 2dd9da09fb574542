// The token endpoint's answer to an exchange (RFC 8693 §2.2), read into the token it issued or a failure counted
// as every remote answer is (remote/answer-class.ts): a refusal about this request, an outage, or a throttle.
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { RemoteFetchError, type BoundedAnswer } from '../fetch/bounded-fetch';
import { classOfStatus, fetchFailure, outage, throttled } from './answer-class';
import { ACCESS_TOKEN_TYPE, type NormalTarget } from './exchange-target';
import { namedRetryAfter, retryAfterOf } from './retry-after';

/** Largest answer read (64 KiB): a token response is a few kilobytes at most. */
export const MAX_EXCHANGE_BYTES = 64 * 1024;

/** A token the server issued, as answered (RFC 8693 §2.2.1). */
export interface IssuedToken {
  readonly accessToken: string;
  readonly tokenType: string;
  /** Seconds of life from the answer, when it named them. */
  readonly expiresIn: number | undefined;
  readonly issuedTokenType: string | undefined;
  /** The scope granted, when the answer names one (RFC 8693 §2.2.1: absent means the scope asked for). */
  readonly scope: readonly string[] | undefined;
}

/**
 * What an answer (or a failed call) means: the token issued, or the failure to throw. A refusal about this request
 * (a 400, an answer that cannot be read) leaves the server up; an outage (a 5xx, a 401 to our client credentials,
 * no answer) is counted by the breaker; a 429 to this client as a whole (RFC 6585 §4) holds new calls
 * (remote/remote-call.ts), each counted by remote/answer-class.ts.
 */
export type ExchangeVerdict =
  | { readonly kind: 'issued'; readonly token: IssuedToken }
  | { readonly kind: 'failed'; readonly error: TokenAuthError };

/** RFC 6749 §5.2 and RFC 8707 §2 error codes, the only `error` values passed on (as a log reason). */
const ERROR_CODES = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]);
// A token goes into an Authorization header: visible ASCII only, so no answer can add a header line.
const VISIBLE = /^[\x21-\x7E]+$/;
const MAX_TOKEN_TYPE = 64;

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const body: unknown = JSON.parse(text);
    return isObject(body) ? body : undefined;
  } catch {
    return undefined;
  }
}

function invalid(): ExchangeVerdict {
  return {
    kind: 'failed',
    error: new TokenAuthError('verification_unavailable', { reason: 'exchange-answer-invalid', retryAfter: 1 }),
  };
}

/** `expires_in` as a number of seconds, when it is one (some servers send it as a string of digits). */
function secondsOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.floor(value);
  if (typeof value === 'string' && /^\d{1,10}$/.test(value)) return Number(value);
  return undefined;
}

/**
 * A token endpoint's success answer (RFC 6749 §5.1) read: `access_token` and `token_type` visible ASCII (they go
 * into an Authorization header), `expires_in` and `scope` when given; undefined when it is no such answer. Token
 * exchange and the client-credentials grant of the security event receiver read it alike.
 */
export function readTokenResponse(text: string): IssuedToken | undefined {
  const body = parsed(text);
  const token = body?.access_token;
  const type = body?.token_type;
  if (body === undefined || typeof token !== 'string' || !VISIBLE.test(token)) return undefined;
  if (typeof type !== 'string' || type.length > MAX_TOKEN_TYPE || !VISIBLE.test(type)) return undefined;
  const scope = typeof body.scope === 'string' ? body.scope.split(' ').filter((s) => s !== '') : undefined;
  return {
    accessToken: token,
    tokenType: type,
    expiresIn: secondsOf(body.expires_in),
    issuedTokenType: typeof body.issued_token_type === 'string' ? body.issued_token_type : undefined,
    scope,
  };
}

function issued(text: string, target: NormalTarget): ExchangeVerdict {
  const token = readTokenResponse(text);
  if (token === undefined) return invalid();
  // RFC 8693 §2.2.1: `N_A` says the token is no access token: useless to a caller that asked for one.
  if (target.requestedTokenType === ACCESS_TOKEN_TYPE && token.tokenType.toUpperCase() === 'N_A') return invalid();
  return { kind: 'issued', token };
}

/** The server's refusal of this request (RFC 8693 §2.2.2): `exchange_refused`, its `error` code as the reason. */
function refused(text: string, status: number): ExchangeVerdict {
  const code = parsed(text)?.error;
  const reason = typeof code === 'string' && ERROR_CODES.has(code) ? code : `exchange-status-${status}`;
  return { kind: 'failed', error: new TokenAuthError('exchange_refused', { reason }) };
}

/** Classify an HTTP answer of the token endpoint. Never reads `error_description`: the server's text stays there. */
export function classifyExchangeAnswer(answer: BoundedAnswer, target: NormalTarget): ExchangeVerdict {
  const { status } = answer;
  if (status === 200) return issued(answer.text, target);
  switch (classOfStatus(status)) {
    case 'token':
      return refused(answer.text, status);
    case 'throttle':
      return { kind: 'failed', error: throttled('exchange-throttled', retryAfterOf(answer)) };
    default: {
      // 401: our client credentials were refused (RFC 6749 §5.2 invalid_client): every exchange fails until fixed.
      const reason = status === 401 ? 'exchange-client-auth' : `exchange-status-${status}`;
      const demand = status === 503 ? namedRetryAfter(answer) : undefined;
      return { kind: 'failed', error: outage(reason, { retryAfter: retryAfterOf(answer), demand }) };
    }
  }
}

/** Classify a call that got no whole answer: an answer too large is one that cannot be read, the rest outages. */
export function classifyExchangeFailure(err: unknown): ExchangeVerdict {
  if (err instanceof RemoteFetchError && err.failure === 'too-large') return invalid();
  return { kind: 'failed', error: fetchFailure('exchange', err) };
}
