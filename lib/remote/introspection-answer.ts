// An introspection answer read (RFC 7662 §2.2): plain JSON, or an RFC 9701 JWT whose signature, `typ`, issuer and
// audience are checked with the authorization server's own keys before a word of it is believed.
import type { KeyObject } from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import { isObject, isThenable } from '../base/values';
import { checkHeader, decodeJws, isJwsText, normalizeTyp, type DecodedJws } from '../jose/jws';
import { verifyJws } from '../jose/signature';
import type { SigningKeySource } from '../keys/source';

/** RFC 9701 §4.1: the media type of a signed introspection answer, and its JWT `typ`. */
export const INTROSPECTION_JWT_MEDIA_TYPE = 'application/token-introspection+jwt';

/** Retry-After (seconds) on an answer that cannot be believed: the AS is up, but something on the path is wrong. */
const RETRY_AFTER = 5;

/** An answer that says nothing trustworthy about the token: 503, never cached, counted by the breaker. */
export function unbelievable(reason: string, cause?: unknown): TokenAuthError {
  return new TokenAuthError('verification_unavailable', { reason, retryAfter: RETRY_AFTER, cause });
}

/** What the signed answer must be bound to: the AS that signs, and us, the client it answers. */
export interface SignedAnswerContext {
  issuer: string;
  clientId: string;
  /** The AS's signing keys (the discovered JWKS), found by the response's `kid` and `iss`. */
  keys: SigningKeySource;
  now: number;
  clockTolerance: number;
}

/**
 * RFC 9701 §5: the answer is a JWS signed by the AS (an algorithm and key of its JWKS, never `none` or a secret),
 * `typ` `token-introspection+jwt`, `iss` the AS, `aud` our client id, `iat` not in the future, and its
 * `token_introspection` member is the RFC 7662 answer. Anything else is an answer we cannot believe: 503.
 */
export async function readSignedAnswer(text: string, context: SignedAnswerContext): Promise<unknown> {
  const compact = text.trim();
  let decoded: DecodedJws;
  try {
    if (!isJwsText(compact)) throw new Error('not a compact JWS');
    decoded = decodeJws(compact);
    checkHeader(decoded.header, context.keys.algorithms);
  } catch (err) {
    throw unbelievable('introspection-jwt-malformed', err);
  }
  const typ = decoded.header.typ;
  if (typeof typ !== 'string' || normalizeTyp(typ) !== 'token-introspection+jwt')
    throw unbelievable('introspection-jwt-typ');
  const claims = decoded.payload;
  if (claims.iss !== context.issuer) throw unbelievable('introspection-jwt-iss');
  const aud = claims.aud;
  if (!(aud === context.clientId || (Array.isArray(aud) && aud.includes(context.clientId))))
    throw unbelievable('introspection-jwt-aud');
  if (typeof claims.iat !== 'number' || claims.iat > context.now + context.clockTolerance)
    throw unbelievable('introspection-jwt-iat');
  if (
    claims.exp !== undefined &&
    (typeof claims.exp !== 'number' || claims.exp <= context.now - context.clockTolerance)
  ) {
    throw unbelievable('introspection-jwt-exp');
  }

  let keys: readonly KeyObject[];
  try {
    const found = context.keys.keyFor(decoded.header, claims);
    const choice = isThenable(found) ? await found : found;
    // A key set with duplicate `kid`s answers its few candidates (keys/key-set.ts): any of them may have signed.
    keys = Array.isArray(choice) ? (choice as readonly KeyObject[]) : [choice as KeyObject];
  } catch (err) {
    // The AS's keys are out of reach: say so; a key it does not publish is an answer we cannot believe.
    if (err instanceof TokenAuthError && err.code === 'verification_unavailable') throw err;
    throw unbelievable('introspection-jwt-key', err);
  }
  const good = keys.some((key) => {
    try {
      return verifyJws(compact, decoded.signedEnd, decoded.header.alg, key);
    } catch {
      return false;
    }
  });
  if (!good) throw unbelievable('introspection-jwt-signature');
  return claims.token_introspection;
}

/** A plain JSON answer's body, parsed. */
export function readJsonAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw unbelievable('introspection-not-json');
  }
}

/**
 * RFC 7662 §2.2 on the parsed answer: `active: false` → 401 `invalid_token` (the token is not good, whatever the
 * reason: the AS need not say); `active: true` → the token's claims (everything but `active`), which the verifier
 * then holds to every rule a JWT's claims meet. No boolean `active` → an answer we cannot use: 503. An `iss`
 * other than the AS's → 401 (the AS vouches for another issuer's token; an absent `iss` is the AS's own).
 */
export function readAnswer(answer: unknown, issuer: string): Record<string, unknown> {
  if (!isObject(answer) || typeof answer.active !== 'boolean') throw unbelievable('introspection-answer');
  if (!answer.active) throw new TokenAuthError('invalid_token', { reason: 'introspection-inactive' });
  if (answer.iss !== undefined && answer.iss !== issuer) throw new TokenAuthError('invalid_token', { reason: 'iss' });
  const { active: _active, ...claims } = answer;
  return claims;
}
