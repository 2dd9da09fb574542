// Server-provided DPoP nonces without shared state: an HMAC of the time window under a secret the fleet shares.
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Stateless DPoP server nonces (RFC 9449 §9): a nonce is the HMAC-SHA-256 of a time-window number under the
 * shared secret, so any instance holding the secret recognises any other's nonces without shared state. The
 * current and the previous window are accepted, so a nonce lives between one and two lifetimes.
 */
export interface NonceIssuer {
  /** The nonce to hand out now. */
  current(now: number): string;
  /** Whether `nonce` is the current or the previous window's. */
  accepts(nonce: unknown, now: number): boolean;
}

/** Build the nonce issuer for one secret and window length (seconds). */
export function createNonceIssuer(secret: Buffer, lifetime: number): NonceIssuer {
  // Each window's nonce is computed once: the hot path compares strings, it does not hash.
  let memo: { window: number; current: Buffer; previous: Buffer; text: string } | undefined;
  const nonceOf = (window: number) => createHmac('sha256', secret).update(`dpop-nonce:${window}`).digest();

  function windows(now: number) {
    const window = Math.floor(now / lifetime);
    if (memo === undefined || memo.window !== window) {
      const current = nonceOf(window);
      memo = { window, current, previous: nonceOf(window - 1), text: current.toString('base64url') };
    }
    return memo;
  }

  return {
    current: (now) => windows(now).text,
    accepts(nonce, now) {
      // 32 bytes of base64url are 43 characters; anything else is not ours.
      if (typeof nonce !== 'string' || nonce.length !== 43) return false;
      const given = Buffer.from(nonce, 'base64url');
      if (given.length !== 32) return false;
      const { current, previous } = windows(now);
      return timingSafeEqual(given, current) || timingSafeEqual(given, previous);
    },
  };
}
