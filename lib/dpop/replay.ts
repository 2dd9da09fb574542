/**
 * Single use of DPoP proofs (RFC 9449 §11.1): the seam between the proof checks and whatever remembers the
 * proofs already seen. The in-process store lives here; a fleet passes a shared one (`express-verified-user/redis`).
 */

/**
 * Remembers proof identifiers until they expire. `claimOnce(id, expiresAt)` records `id` until `expiresAt`
 * (seconds since the epoch) and answers true the first time it sees `id`, false every later time before then.
 * `id` is already namespaced and bounded by the caller (a base64url SHA-256 of the key thumbprint and the proof's
 * `jti`, 43 characters), so a store needs no escaping or length checks of its own. A store that cannot promise
 * single use right now (a shared store unreachable) throws or rejects: the request then answers 503.
 */
export interface ReplayStore {
  claimOnce(id: string, expiresAt: number): boolean | Promise<boolean>;
}
