// Refusal hints of the remote and sender-constraint rooms: a key set or discovery that did not answer, an
// introspection or upstream server, a breaker, the fleet's stores, DPoP proofs and mTLS certificates.
import type { TokenAuthError } from '../base/errors';
import { acceptedList } from '../token/issuer';
import { quote, seconds, type Hint } from './refusal-context';

const jwksFailure: Hint = (c, err) => {
  const failure = err.reason?.slice('jwks-'.length) ?? 'fetch';
  const why =
    failure === 'timeout'
      ? `did not answer within option "key.timeout" (or "discovery.timeout")`
      : failure === 'too-large'
        ? 'answered more than 1 MiB'
        : failure === 'closed'
          ? 'was closed by auth.close()'
          : failure === 'network'
            ? 'could not be reached (DNS, connection refused, TLS)'
            : 'did not answer with a usable JWKS';
  return `the key set of ${c.key} ${why}; expected a JSON { "keys": [...] } document with a signing key`;
};

const discoveryFailure: Hint = (c, err) => {
  const step = err.reason?.slice('discovery-'.length) ?? '';
  const why: Record<string, string> = {
    timeout: 'did not finish within option "discovery.timeout"',
    json: 'answered something other than JSON metadata',
    issuer: 'answered metadata without an issuer',
    'issuer-mismatch':
      'answered metadata whose issuer is not the configured base URL (RFC 8414 §3.3: give it exactly as the metadata names it, one trailing slash aside)',
    'jwks-uri': 'answered metadata without a usable jwks_uri',
    network: 'could not be reached (DNS, connection refused, TLS)',
    'too-large': 'answered more than the metadata bound',
  };
  const status = /^status-(\d+)$/.exec(step);
  const text =
    status !== null
      ? `answered HTTP ${status[1]} at /.well-known/openid-configuration and oauth-authorization-server`
      : (why[step] ?? 'failed');
  return `discovery of ${c.key} ${text}; expected OpenID Connect or RFC 8414 metadata under the issuer's base URL`;
};

const remoteFailure: Hint = (c, err) => {
  const reason = err.reason ?? '';
  const status = /-status-(\d+)$/.exec(reason);
  if (status !== null) return `${c.remote} answered HTTP ${status[1]}; expected 200 with a JSON answer`;
  if (reason.endsWith('-timeout')) return `${c.remote} did not answer within its option "timeout"`;
  if (reason.endsWith('-busy'))
    return `more calls to ${c.remote} were under way than its option "maxInflight" allows: a new token waits for none`;
  if (reason.includes('-shape:'))
    return `${c.remote} answered claims that are not Shape B (${reason.slice(reason.indexOf(':') + 1)})`;
  if (reason.startsWith('introspection-jwt-'))
    return `the signed introspection answer (RFC 9701) of ${c.remote} failed its ${reason.slice('introspection-jwt-'.length)} check`;
  return `${c.remote} could not be asked, or its answer could not be believed (${reason}); expected a JSON answer over HTTPS`;
};

/** A DPoP proof's check, by its name after `dpop:`. */
export const dpopHint: Hint = (c, err) => {
  const check = err.reason?.slice('dpop:'.length) ?? '';
  const dpop = c.options.dpop;
  switch (check) {
    case 'header':
      return 'expected a DPoP header holding one proof with an "Authorization: DPoP" token (RFC 9449 §4.1; option "dpop")';
    case 'nonce':
      return 'expected the current nonce in the proof (option "dpop.nonce"): the DPoP-Nonce header of this answer carries it';
    case 'replay':
      return 'the proof\'s jti was used before: each proof is single use (RFC 9449 §11.1; option "dpop.replay" remembers them)';
    case 'alg':
      return `expected a proof alg ${acceptedList(dpop === undefined ? [] : [...dpop.algorithms])}, from option "dpop.algorithms"`;
    case 'iat':
    case 'iat-window':
      return `expected the proof's iat within option "dpop.iatWindow" (${seconds(dpop?.iatWindow ?? 0)}) of now, give or take option "clockTolerance"`;
    case 'request-origin':
      return 'the request\'s Host (behind a proxy "trust proxy" trusts, X-Forwarded-Host and -Proto) is not host[:port] (a name, an IPv4 address or a [IPv6] literal, an optional port) with http or https, so no htu can match; option "resource" holds proofs to the resource\'s own origin';
    case 'request-uri':
      return 'the request\'s path has a dot segment or a backslash, which a URL parser would move, so no htu can match (RFC 9449 §4.3; option "dpop")';
    case 'htu':
      return 'expected htu to be this request\'s URI without query or fragment; behind a proxy, Express "trust proxy" gives the client\'s scheme and host (option "dpop")';
    case 'bearer-refused':
      return 'option "dpop.required" refuses Bearer tokens: expected "Authorization: DPoP <token>" with a DPoP proof';
    case 'bound-token-as-bearer':
      return 'a DPoP-bound token (cnf.jkt) came as a Bearer token: expected "Authorization: DPoP" with a proof (RFC 9449 §7.2; option "dpop")';
    case 'token-not-bound':
      return 'a token sent with the DPoP scheme has no cnf.jkt: ask the authorization server for a DPoP-bound token (option "dpop")';
    case 'replay-store':
    case 'replay-share':
      return 'the store of option "dpop.replay" cannot promise single use right now (unreachable, full, or this proof key holds its whole share)';
    default:
      return `the DPoP proof fails RFC 9449 §4.3's check of ${quote(check)} (option "dpop")`;
  }
};

const storeHint: Hint = () =>
  'the Redis store given to option "revocation" (or "dpop.replay", "cache.shared") is unreachable or busy: see createRedisStore\'s bounds (docs/fleet.md)';

/** What the token endpoint did, for an exchange failure that no exact row names. */
function exchangeFault(err: TokenAuthError): string {
  const reason = err.reason ?? '';
  if (err.code === 'exchange_refused')
    return `refused this exchange (${reason.replace('exchange-status-', 'HTTP ')}) without an error code of RFC 6749 §5.2`;
  if (reason === 'exchange-answer-invalid')
    return 'answered without access_token and token_type, or more than 64 KiB (RFC 8693 §2.2.1)';
  if (reason === 'exchange-throttled') return 'answered 429: new exchanges wait until its Retry-After';
  if (reason === 'exchange-client-auth')
    return 'refused our client authentication (401): check options "tokenExchange.clientId" and its clientSecret or privateKey';
  if (reason.startsWith('exchange-endpoint-'))
    return 'is unknown: the metadata lists no usable token_endpoint; give option "tokenExchange.endpoint"';
  return 'could not be reached, timed out (option "tokenExchange.timeout") or answered 5xx';
}

/** Rows of the remote and sender rooms, by exact reason. */
export const REMOTE_HINTS: Readonly<Record<string, Hint>> = {
  'jwks-closed': () => 'auth.close() was called: option "key" no longer fetches keys',
  'breaker-open': (c) =>
    `the circuit breaker in front of ${c.remote} is open after consecutive failures (its option "breaker"): one probe goes through after Retry-After`,
  'revocation-not-loaded': () =>
    'the shared revocation list of option "revocation" has not loaded yet: it answers once Redis does',
  'store-unavailable': storeHint,
  'store-busy': storeHint,
  'store-eviction-policy': () =>
    'the Redis of option "revocation" (or "dpop.replay") evicts keys under memory pressure: set maxmemory-policy noeviction (docs/fleet.md)',
  'revocation-set-missing': () =>
    'the revocation list of option "revocation" vanished from Redis (evicted or flushed): this instance keeps and writes back the revocations it holds (docs/fleet.md)',
  'revoke-outcome-unknown': () =>
    'store.revoke() of option "revocation" could not confirm the write: retry, revoking is idempotent',
  'revocation-store-full': () =>
    'the store of option "revocation" holds its createRedisStore / createMemoryRevocationStore option "maxRules" rule entries: the rule was not stored; retry after Retry-After, when the earliest rule leaves, or raise maxRules (docs/fleet.md)',
  'revocation-rules-unbounded': () =>
    'the store of option "revocation" holds subject or session rules and this TokenAuth has no option "maxLifetime": set it so that no token outlives a rule (docs/fleet.md)',
  'introspection-inactive': (c) =>
    `${c.remote} answered active: false: the token is expired, revoked, or not one of this server's`,
  'introspection-client-auth': (c) =>
    `${c.remote} refused our client authentication: check options "introspection.clientId" and its clientSecret or privateKey (introspection.authMethod)`,
  'introspection-endpoint-missing': (c) =>
    `the metadata of ${c.key} names no introspection_endpoint: give option "introspection.endpoint"`,
  'introspection-unsupported-token-type': (c) =>
    `${c.remote} does not introspect this kind of token (unsupported_token_type)`,
  'upstream-401': (c) => `${c.remote} refused the token (its verify endpoint answered 401)`,
  'upstream-401-shared': (c) =>
    `${c.remote} refused the token for another instance of the fleet (option "cache.shared")`,
  'upstream-403': (c) => `${c.remote} answered 403: the token lacks scopes the upstream service requires`,
  'exchange-busy': () =>
    'option "tokenExchange.maxInflight" exchanges are under way already: a new one is refused at once, never queued',
  'exchange-request-not-verified': () =>
    'auth.exchange(req) needs a request that this TokenAuth\'s middleware verified: option "tokenExchange" trades only a token this instance verified (requireVerifiedUser before the route)',
};

/** Rows of the remote and sender rooms, by the start of a reason. */
export const REMOTE_PREFIX_HINTS: ReadonlyArray<readonly [string, Hint]> = [
  ['dpop:', dpopHint],
  [
    'mtls:',
    () =>
      'expected a client certificate whose SHA-256 thumbprint is the token\'s cnf["x5t#S256"] (RFC 8705 §3; option "mtls.getCertificate" reads it)',
  ],
  ['jwks-', jwksFailure],
  ['discovery-', discoveryFailure],
  ['introspection-', remoteFailure],
  ['upstream-', remoteFailure],
  ['exchange-', (_c, err) => `the token endpoint of option "tokenExchange" ${exchangeFault(err)}`],
  [
    'pem-',
    (_c, err) =>
      `the AWS ALB preset's key server (option "keysBaseURL" or the region's) ${
        err.reason === 'pem-cooldown'
          ? 'was asked for 4 new kids within 30 s already: the next is fetched after Retry-After'
          : err.reason === 'pem-unusable'
            ? 'answered something other than a PEM EC public key'
            : err.reason === 'pem-closed'
              ? 'is no longer asked: auth.close() was called'
              : 'could not be reached, timed out or answered other than 200'
      }`,
  ],
];
