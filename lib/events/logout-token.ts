// OpenID Connect Back-Channel Logout 1.0: a logout token validated as §2.6 says, with the keys this TokenAuth already
// uses for its issuer, through the one JOSE core; its `sid` becomes a session rule (with its `sub`), else its `sub` a
// subject rule.
import type { KeyObject } from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { ALGORITHMS } from '../jose/algorithms';
import { checkHeader, decodeJws, isJwsText, normalizeTyp, type DecodedJws } from '../jose/jws';
import { verifyJws } from '../jose/signature';
import { keysForHeader, type SigningKeySource } from '../keys/source';
import type { RuleRequest } from './rules';
import { MAX_SET_BYTES, SetRefusal } from './set';

/** Back-Channel Logout 1.0 §2.4: the event member every logout token carries. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * `typ` values accepted (§2.4 recommends `logout+jwt`; Keycloak sends `JWT`; absent is allowed), as normalizeTyp
 * reads them. Any other `typ` (`at+jwt`, `secevent+jwt`, …) is a token of another kind: refused.
 */
const LOGOUT_TYPES: ReadonlySet<string> = new Set(['logout+jwt', 'jwt']);
const MAX_TEXT = 1024;

/** The issuer whose logout tokens are taken, and how they are checked. */
export interface LogoutSource {
  /** The OP's issuer: one of this TokenAuth's issuers. */
  readonly issuer: string;
  /** This application's client id at the OP: the logout token's `aud`. */
  readonly clientId: string;
  /** This TokenAuth's own key source (it routes by `iss`). */
  readonly keys: SigningKeySource;
}

/** A logout token checked: its `jti` and `exp` (for replay), its issuer and what it revokes. */
export interface VerifiedLogout {
  readonly jti: string;
  readonly exp: number;
  readonly iat: number;
  readonly rule: RuleRequest;
  readonly format: 'sid' | 'sub';
}

const refuse = (reason: string) => new SetRefusal('invalid_request', reason);
const isText = (value: unknown): value is string =>
  typeof value === 'string' && value !== '' && value.length <= MAX_TEXT;

/** The asymmetric algorithms of this TokenAuth's keys: a logout token is never verified with a shared secret. */
export function logoutAlgorithms(keys: SigningKeySource): ReadonlySet<string> {
  return new Set([...keys.algorithms].filter((alg) => ALGORITHMS[alg].family !== 'hmac'));
}

/** §2.4 and §2.6 on the claims, before any key is looked up. */
function checkClaims(decoded: DecodedJws, source: LogoutSource, now: number, tolerance: number) {
  const { header, payload } = decoded;
  if (header.typ !== undefined && (typeof header.typ !== 'string' || !LOGOUT_TYPES.has(normalizeTyp(header.typ))))
    throw refuse('logout-typ');
  try {
    checkHeader(header, logoutAlgorithms(source.keys));
  } catch (err) {
    throw refuse(`logout-${(err as TokenAuthError).reason ?? 'alg'}`);
  }
  if (payload.iss !== source.issuer) throw refuse('logout-issuer');
  const aud = payload.aud;
  if (!(aud === source.clientId || (Array.isArray(aud) && aud.includes(source.clientId))))
    throw refuse('logout-audience');
  const { iat, exp, jti, sid, sub, events } = payload;
  if (typeof iat !== 'number' || !Number.isFinite(iat) || iat > now + tolerance) throw refuse('logout-iat');
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw refuse('logout-exp-missing');
  if (exp <= now - tolerance) throw refuse('logout-expired');
  if (!isText(jti)) throw refuse('logout-jti');
  if (!isObject(events) || !isObject(events[BACKCHANNEL_LOGOUT_EVENT])) throw refuse('logout-event');
  // §2.6 step 6: a nonce would make it an ID token (and one could be replayed as the other).
  if (payload.nonce !== undefined) throw refuse('logout-nonce');
  if (sid !== undefined && !isText(sid)) throw refuse('logout-sid');
  if (sub !== undefined && !isText(sub)) throw refuse('logout-sub');
  if (sid === undefined && sub === undefined) throw refuse('logout-no-sid-or-sub');
  return { iat, exp, jti, sid: sid as string | undefined, sub: sub as string | undefined };
}

/**
 * Read and verify a logout token. Throws a SetRefusal (400 per §2.8), or rejects with a `verification_unavailable`
 * TokenAuthError when the issuer's keys cannot be had now (503).
 */
export async function readLogoutToken(text: string, source: LogoutSource, now: number, tolerance: number) {
  if (Buffer.byteLength(text) > MAX_SET_BYTES) throw refuse('logout-too-large');
  if (text === '' || !isJwsText(text)) throw refuse('logout-not-jws');
  let decoded: DecodedJws;
  try {
    decoded = decodeJws(text);
  } catch (err) {
    throw refuse(`logout-${(err as TokenAuthError).reason ?? 'malformed'}`);
  }
  const claims = checkClaims(decoded, source, now, tolerance);
  let keys: readonly KeyObject[];
  try {
    keys = await keysForHeader(source.keys, decoded.header, decoded.payload);
  } catch (err) {
    if (err instanceof TokenAuthError && err.code === 'verification_unavailable') throw err;
    throw refuse('logout-key');
  }
  if (!keys.some((key) => verifyJws(text, decoded.signedEnd, decoded.header.alg, key)))
    throw refuse('logout-signature');
  const { iat, exp, jti, sid, sub } = claims;
  const rule: RuleRequest =
    sid !== undefined
      ? { rule: 'session', iss: source.issuer, sid, ...(sub === undefined ? {} : { sub }), before: iat }
      : { rule: 'subject', iss: source.issuer, sub: sub as string, before: iat };
  const verified: VerifiedLogout = { jti, exp, iat, rule, format: sid !== undefined ? 'sid' : 'sub' };
  return verified;
}
