// A JWT the test issuer reads at its token endpoint (a subject token, a client assertion): decoded by the one
// compact-JWS reader, its `alg` the one expected, signed by the key its `kid` names, checked by the one verify.
import type { KeyObject } from 'node:crypto';
import { checkHeader, decodeJws, type JwsHeader } from '../jose/jws';
import { verifyJws } from '../jose/signature';

/** A JWT whose signature held, and its time claims at `now` (`exp` required, `nbf` when present). */
export interface SignedJwt {
  header: JwsHeader;
  payload: Record<string, unknown>;
}

/**
 * The header and payload of `token` when it is a compact JWS of algorithm `alg` (never `none`, no `crit`) signed by
 * `keyFor(kid)`, with an integer `exp` after `now` and no `nbf` after it; undefined for anything else, whatever the
 * fault (the endpoint answers one error for all: the token's text never reaches an answer).
 */
export function readSignedJwt(
  token: string,
  alg: string,
  keyFor: (kid: string | undefined) => KeyObject | undefined,
  now: number,
): SignedJwt | undefined {
  try {
    const { header, payload, signedEnd } = decodeJws(token);
    checkHeader(header, new Set([alg]));
    const key = keyFor(header.kid);
    if (key === undefined || !verifyJws(token, signedEnd, alg, key)) return undefined;
    const { exp, nbf } = payload;
    if (typeof exp !== 'number' || !Number.isInteger(exp) || exp <= now) return undefined;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now)) return undefined;
    return { header, payload };
  } catch {
    return undefined;
  }
}
