// A Security Event Token read and verified (RFC 8417, SSF 1.0 §4.1) through the one JOSE core: compact JWS, typ
// secevent+jwt, a configured transmitter's iss and aud, iat within maxAge, no sub, no exp, an events object; signed by
// a key of the transmitter's jwks_uri (never a secret, never `none`). A refusal carries its RFC 8935 §2.4 error code.
import type { KeyObject } from 'node:crypto';
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';
import { checkHeader, decodeJws, isJwsText, normalizeTyp, type DecodedJws } from '../jose/jws';
import { verifyJws } from '../jose/signature';
import { keysForHeader, type SigningKeySource } from '../keys/source';

/** Largest SET read (64 KiB); real ones are a kilobyte or two. */
export const MAX_SET_BYTES = 64 * 1024;
/** Most event members one SET may carry (SSF 1.0 §4.2.1: one, or alternative URIs of the same event). */
export const MAX_EVENTS_PER_SET = 8;
/** Longest `jti` read. */
const MAX_JTI = 256;

/** RFC 8935 §2.4's error codes, and SSF 1.0 §8.1.4.1's `invalid_state`. */
export type SetErrorCode =
  | 'invalid_request'
  | 'invalid_key'
  | 'invalid_issuer'
  | 'invalid_audience'
  | 'authentication_failed'
  | 'access_denied'
  | 'invalid_state';

/** A SET refused: its RFC 8935 code for the transmitter, and a short reason for logs and stats. */
export class SetRefusal extends Error {
  constructor(
    readonly err: SetErrorCode,
    readonly reason: string,
  ) {
    super(`security event refused: ${reason}`);
    this.name = 'SetRefusal';
  }
}

/** The transmitter a SET must come from: its issuer, the audience it addresses us by, its keys. */
export interface SetSource {
  readonly issuer: string;
  readonly audience: string;
  readonly keys: SigningKeySource;
}

/** A SET whose signature, issuer, audience and times were checked. */
export interface VerifiedSet {
  readonly source: SetSource;
  readonly jti: string;
  readonly iat: number;
  readonly payload: Readonly<Record<string, unknown>>;
  /** Its events, type → event object. */
  readonly events: ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]>;
}

/** What reading a SET needs besides the text. */
export interface SetRules {
  /** The transmitter named by an `iss`, if one is configured. */
  sourceFor(iss: string): SetSource | undefined;
  now: number;
  clockTolerance: number;
  /** Oldest `iat` accepted, in seconds before `now` (`maxAge`). */
  maxAge: number;
}

function namesAudience(aud: unknown, audience: string): boolean {
  if (typeof aud === 'string') return aud === audience;
  return Array.isArray(aud) && aud.includes(audience);
}

/** The checks before any key is fetched or signature checked: cheap, so that a flood of forgeries costs little. */
function checkClaims(decoded: DecodedJws, rules: SetRules): { source: SetSource; jti: string; iat: number } {
  const { header, payload } = decoded;
  if (typeof header.typ !== 'string' || normalizeTyp(header.typ) !== 'secevent+jwt')
    throw new SetRefusal('invalid_request', 'set-typ');
  const source = typeof payload.iss === 'string' ? rules.sourceFor(payload.iss) : undefined;
  if (source === undefined) throw new SetRefusal('invalid_issuer', 'set-issuer');
  try {
    checkHeader(header, source.keys.algorithms);
  } catch (err) {
    throw new SetRefusal('invalid_request', `set-${(err as TokenAuthError).reason ?? 'alg'}`);
  }
  if (!namesAudience(payload.aud, source.audience)) throw new SetRefusal('invalid_audience', 'set-audience');
  // SSF 1.0 §4.1.2 and §4.1.7: a SET never carries `sub` or `exp`, so that no other JWT passes for one.
  if (payload.sub !== undefined) throw new SetRefusal('invalid_request', 'set-sub');
  if (payload.exp !== undefined) throw new SetRefusal('invalid_request', 'set-exp');
  const { jti, iat } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_JTI) throw new SetRefusal('invalid_request', 'set-jti');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new SetRefusal('invalid_request', 'set-iat');
  if (iat > rules.now + rules.clockTolerance) throw new SetRefusal('invalid_request', 'set-iat-future');
  if (iat < rules.now - rules.maxAge - rules.clockTolerance) throw new SetRefusal('invalid_request', 'set-too-old');
  const events = payload.events;
  if (!isObject(events)) throw new SetRefusal('invalid_request', 'set-events');
  const types = Object.keys(events);
  if (types.length === 0 || types.length > MAX_EVENTS_PER_SET || !types.every((type) => isObject(events[type])))
    throw new SetRefusal('invalid_request', 'set-events');
  return { source, jti, iat };
}

/** The keys a header may name at its transmitter: an unknown key is the SET's fault, keys out of reach an outage. */
async function keysFor(source: SetSource, decoded: DecodedJws): Promise<readonly KeyObject[]> {
  try {
    return await keysForHeader(source.keys, decoded.header, decoded.payload);
  } catch (err) {
    if (err instanceof TokenAuthError && err.code === 'verification_unavailable') throw err;
    throw new SetRefusal('invalid_key', 'set-key');
  }
}

/**
 * Read and verify a SET. Throws a SetRefusal (the transmitter's fault: 400 with its code, or `setErrs` when polled),
 * or rejects with a `verification_unavailable` TokenAuthError when the transmitter's keys cannot be had now (503).
 */
export async function readSet(body: string, rules: SetRules): Promise<VerifiedSet> {
  if (Buffer.byteLength(body) > MAX_SET_BYTES) throw new SetRefusal('invalid_request', 'set-too-large');
  const compact = body.trim();
  if (compact === '' || !isJwsText(compact)) throw new SetRefusal('invalid_request', 'set-not-jws');
  let decoded: DecodedJws;
  try {
    decoded = decodeJws(compact);
  } catch (err) {
    throw new SetRefusal('invalid_request', `set-${(err as TokenAuthError).reason ?? 'malformed'}`);
  }
  const { source, jti, iat } = checkClaims(decoded, rules);
  const keys = await keysFor(source, decoded);
  const good = keys.some((key) => verifyJws(compact, decoded.signedEnd, decoded.header.alg, key));
  if (!good) throw new SetRefusal('invalid_key', 'set-signature');
  const events = decoded.payload.events as Record<string, Record<string, unknown>>;
  return {
    source,
    jti,
    iat,
    payload: decoded.payload,
    events: Object.keys(events).map((type) => [type, events[type]] as const),
  };
}
