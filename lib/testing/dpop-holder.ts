// The client side of RFC 9449 for an app's tests: a DPoP key holder that makes proofs as a client would.
import { randomUUID } from 'node:crypto';
import { accessTokenHash } from '../dpop/proof';
import { jwkThumbprint } from '../jose/jwk';
import { generateSigningKeyPair, signCompact } from '../jose/sign';

/** What a DPoP proof is made for (RFC 9449 §4.2). */
export interface DpopProofRequest {
  /** HTTP method (`htm`). */
  method: string;
  /** The request's URL (`htu`; query and fragment are dropped). */
  url: string;
  /** The access token sent with the proof (`ath`); omit for a proof without one. */
  token?: string;
  /** The server's last `DPoP-Nonce`. */
  nonce?: string;
  /** Claims to replace (`iat`, `jti`, …); `undefined` removes one. For tests of refusals. */
  claims?: Record<string, unknown>;
  /** Header parameters to replace. For tests of refusals. */
  header?: Record<string, unknown>;
}

/** A DPoP key holder: the client side of RFC 9449, for tests. */
export interface DpopHolder {
  /** RFC 7638 thumbprint of the public key: the `cnf.jkt` of tokens bound to this holder. */
  readonly jkt: string;
  /** The public key as a JWK. */
  readonly publicJwk: Record<string, unknown>;
  /** A fresh proof (new `jti`, `iat` now) for one request. */
  proof(request: DpopProofRequest): string;
}

/**
 * A DPoP key holder with a new ES256 key (or RS256 / PS256 / EdDSA (Ed25519)), making proofs as a client
 * would. For tests only.
 */
export function createDpopHolder(
  alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA' = 'ES256',
  clock: () => number = () => Date.now() / 1000,
): DpopHolder {
  const { privateKey, publicKey } = generateSigningKeyPair(alg);
  const publicJwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  const jkt = jwkThumbprint(publicJwk);
  return {
    jkt,
    publicJwk,
    proof({ method, url, token, nonce, claims = {}, header = {} }) {
      const target = new URL(url);
      const payload: Record<string, unknown> = {
        jti: randomUUID(),
        htm: method,
        htu: `${target.protocol}//${target.host}${target.pathname}`,
        iat: Math.floor(clock()),
      };
      if (token !== undefined) payload.ath = accessTokenHash(token);
      if (nonce !== undefined) payload.nonce = nonce;
      for (const [name, value] of Object.entries(claims)) {
        if (value === undefined) delete payload[name];
        else payload[name] = value;
      }
      return signCompact({ typ: 'dpop+jwt', alg, jwk: publicJwk, ...header }, payload, privateKey, alg);
    },
  };
}
