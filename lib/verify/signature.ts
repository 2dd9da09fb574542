// The verifier's signature step: the package's one JWS verify (jose/signature.ts), over the exact bytes received.
import type { KeyObject } from 'node:crypto';
import { verifyJws } from '../jose/signature';

/**
 * Checks the signature of a compact JWS whose header has been decoded and checked (RFC 8725 §3.1) and whose `alg`
 * the key has been found to fit; `signedEnd` is the index of the token's second dot. True when the signature is
 * good; false (or a throw) when it is not.
 */
export type SignatureCheck = (token: string, signedEnd: number, alg: string, key: KeyObject) => boolean;

/** The signature check (RFC 7515 §5.2) with a pre-built KeyObject: the one verify of jose/signature.ts. */
export function createSignatureCheck(): SignatureCheck {
  return verifyJws;
}
