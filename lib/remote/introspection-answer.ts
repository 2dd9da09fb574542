// An introspection answer read (RFC 7662 §2.2): plain JSON, or an RFC 9701 JWT whose signature, `typ`, issuer and
// audience are checked with the authorization server's own keys before a word of it is believed.
import type { KeyObject } from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import { MAX_SERVER_TEXT, quotedValue } from '../base/printable';
import { isObject } from '../base/values';
import { aboutToken } from './answer-class';
import { checkHeader, decodeJws, isJwsText, normalizeTyp, type DecodedJws } from '../jose/jws';
import { verifyJws } from '../jose/signature';
import { keysForHeader, type SigningKeySource } from '../keys/source';

/** RFC 9701 §4.1: the media type of a signed introspection answer, and its JWT `typ`. */
export const INTROSPECTION_JWT_MEDIA_TYPE = 'application/token-introspection+jwt';

/** Retry-After (seconds) on an answer that cannot be believed: the AS is up, but something on the path is wrong. */
const RETRY_AFTER = 5;

/**
 * An answer that says nothing trustworthy about the token: 503, never cached. Not an outage (the server answered,
 * and one client's token can draw some of these, such as an `aud` of another API), so the breaker does not count it.
 */
export function unbelievable(
  reason: string,
  details: { cause?: unknown; hint?: string; retryAfter?: number } = {},
): TokenAuthError {
  return new TokenAuthError('verification_unavailable', { reason, retryAfter: RETRY_AFTER, ...details });
}

/** What the signed answer must be bound to: the AS that signs, us whom it answers, and the time of the call. */
export interface SignedAnswerContext {
  issuer: string;
  /** This resource server's names, any of which the answer's `aud` may be (RFC 9701 §5): client id, audience, resource. */
  audiences: readonly string[];
  /** The AS's signing keys (the discovered JWKS), found by the response's `kid` and `iss`. */
  keys: SigningKeySource;
  now: number;
  clockTolerance: number;
  /** The call's own window in seconds (its timeout and the clock tolerance): an older `iat` is a stale answer. */
  window: number;
}

/** A signed answer read: the RFC 7662 answer it carries, and its `iat` (seconds). */
export interface SignedAnswer {
  answer: unknown;
  iat: number;
}

function namesUs(aud: unknown, audiences: readonly string[]): boolean {
  if (typeof aud === 'string') return audiences.includes(aud);
  return Array.isArray(aud) && aud.some((one) => typeof one === 'string' && audiences.includes(one));
}

/**
 * RFC 9701 §5: the answer is a JWS signed by the AS (an algorithm and key of its JWKS, never `none` or a secret),
 * `typ` `token-introspection+jwt`, `iss` the AS, `aud` one of our names (client id, `audience`, `resource`), `iat`
 * neither in the future nor older than the call's window, and its `token_introspection` member is the RFC 7662
 * answer. Anything else is an answer we cannot believe: 503.
 */
export async function readSignedAnswer(text: string, context: SignedAnswerContext): Promise<SignedAnswer> {
  const compact = text.trim();
  let decoded: DecodedJws;
  try {
    if (!isJwsText(compact)) throw new Error('not a compact JWS');
    decoded = decodeJws(compact);
    checkHeader(decoded.header, context.keys.algorithms);
  } catch (err) {
    throw unbelievable('introspection-jwt-malformed', { cause: err });
  }
  const typ = decoded.header.typ;
  if (typeof typ !== 'string' || normalizeTyp(typ) !== 'token-introspection+jwt')
    throw unbelievable('introspection-jwt-typ');
  const claims = decoded.payload;
  if (claims.iss !== context.issuer) throw unbelievable('introspection-jwt-iss');
  if (!namesUs(claims.aud, context.audiences)) {
    const expected = context.audiences.map((name) => JSON.stringify(name)).join(', ');
    throw unbelievable('introspection-jwt-aud', {
      hint: `the signed answer's aud is ${quotedValue(claims.aud, MAX_SERVER_TEXT)}; expected one of ${expected} (introspection.clientId, audience, resource)`,
    });
  }
  const iat = claims.iat;
  if (typeof iat !== 'number' || iat > context.now + context.clockTolerance)
    throw unbelievable('introspection-jwt-iat');
  // Older than the call itself could make it: an answer kept and played back (RFC 9701 answers name no token).
  if (iat < context.now - context.window) throw unbelievable('introspection-jwt-stale');
  if (
    claims.exp !== undefined &&
    (typeof claims.exp !== 'number' || claims.exp <= context.now - context.clockTolerance)
  ) {
    throw unbelievable('introspection-jwt-exp');
  }

  let keys: readonly KeyObject[];
  try {
    // A key set with duplicate `kid`s answers its few candidates (keys/key-set.ts): any of them may have signed.
    keys = await keysForHeader(context.keys, decoded.header, claims);
  } catch (err) {
    // The AS's keys are out of reach: say so; a key it does not publish is an answer we cannot believe.
    if (err instanceof TokenAuthError && err.code === 'verification_unavailable') throw err;
    throw unbelievable('introspection-jwt-key', { cause: err });
  }
  const good = keys.some((key) => {
    try {
      return verifyJws(compact, decoded.signedEnd, decoded.header.alg, key);
    } catch {
      return false;
    }
  });
  if (!good) throw unbelievable('introspection-jwt-signature');
  return { answer: claims.token_introspection, iat };
}

/** A plain JSON answer's body, parsed; no JSON is an answer of the wrong shape about this token: 401. */
export function readJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw aboutToken('introspection-not-json');
  }
}

/**
 * `token_type` values of an access token (RFC 7662 §2.2 names RFC 6749 §7.1's types, case-insensitive: `Bearer`,
 * RFC 9449's `DPoP`; RFC 8693's `N_A` (§2.2.1) and `access_token` identifier (§3)). A refresh token's or an ID
 * token's answer is no access token's.
 */
const ACCESS_TOKEN_TYPES = new Set([
  'bearer',
  'dpop',
  'n_a',
  'access_token',
  'urn:ietf:params:oauth:token-type:access_token',
]);

const lower = (letter: string) => letter.toLowerCase();

/**
 * RFC 7662 §2.2 on the parsed answer: `active: false` → 401 `invalid_token` (the token is not good, whatever the
 * reason: the AS need not say); `active: true` → the token's claims (everything but `active`), which the verifier
 * then holds to every rule a JWT's claims meet. No boolean `active` → an answer of the wrong shape about this token,
 * and a `token_type` that is not an access token's → the token is none: both 401. An `iss` other than the AS's →
 * 401 (the AS vouches for another issuer's token); an absent `iss` is the AS's own, and the claims say so, so that
 * subject and session rules, which name the issuer (docs/fleet.md), find the token.
 */
export function readAnswer(answer: unknown, issuer: string): Record<string, unknown> {
  if (!isObject(answer) || typeof answer.active !== 'boolean') throw aboutToken('introspection-answer');
  if (!answer.active) throw new TokenAuthError('invalid_token', { reason: 'introspection-inactive' });
  const type = answer.token_type;
  // ASCII case only: a Unicode fold would read `access_to\u212Aen` (Kelvin sign) as `access_token`.
  if (type !== undefined && (typeof type !== 'string' || !ACCESS_TOKEN_TYPES.has(type.replace(/[A-Z]/g, lower))))
    throw new TokenAuthError('invalid_token', { reason: 'introspection-token-type' });
  if (answer.iss !== undefined && answer.iss !== issuer) throw new TokenAuthError('invalid_token', { reason: 'iss' });
  const { active: _active, ...claims } = answer;
  if (claims.iss === undefined) claims.iss = issuer;
  return claims;
}
