// TokenAuthError and its codes, statuses, challenges and facts: what every room refuses with.
import { MAX_ITEMS } from './printable';

/** Stable error codes: what a failure is, independent of its wording. */
export type TokenAuthErrorCode =
  | 'missing_token'
  | 'invalid_token'
  | 'token_expired'
  | 'insufficient_scope'
  | 'verification_unavailable'
  | 'invalid_request'
  | 'not_found'
  | 'method_not_allowed'
  | 'internal'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'insufficient_user_authentication'
  | 'exchange_refused'
  | 'forbidden';

/** The JSON body of every error answer: `{ status: 'error', message }`. */
export interface ErrorBody {
  status: 'error';
  message: string;
}

const STATUS: Record<TokenAuthErrorCode, number> = {
  missing_token: 401,
  invalid_token: 401,
  token_expired: 401,
  insufficient_scope: 403,
  verification_unavailable: 503,
  invalid_request: 400,
  not_found: 404,
  method_not_allowed: 405,
  internal: 500,
  invalid_dpop_proof: 401,
  use_dpop_nonce: 401,
  insufficient_user_authentication: 401,
  // RFC 8693 §2.2.2: the authorization server refused to exchange the token; a 403 with no challenge, since a new
  // access token from the client would not change the server's policy.
  exchange_refused: 403,
  // A verified token that does not meet a route's requirements (roles, claims, …: docs/authorization.md).
  forbidden: 403,
};

const MESSAGE: Record<TokenAuthErrorCode, string> = {
  missing_token: 'Missing access token',
  invalid_token: 'Invalid access token',
  token_expired: 'Access token expired',
  insufficient_scope: 'Insufficient scope',
  verification_unavailable: 'Token verification unavailable',
  invalid_request: 'Invalid request',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  internal: 'Internal server error',
  invalid_dpop_proof: 'Invalid DPoP proof',
  use_dpop_nonce: 'DPoP nonce required',
  insufficient_user_authentication: 'Insufficient user authentication',
  exchange_refused: 'Token exchange refused',
  forbidden: 'Forbidden',
};

/**
 * What is known of the token a failure is about, read from its header and payload once they were decoded: for
 * logs, debug lines and tracing. Never the token, nor any part of its signature.
 */
export interface TokenFacts {
  alg?: string;
  kid?: string;
  typ?: string;
  iss?: string;
  /**
   * The payload's `aud`: a string as the token has it, or of an array its first items (MAX_ITEMS + 1, so that a
   * debug line can say there were more), so that a remembered fault never holds more of a hostile array.
   */
  aud?: string | readonly unknown[];
}

/** Extra facts that shape an error's headers, or explain it to a log (never to a client). */
export interface TokenAuthErrorDetails {
  /** Public message; defaults to the code's standard message. */
  message?: string;
  /** Space-separated scopes for an `insufficient_scope` challenge. */
  scope?: string;
  /** Step-up (RFC 9470): the accepted `acr` values, space-separated, for `acr_values`. */
  acrValues?: string;
  /** Step-up (RFC 9470): the longest time since the user authenticated, in seconds, for `max_age`. */
  maxAge?: number;
  /** Seconds for `Retry-After` on a 503. */
  retryAfter?: number;
  /** Short internal reason for `onError` logging (`'signature'`, `'exp'`, …); never sent to a client. */
  reason?: string;
  /** The underlying error, for logging; never sent to a client. */
  cause?: unknown;
  /** Extra response headers (such as `Allow` on a 405). */
  headers?: Record<string, string>;
  /** Facts of the token (alg, kid, typ, iss), for logs only. */
  facts?: TokenFacts;
  /** What to check or change, as a sentence for logs (the accepted issuers of an `iss` refusal); never sent. */
  hint?: string;
}

/**
 * A failure to authenticate or authorize a request. `status`, `code`, `message` and `headers` are safe to send;
 * `reason` and `cause` are for logs only.
 */
export class TokenAuthError extends Error {
  /** HTTP status to answer with. */
  readonly status: number;
  /** Stable error code. */
  readonly code: TokenAuthErrorCode;
  /** Response headers that belong to this error (`WWW-Authenticate`, `Retry-After`, `Allow`). */
  headers: Record<string, string>;
  /** Internal reason, for logs. */
  readonly reason: string | undefined;
  /** Scopes named in an `insufficient_scope` challenge. */
  readonly scope: string | undefined;
  /** `acr_values` of an `insufficient_user_authentication` challenge (RFC 9470). */
  readonly acrValues: string | undefined;
  /** `max_age` of an `insufficient_user_authentication` challenge (RFC 9470), seconds. */
  readonly maxAge: number | undefined;
  /** Facts of the token the failure is about, when it was decoded far enough (for logs; never the token). */
  facts: TokenFacts | undefined;
  /**
   * What was expected and from which option (the accepted issuers or audiences, the algorithms the key allows, the
   * claims mode that fits), for logs and the NODE_DEBUG line; never sent. A refusal's own room sets it when only it
   * knows (what a key address answered); otherwise it is filled in from the configuration when the failure is
   * reported (`onError`, `next(err)`, a rejected `verify`). Names and values of the configuration, and of the token
   * at most its short header fields (`alg`, `typ`), quoted and cut as in a debug line; never the token.
   */
  hint: string | undefined;

  constructor(code: TokenAuthErrorCode, details: TokenAuthErrorDetails = {}) {
    super(details.message ?? MESSAGE[code], details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'TokenAuthError';
    this.code = code;
    this.status = STATUS[code];
    this.reason = details.reason;
    this.scope = details.scope;
    this.acrValues = details.acrValues;
    this.maxAge = details.maxAge;
    this.facts = details.facts;
    this.hint = details.hint;
    this.headers = { ...details.headers };
    if (code === 'verification_unavailable') this.headers['Retry-After'] = String(details.retryAfter ?? 30);
  }

  /** The body to send: `{ status: 'error', message }`. */
  toJSON(): ErrorBody {
    return { status: 'error', message: this.message };
  }
}

/** Token faults: answers about the token itself, safe to remember briefly. */
export function isTokenFault(err: TokenAuthError): boolean {
  return err.code === 'invalid_token' || err.code === 'token_expired';
}

/**
 * What a challenge says besides the failure itself, decided by the configuration and the route, never by the
 * request: the realm, the resource's metadata URL (RFC 9728 §5.1) and, on a 401 of a scoped route, its scopes.
 */
export interface ChallengeContext {
  readonly realm: string;
  /** `resource_metadata`: the metadata document's URL, when `resource` is configured. */
  readonly resourceMetadata: string | undefined;
  /** `scope` of a 401 on a route that needs scopes (MCP 2025-11-25), space-separated; empty for none. */
  readonly scope: string;
}

/**
 * The failure's own auth-params (RFC 6750 §3, RFC 9470 §3): `''` for a missing token (RFC 6750 §3.1: no error
 * code) and for a route's requirement not met (`forbidden`: RFC 6750 §3 challenges every request the token does
 * not enable, and without `error` no client starts a step-up that more scopes could not satisfy), undefined for a
 * failure that has no challenge (503, 500, and the DPoP codes, which dpop/binding.ts renders).
 */
export function challengeParams(err: TokenAuthError): string | undefined {
  switch (err.code) {
    case 'missing_token':
    case 'forbidden':
      return '';
    case 'invalid_token':
    case 'token_expired':
      return `error="invalid_token", error_description="${err.message}"`;
    case 'insufficient_scope':
      return `error="insufficient_scope", scope="${err.scope ?? ''}"`;
    case 'insufficient_user_authentication': {
      let params = `error="insufficient_user_authentication", error_description="${err.message}"`;
      if (err.acrValues !== undefined) params += `, acr_values="${err.acrValues}"`;
      if (err.maxAge !== undefined) params += `, max_age="${err.maxAge}"`;
      return params;
    }
    default:
      return undefined;
  }
}

/**
 * The auth-params every challenge of a failure ends with: the route's `scope` on a 401 (a 403 names its own),
 * and `resource_metadata` when a resource is configured.
 */
export function challengeTrailer(err: TokenAuthError, context: ChallengeContext): string {
  let trailer = '';
  if (err.status === 401 && context.scope !== '') trailer += `, scope="${context.scope}"`;
  if (context.resourceMetadata !== undefined) trailer += `, resource_metadata="${context.resourceMetadata}"`;
  return trailer;
}

/** The RFC 6750 §3 `WWW-Authenticate` Bearer challenge for a 401 or 403, or undefined for other failures. */
export function bearerChallenge(err: TokenAuthError, context: ChallengeContext): string | undefined {
  const params = challengeParams(err);
  if (params === undefined) return undefined;
  return `Bearer realm="${context.realm}"${params === '' ? '' : `, ${params}`}${challengeTrailer(err, context)}`;
}

/** Any thrown value as a TokenAuthError: ours pass through, anything else becomes an opaque 500. */
export function asTokenAuthError(err: unknown): TokenAuthError {
  if (err instanceof TokenAuthError) return err;
  return new TokenAuthError('internal', { reason: 'unexpected', cause: err });
}

/** The loggable facts of a decoded token: `alg`, `kid`, `typ` of its header, a string `iss` and its `aud`. */
export function tokenFacts(
  header: { alg: string; kid?: string; typ?: unknown },
  payload: Record<string, unknown> | undefined,
): TokenFacts {
  const facts: TokenFacts = { alg: header.alg };
  if (header.kid !== undefined) facts.kid = header.kid;
  if (typeof header.typ === 'string') facts.typ = header.typ;
  if (typeof payload?.iss === 'string') facts.iss = payload.iss;
  const aud = payload?.aud;
  if (typeof aud === 'string') facts.aud = aud;
  else if (Array.isArray(aud)) facts.aud = aud.slice(0, MAX_ITEMS + 1);
  return facts;
}

/**
 * `err` with more response headers, as a copy: a token's fault can be a cached error that every request sending
 * that token shares, so headers of one answer (its challenge) never go onto the shared error.
 */
export function withHeaders(err: TokenAuthError, headers: Record<string, string>): TokenAuthError {
  const retryAfter = err.headers['Retry-After'];
  return new TokenAuthError(err.code, {
    message: err.message,
    scope: err.scope,
    acrValues: err.acrValues,
    maxAge: err.maxAge,
    reason: err.reason,
    cause: err.cause,
    facts: err.facts,
    hint: err.hint,
    retryAfter: retryAfter === undefined ? undefined : Number(retryAfter),
    headers: { ...err.headers, ...headers },
  });
}

/** The error with its Bearer challenge (a copy; `err` as it is when it has a challenge, or needs none). */
export function withChallenge(err: TokenAuthError, context: ChallengeContext): TokenAuthError {
  const challenge = bearerChallenge(err, context);
  if (challenge === undefined || err.headers['WWW-Authenticate'] !== undefined) return err;
  return withHeaders(err, { 'WWW-Authenticate': challenge });
}
