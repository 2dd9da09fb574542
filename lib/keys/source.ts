// What the verifier asks of a key room: a signing-key source (keys for a JWS header), and the key handle a cached
// verdict watches.
import type { KeyObject } from 'node:crypto';
import type { JwsHeader } from '../jose/jws';
import type { Algorithm } from '../jose/algorithms';

/**
 * A verification key as its source holds it. `withdrawn` turns true, once and for good, when the source learns
 * that the issuer no longer publishes the key (a JWKS refetch without it): results it verified are then no
 * longer served from the cache. A plain property, so that the cache's hit path pays one read for the rule.
 */
export interface KeyHandle {
  readonly withdrawn: boolean;
}

/** The handle of keys that are never withdrawn (static keys, app resolvers): shared, so hits stay monomorphic. */
export const ALWAYS_HELD: KeyHandle = Object.freeze({ withdrawn: false });

const handles = new WeakMap<KeyObject, KeyHandle>();

/** Record the handle of a key a source hands out (JWKS, discovery), for `keyHandle` to find after verification. */
export function holdKey(key: KeyObject, handle: KeyHandle): void {
  handles.set(key, handle);
}

/** The handle of a key that verified a token: ALWAYS_HELD for keys no source can withdraw. Miss path only. */
export function keyHandle(key: KeyObject): KeyHandle {
  return handles.get(key) ?? ALWAYS_HELD;
}

/** Several keys a header may name (a JWKS that lists one `kid` twice), tried in order: two or more, a few at most. */
export type KeyCandidates = readonly KeyObject[];

/** What `keyFor` answers: the key, or the few candidates, that may verify a token. */
export type KeyChoice = KeyObject | KeyCandidates;

/**
 * A source of verification keys for locally checked JWS tokens. `keyFor` may answer synchronously (static keys:
 * the whole verification then stays synchronous) or with a promise (JWKS, app resolvers). It throws or rejects
 * with a TokenAuthError: `invalid_token` when no key fits the header, `verification_unavailable` when keys cannot
 * be had right now. `payload` is the token's decoded, not yet verified payload: a source serving several issuers
 * routes by its `iss` (the signature is then checked with that issuer's key, so a lie there only fails); sources
 * of one key set ignore it.
 */
export interface SigningKeySource {
  readonly kind: 'jws';
  /** Algorithms a token header may name (never `none`). */
  readonly algorithms: ReadonlySet<Algorithm>;
  keyFor(header: JwsHeader, payload: Readonly<Record<string, unknown>>): KeyChoice | Promise<KeyChoice>;
  close(): void;
  /**
   * Load now what the first token would wait for (a key set, discovery metadata): resolves once it is held, rejects
   * with a `verification_unavailable` TokenAuthError (`reason`, `hint`) when it cannot be had now. Absent: nothing
   * to load (keys the app holds).
   */
  ready?(): Promise<void>;
  /** Sources that discover their issuers (`issuerBaseURL`): the issuer identifiers, as the servers name themselves. */
  discoveredIssuers?(): Promise<DiscoveredIssuers>;
  /**
   * `'padded'`: the tokens this source's keys verify may write their segments base64url padded with `=` (AWS ALB),
   * or unpadded, and are read so (jose/jws.ts `decodePaddedJws`); absent: strict compact JWS, as RFC 7515 writes it.
   */
  readonly segments?: 'padded';
}

/** The issuers a discovery source names, for a protected resource's `authorization_servers` (RFC 9728). */
export interface DiscoveredIssuers {
  /** Each server's discovered `issuer`, or its configured base URL while discovery has not answered. */
  readonly issuers: readonly string[];
  /** True when every issuer was discovered; false while a configured base URL stands in for one. */
  readonly final: boolean;
}

/**
 * The keys `source` offers for a header, as a list (one key, or a header's few candidates), for readers outside the
 * verifier (signed introspection answers, security event tokens, logout tokens). Rejects as `keyFor` does: an
 * `invalid_token` TokenAuthError when no key fits, `verification_unavailable` when keys cannot be had now.
 */
export async function keysForHeader(
  source: SigningKeySource,
  header: JwsHeader,
  payload: Readonly<Record<string, unknown>>,
): Promise<readonly KeyObject[]> {
  const choice = await source.keyFor(header, payload);
  return Array.isArray(choice) ? (choice as KeyCandidates) : [choice as KeyObject];
}
