// The `key` option's forms, as users write them, and the key source they resolve to at set-up (keys/index.ts
// checks them; building a source from a resolved one never throws an option error).
import type { KeyObject } from 'node:crypto';
import type { Jwk } from '../jose/jwk';
import type { Duration } from '../base/duration';
import type { Algorithm } from '../jose/algorithms';
import type { IssuerBase } from './discovery-options';
import type { HeldKey, KeyResolver } from './static';
import type { TenantRule } from '../token/issuer';
import type { SigningKeySource } from './source';
import type { InlineJwks } from './inline-jwks';

/**
 * Where an edge preset (`express-verified-user/edge`) puts the key source its vendor needs that no `key` form
 * describes (AWS ALB: a PEM per `kid`): a field keyed by this symbol, which `knownFields` never sees and no user
 * writes, so that no option joins TokenAuthOptions for it. Spreading the preset's options carries it along.
 */
export const PRESET_KEYS: unique symbol = Symbol('express-verified-user: preset keys');

/** The key source a preset brings, built by createTokenAuth with its clock and `algorithms` option. */
export type PresetKeys = (context: {
  clock: () => number;
  algorithms: readonly Algorithm[] | undefined;
}) => SigningKeySource;

/** An HMAC secret of at least 32 bytes. */
export interface SecretKeyOption {
  secret: string | Buffer;
}

/** One public key: PEM, JWK or KeyObject. */
export interface PublicKeyOption {
  publicKey: string | Jwk | KeyObject;
}

/** A JWK Set (RFC 7517 §5): public keys, each chosen by its `kid`. */
export interface JwkSet {
  keys: readonly Jwk[];
}

/** A JWK Set given inline: keys chosen by `kid`, each checked as a fetched JWKS's keys are. */
export interface JwksKeySetOption {
  jwks: JwkSet;
}

/** Remote JWKS: keys chosen by `kid`, cached, refetched for an unknown `kid` at most once per `cooldown`. */
export interface JwksKeyOption {
  jwksUri: string;
  /** Least time between two fetches (default 30 s). */
  cooldown?: Duration;
  /** Fetch timeout (default 5 s). */
  timeout?: Duration;
}

/** Where verification keys come from: a secret, a public key, a JWK Set inline or at an address, or a resolver. */
export type SigningKeyOption = SecretKeyOption | PublicKeyOption | JwksKeySetOption | JwksKeyOption | KeyResolver;

/** The signing keys named by `key` or `issuerBaseURL`, checked at set-up; durations in seconds. */
export type ResolvedKeys =
  | { form: 'held'; held: HeldKey }
  | { form: 'resolver'; resolve: KeyResolver; algorithms: ReadonlySet<Algorithm> }
  | { form: 'jwks'; jwks: InlineJwks }
  | { form: 'jwksUri'; url: URL; cooldown: number; timeout: number; algorithms: readonly Algorithm[] | undefined }
  | { form: 'preset'; build: PresetKeys; algorithms: readonly Algorithm[] | undefined }
  | {
      form: 'discovery';
      /** The authorization servers (keys/discovery-options.ts checked them). */
      issuers: readonly IssuerBase[];
      /** The limit of one refresh (metadata and key set): `discovery.timeout`. */
      timeout: number;
      /** The `tenants` option: which tenants an issuer template accepts (token/issuer.ts). */
      tenants: TenantRule | undefined;
      algorithms: readonly Algorithm[] | undefined;
      allowInsecureHttp: boolean;
    };
