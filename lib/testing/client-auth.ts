// The exchanging client as the test issuer knows it (RFC 6749 §2.3): its id, the one method it is registered with
// (client_secret_basic, client_secret_post, or private_key_jwt, RFC 7523 §2.2), and the check of each request's
// credentials; the credentials themselves go into the issuer's `options.tokenExchange`.
import { createHash, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { ClientCredentials } from '../remote/client-auth';
import { ASSERTION_TYPE, type ClientAuthMethod } from '../remote/client-auth';
import { generateSigningKeyPair } from '../jose/sign';
import { EndpointRefusal, refusal } from './token-endpoint';
import { readSignedJwt } from './signed';

/** The client registered at the test issuer, with what `createTokenAuth` needs to authenticate as it. */
export interface TestClient {
  readonly credentials: ClientCredentials;
  /** The client's id when the request's credentials are its own; an EndpointRefusal otherwise. */
  authenticate(params: URLSearchParams, authorization: string | undefined): string;
}

/** Longest life the endpoint accepts for a client assertion (the package makes them for 60 s). */
const MAX_ASSERTION_LIFE = 300;
/** Most assertion ids remembered against replay; past it the oldest are dropped first. */
const MAX_REMEMBERED = 10_000;

/** The refusal of a client that is not who it says (RFC 6749 §5.2 `invalid_client`). */
type Unknown = (description: string) => EndpointRefusal;

function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** RFC 6749 §2.3.1: Basic credentials are form-encoded before they are joined; undefined for a malformed header. */
function readBasic(authorization: string): { id: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(authorization);
  if (match === null) return undefined;
  const text = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  try {
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    return { id: decode(text.slice(0, colon)), secret: decode(text.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

/** A client of `method` with fresh credentials; `endpoint()` is the token endpoint an assertion's `aud` must name. */
export function createTestClient(
  clientId: string,
  method: ClientAuthMethod,
  endpoint: () => string,
  clock: () => number,
): TestClient {
  const secret = method === 'private_key_jwt' ? undefined : randomBytes(32).toString('base64url');
  const keys = method === 'private_key_jwt' ? generateSigningKeyPair('ES256') : undefined;
  const seen = new Map<string, number>();
  const credentials: ClientCredentials =
    keys === undefined
      ? { clientId, clientSecret: secret, authMethod: method }
      : { clientId, privateKey: keys.privateKey, authMethod: method };
  function assertionFrom(params: URLSearchParams, publicKey: KeyObject, unknown: Unknown): void {
    if (params.get('client_assertion_type') !== ASSERTION_TYPE)
      throw unknown('client_assertion_type is not jwt-bearer');
    const now = clock();
    const jwt = readSignedJwt(params.get('client_assertion') ?? '', 'ES256', () => publicKey, now);
    const claims = jwt?.payload;
    const aud = claims === undefined ? [] : [claims.aud].flat();
    if (claims === undefined || claims.iss !== clientId || claims.sub !== clientId || !aud.includes(endpoint()))
      throw unknown('the client assertion is not valid');
    if ((claims.exp as number) - now > MAX_ASSERTION_LIFE) throw unknown('the client assertion lives too long');
    for (const [jti, exp] of seen) if (exp <= now || seen.size >= MAX_REMEMBERED) seen.delete(jti);
    if (typeof claims.jti !== 'string' || seen.has(claims.jti)) throw unknown('the client assertion was used before');
    seen.set(claims.jti, claims.exp as number);
  }

  return {
    credentials,
    authenticate(params, authorization) {
      // RFC 6749 §5.2: 401, with a Basic challenge when the client tried the Authorization header or is registered for it.
      const challenge: Record<string, string> =
        authorization !== undefined || method === 'client_secret_basic'
          ? { 'WWW-Authenticate': 'Basic realm="test-issuer"' }
          : {};
      const unknown: Unknown = (description) => new EndpointRefusal(401, 'invalid_client', description, challenge);
      const given = params.get('client_id');
      const presented = [
        authorization === undefined ? undefined : 'client_secret_basic',
        params.has('client_secret') ? 'client_secret_post' : undefined,
        params.has('client_assertion') ? 'private_key_jwt' : undefined,
      ].filter((m) => m !== undefined);
      // RFC 6749 §2.3: one method per request.
      if (presented.length > 1) throw refusal('invalid_request', 'use one client authentication method');
      if (presented.length === 0) throw unknown('client authentication is required');
      if (presented[0] !== method) throw unknown(`the client is registered for ${method}`);
      if (method === 'client_secret_basic') {
        const basic = readBasic(authorization ?? '');
        if (basic === undefined || basic.id !== clientId || !sameSecret(basic.secret, secret ?? ''))
          throw unknown('client authentication failed');
        if (given !== null && given !== clientId) throw refusal('invalid_request', 'client_id differs from Basic');
      } else if (method === 'client_secret_post') {
        if (given !== clientId || !sameSecret(params.get('client_secret') ?? '', secret ?? ''))
          throw unknown('client authentication failed');
      } else {
        if (given !== null && given !== clientId) throw unknown('client authentication failed');
        assertionFrom(params, (keys as { publicKey: KeyObject }).publicKey, unknown);
      }
      return clientId;
    },
  };
}
