// The `key` option's forms, as users write them, and what the key room needs of the resolved options to build a
// key source. Types only: validation happens where each source is built (keys/index.ts and its siblings).
import type { KeyObject } from 'node:crypto';
import type { Jwk } from '../jose/jwk';
import type { Duration } from '../base/duration';
import type { Algorithm } from '../jose/algorithms';
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

/** Where verification keys come from: a secret, a public key, a JWKS, or a resolver. */
export type SigningKeyOption =
  { secret: string | Buffer } | { publicKey: string | Jwk | KeyObject } | JwksKeyOption | KeyResolver;

/** What `createKeySource` reads of the resolved options. */
export interface KeySourceConfig {
  /** The `key` option, any of its forms (`key.upstream` too: remote/index.ts reads it). */
  key: object | undefined;
  /** The discovered authorization servers, when `issuerBaseURL` is given (keys/discovery.ts checked it). */
  issuerBaseURL: readonly IssuerBase[] | undefined;
  /** With `issuerBaseURL`: the limit of one refresh (metadata and key set), in seconds (`discovery.timeout`). */
  discoveryTimeout: number;
  algorithms: Algorithm[] | undefined;
  clock: () => number;
  allowInsecureHttp: boolean;
}
