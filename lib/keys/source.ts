import type { KeyObject } from 'node:crypto';
import type { JwsHeader } from '../jws';
import type { Algorithm } from './algorithms';
import type { BreakerStats } from './breaker';

/**
 * A source of verification keys for locally checked JWS tokens. `keyFor` may answer synchronously (static keys:
 * the whole verification then stays synchronous) or with a promise (JWKS, app resolvers). It throws or rejects
 * with a TokenAuthError: `invalid_token` when no key fits the header, `verification_unavailable` when keys cannot
 * be had right now.
 */
export interface SigningKeySource {
  readonly kind: 'jws';
  /** Algorithms a token header may name (never `none`). */
  readonly algorithms: ReadonlySet<Algorithm>;
  keyFor(header: JwsHeader): KeyObject | Promise<KeyObject>;
  close(): void;
}

/** Claims as answered by a remote verifier, not yet checked against this instance's rules. */
export interface RemoteClaims {
  payload: Record<string, unknown>;
  /** Size in bytes of the answer's JSON text, for the cache's byte bound. */
  size: number;
}

/**
 * A remote verifier (upstream mode): the token is opaque here and checked by calling another service. Rejects
 * with a TokenAuthError (`invalid_token`, `insufficient_scope`, `verification_unavailable`).
 */
export interface RemoteClaimsSource {
  readonly kind: 'remote';
  claimsFor(token: string): Promise<RemoteClaims>;
  close(): void;
  /** State of the circuit breaker in front of the remote service, when it has one. */
  breakerStats?(): BreakerStats;
}

/** Where verification gets its keys (or, in upstream mode, its answers). */
export type KeySource = SigningKeySource | RemoteClaimsSource;
