// What the verifier asks of a remote source (upstream mode, introspection): the claims another server answers for a
// token; and the token source, which is either that or the signing keys of keys/.
import type { SigningKeySource } from '../keys/source';
import type { BreakerStats } from './breaker';

/** Claims as answered by a remote verifier, not yet checked against this instance's rules. */
export interface RemoteClaims {
  payload: Record<string, unknown>;
  /** Size in bytes of the answer's JSON text, for the cache's byte bound. */
  size: number;
}

/**
 * A remote verifier (upstream mode, introspection): the token is opaque here and checked by calling another
 * service. Rejects with a TokenAuthError (`invalid_token`, `insufficient_scope`, `verification_unavailable`).
 */
export interface RemoteClaimsSource {
  readonly kind: 'remote';
  claimsFor(token: string): Promise<RemoteClaims>;
  close(): void;
  /**
   * Read now what the first call would wait for (introspection: the server's metadata and its endpoint); rejects
   * with a TokenAuthError (`reason`, `hint`) when it cannot be had now. Absent: nothing to read first.
   */
  ready?(): Promise<void>;
  /** State of the circuit breaker in front of the remote service, when it has one. */
  breakerStats?(): BreakerStats;
  /**
   * The source's own rule on an answer's payload (upstream: Shape B; introspection: its issuer), for a payload
   * that did not come through `claimsFor` (a verdict read back from a fleet store): a short reason when it fails.
   */
  answerFault?(payload: Record<string, unknown>): string | undefined;
  /** Longest one call may take, in seconds, when the source bounds it (the fleet's lock outlives it). */
  readonly timeout?: number;
  /**
   * Who answers (upstream: its verify endpoint; introspection: the server and our client id), as text without NUL:
   * shared verdicts are kept apart per identity, so sources with other remotes on one store never read each other's.
   */
  readonly identity?: string;
}

/** Where verification gets what decides a token: signing keys (keys/), or a remote server's answer. */
export type TokenSource = SigningKeySource | RemoteClaimsSource;
