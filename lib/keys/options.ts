// The `key` option's forms, as users write them, and what the key room needs of the resolved options to build a
// key source. Types only: validation happens where each source is built (keys/index.ts and its siblings).
import type { KeyObject } from 'node:crypto';
import type { Jwk } from '../base/jwk';
import type { Duration } from '../base/duration';
import type { Algorithm } from './algorithms';
import type { BreakerOptions } from './breaker';
import type { IssuerBase } from './discovery-options';
import type { KeyResolver } from './static';

/** Remote JWKS: keys chosen by `kid`, cached, refetched for an unknown `kid` at most once per `cooldown`. */
export interface JwksKeyOption {
  jwksUri: string;
  /** Least time between two fetches (default 30 s). */
  cooldown?: Duration;
  /** Fetch timeout (default 5 s). */
  timeout?: Duration;
}

/** Upstream mode: tokens are checked by `{upstream}/auth/@users/verify` and the answers cached. */
export interface UpstreamKeyOption {
  upstream: string;
  /** Request timeout (default 5 s). */
  timeout?: Duration;
  /** Circuit breaker: fail fast after consecutive outages (default 5 failures, 5 s cooldown); `false` turns it off. */
  breaker?: BreakerOptions | false;
  /** Most upstream calls under way at once; new tokens beyond them get 503 at once, never a queue (default 100). */
  maxInflight?: number;
}

/** Where verification keys come from: a secret, a public key, a JWKS, an upstream verify endpoint, or a resolver. */
export type KeyOption =
  | { secret: string | Buffer }
  | { publicKey: string | Jwk | KeyObject }
  | JwksKeyOption
  | UpstreamKeyOption
  | KeyResolver;

/** What `createKeySource` reads of the resolved options. */
export interface KeySourceConfig {
  key: KeyOption | undefined;
  /** The discovered authorization servers, when `issuerBaseURL` is given (keys/discovery.ts checked it). */
  issuerBaseURL: readonly IssuerBase[] | undefined;
  /** With `issuerBaseURL`: the limit of one refresh (metadata and key set), in seconds (`discovery.timeout`). */
  discoveryTimeout: number;
  algorithms: Algorithm[] | undefined;
  clock: () => number;
  allowInsecureHttp: boolean;
}
