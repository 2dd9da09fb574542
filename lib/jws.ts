import { TokenAuthError } from './errors';
import { isObject } from './claims';

/** A JOSE header as decoded; only `alg`, `kid` and `crit` are acted on, `jku`/`x5u`/`jwk`/`x5c` never are. */
export interface JwsHeader {
  alg: string;
  kid?: string;
  typ?: string;
  [parameter: string]: unknown;
}

/** A compact JWS split and decoded, signature not yet checked. */
export interface DecodedJws {
  header: JwsHeader;
  payload: Record<string, unknown>;
  /** Length of the payload's JSON text: a cheap measure of the claims' size for the cache. */
  payloadLength: number;
}

function invalid(reason: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason });
}

function decodeJsonObject(segment: string, what: string): [Record<string, unknown>, number] {
  // A base64url segment of length 4n+1 cannot encode whole bytes; Buffer would silently drop the extra character.
  if (segment.length === 0 || segment.length % 4 === 1) throw invalid(`${what}-encoding`);
  const text = Buffer.from(segment, 'base64url').toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(`${what}-json`);
  }
  if (!isObject(value)) throw invalid(`${what}-type`);
  return [value, text.length];
}

/**
 * Split a compact JWS (already known to hold only base64url characters and dots) into its decoded header and
 * payload. Throws `invalid_token` unless there are exactly three non-empty segments whose first two are JSON
 * objects. Duplicate JSON member names resolve to the last one (JSON.parse), as RFC 7515 §4 permits.
 */
export function decodeJws(token: string): DecodedJws {
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  if (second < 0 || token.indexOf('.', second + 1) >= 0) throw invalid('segments');
  if (second === token.length - 1) throw invalid('signature-missing');
  const [header] = decodeJsonObject(token.slice(0, first), 'header');
  if (typeof header.alg !== 'string') throw invalid('alg');
  if (header.kid !== undefined && typeof header.kid !== 'string') throw invalid('kid');
  const [payload, payloadLength] = decodeJsonObject(token.slice(first + 1, second), 'payload');
  return { header: header as JwsHeader, payload, payloadLength };
}

/** Header rules of SPEC §3.2: `alg` one of ours (never `none`), no `crit`. */
export function checkHeader(header: JwsHeader, algorithms: ReadonlySet<string>): void {
  if (!algorithms.has(header.alg)) throw invalid('alg');
  if (header.crit !== undefined) throw invalid('crit');
}
