// Hints of the security event receiver (auth.securityEvents(), docs/continuous-access.md): a SET or a logout token
// refused, a transmitter that did not answer as SSF 1.0 says, an event no rule could be stored for. They reach
// onError (never the transmitter, which gets RFC 8935's fixed descriptions) and name the option that decides.
import type { Hint } from './refusal-context';

/** Why a logout token was refused (OpenID Connect Back-Channel Logout 1.0 §2.6), by the reason's detail. */
const LOGOUT: Readonly<Record<string, string>> = {
  typ: 'a typ of logout+jwt, JWT or none',
  issuer: 'an iss that is option "backchannelLogout.issuer"',
  audience: 'an aud naming option "backchannelLogout.clientId"',
  iat: 'an iat no later than now and within option "maxAge"',
  'exp-missing': 'an exp (§2.4 requires it; some older identity providers leave it out)',
  expired: 'an exp in the future',
  jti: 'a jti not seen before',
  event: 'an events member holding http://schemas.openid.net/event/backchannel-logout',
  nonce: 'no nonce (§2.4 forbids one, so that an ID token cannot pass as a logout token)',
  sid: 'a sid that is a string',
  sub: 'a sub that is a string',
  'no-sid-or-sub': 'a sid, a sub or both',
  'too-large': 'a logout token of at most 64 KiB',
  'not-jws': 'a compact JWS',
  key: 'a kid among the keys of option "backchannelLogout.issuer"\'s jwks_uri',
  signature: 'a signature by the keys of option "backchannelLogout.issuer"\'s jwks_uri',
};

const logoutHint: Hint = (_c, err) => {
  const detail = err.reason?.slice('logout-'.length) ?? '';
  const expected = LOGOUT[detail] ?? 'a logout token as Back-Channel Logout 1.0 §2.4 defines it';
  return `a logout token was refused, no session rule stored: expected ${expected} (option "backchannelLogout")`;
};

const setHint: Hint = () =>
  'a SET was refused, no rule stored: expected a compact JWS of typ secevent+jwt, signed by a key of the transmitter\'s jwks_uri, its iss and aud those of option "transmitters" (issuer, audience), without sub or exp, its iat within option "maxAge" (docs/continuous-access.md, "What a SET must be")';

/** Why a call to a transmitter (metadata, token, stream, poll) failed, by the reason's detail. */
const SSF: Readonly<Record<string, string>> = {
  'token-answer':
    'its token endpoint did not answer with an access token (the client credentials grant of option "transmitters" stream or poll\'s clientId and secret)',
  'metadata-json': 'its SSF metadata (/.well-known/ssf-configuration) was not a JSON object',
  'metadata-issuer': 'its SSF metadata names another issuer than option "transmitters" issuer',
  'metadata-jwks-uri': 'its SSF metadata names no usable jwks_uri',
  'poll-answer': 'its poll endpoint answered something other than RFC 8936 JSON { sets, moreAvailable }',
  'poll-failed': 'its poll endpoint did not answer; polling backs off and goes on (option "transmitters" poll.timeout)',
  'poll-closed': 'polling was stopped by close()',
  'poll-no-endpoint': 'its stream names no poll endpoint: give option "transmitters" poll.endpoint',
  'stream-unverified':
    'no verification event arrived within option "transmitters" stream.timeout: check that the transmitter can reach stream.endpointUrl (push) or that polling works',
  'setup-failed': 'setting the transmitter up failed (metadata, keys, stream)',
};

const ssfHint: Hint = (_c, err) => {
  const detail = err.reason?.slice('ssf-'.length) ?? '';
  const why =
    SSF[detail] ??
    (detail.startsWith('metadata-')
      ? 'its SSF metadata could not be read'
      : detail.startsWith('stream-')
        ? 'its stream could not be read, created or verified as SSF 1.0 §8 says'
        : 'it did not answer as SSF 1.0 says');
  return `the security event transmitter: ${why} (option "transmitters", docs/continuous-access.md, "When something fails")`;
};

/** Hints by the start of a reason: logout tokens, SETs, calls to a transmitter. */
export const EVENT_PREFIX_HINTS: ReadonlyArray<readonly [string, Hint]> = [
  ['logout-', logoutHint],
  ['set-', setHint],
  ['ssf-', ssfHint],
];

/** Hints by exact reason: an event read and accepted, whose rule could not be stored or named. */
export const EVENT_HINTS: Readonly<Record<string, Hint>> = {
  'action-failed': () =>
    'a function of option "actions" threw or answered something other than a list of at most 16 rules; the event is answered 503 (push) or left unacknowledged (poll), so it comes back',
  'subject-unmapped': () =>
    'the event names a subject no rule can name: map its format to the sub of your tokens with option "subjects", or ignore its type with option "actions"',
  'rule-not-stored': () =>
    'the rule of an accepted event could not be stored (option "revocation": its store full or out of reach); the event is answered 503 (push) or left unacknowledged (poll), so it comes back',
};
