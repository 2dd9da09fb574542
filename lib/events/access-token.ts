// The receiver's access token at a transmitter (SSF 1.0 §7.1.1, authorization_schemes urn:ietf:rfc:6749): the
// client-credentials grant at the token endpoint, with the package's shared client authentication; held until
// shortly before it expires, and sent as `Authorization: Bearer` to the poll, stream and verification endpoints.
import { TokenAuthError } from '../base/errors';
import { fetchBounded, type BoundedAnswer } from '../fetch/bounded-fetch';
import { checkRemoteUrl } from '../fetch/remote-url';
import { fetchMetadata } from '../keys/metadata';
import { fetchFailure, outage, statusFailure } from '../remote/answer-class';
import { MAX_EXCHANGE_BYTES, readTokenResponse } from '../remote/exchange-answer';
import type { ResolvedClient } from './transmitter-options';

/** A token is used until this many seconds before its `expires_in` runs out. */
const EXPIRY_MARGIN = 30;
/** How long a token that names no `expires_in` is used. */
const UNNAMED_LIFETIME = 60;
/** Limit of one token request (discovery of the endpoint included). */
const TOKEN_TIMEOUT = 10;

/** The access token of one client at one transmitter. */
export interface TransmitterToken {
  /** A token to send now: the one held, or a new one. Rejects with a `verification_unavailable` TokenAuthError. */
  get(): Promise<string>;
  /** Forget the token held (the transmitter answered 401 to it). */
  forget(): void;
}

/** Where the client-credentials grant goes: the configured endpoint, or the one the transmitter's issuer publishes. */
async function tokenEndpoint(
  issuer: string,
  client: ResolvedClient,
  request: { deadline: number; signal: AbortSignal; allowInsecureHttp: boolean },
): Promise<string> {
  if (client.tokenEndpoint !== undefined) return client.tokenEndpoint.href;
  let found: unknown;
  try {
    found = (await fetchMetadata({ base: issuer, url: new URL(issuer) }, request)).tokenEndpoint;
  } catch (err) {
    throw outage('ssf-token-endpoint', { cause: err });
  }
  try {
    return checkRemoteUrl(found, 'token_endpoint', request.allowInsecureHttp).href;
  } catch {
    throw outage('ssf-token-endpoint');
  }
}

/** The token of `client` at the transmitter `issuer`, fetched when needed (one request at a time). */
export function transmitterToken(
  issuer: string,
  client: ResolvedClient,
  options: { clock: () => number; allowInsecureHttp: boolean; signal: AbortSignal },
): TransmitterToken {
  let held: { token: string; until: number } | undefined;
  let fetching: Promise<string> | undefined;

  async function fetchToken(): Promise<string> {
    const deadline = Date.now() + TOKEN_TIMEOUT * 1000;
    const url = await tokenEndpoint(issuer, client, { ...options, deadline });
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (client.scope !== undefined) form.set('scope', client.scope);
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
    };
    client.auth.apply(form, headers, url, options.clock());
    let answer: BoundedAnswer;
    try {
      answer = await fetchBounded(url, {
        headers,
        body: form.toString(),
        timeoutMs: Math.max(1, deadline - Date.now()),
        maxBytes: MAX_EXCHANGE_BYTES,
        signal: options.signal,
        kind: 'ssf',
      });
    } catch (err) {
      throw fetchFailure('ssf-token', err);
    }
    // 401 or 400 here is our client's configuration (RFC 6749 §5.2): an outage of the transmitter for us, not a SET's.
    if (answer.status !== 200) {
      const failure = statusFailure('ssf-token', answer);
      throw failure.code === 'invalid_token' ? outage(`ssf-token-status-${answer.status}`) : failure;
    }
    const issued = readTokenResponse(answer.text);
    if (issued === undefined || issued.tokenType.toLowerCase() !== 'bearer')
      throw new TokenAuthError('verification_unavailable', { reason: 'ssf-token-answer', retryAfter: 5 });
    const life = issued.expiresIn ?? UNNAMED_LIFETIME;
    held = {
      token: issued.accessToken,
      until: options.clock() + Math.max(1, life - Math.min(EXPIRY_MARGIN, life / 2)),
    };
    return issued.accessToken;
  }

  return {
    get() {
      if (held !== undefined && held.until > options.clock()) return Promise.resolve(held.token);
      fetching ??= fetchToken().finally(() => {
        fetching = undefined;
      });
      return fetching;
    },
    forget() {
      held = undefined;
    },
  };
}
