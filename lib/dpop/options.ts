// The `dpop` and `mtls` options: their types, defaults and validation (an option error at createTokenAuth).
import type { Request } from 'express';
import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { parseDuration, type Duration } from '../base/duration';
import type { ReplayStore } from './replay';
import { optionError } from '../base/option-error';

/** Proof algorithms this package can check (RFC 9449 §4.2: asymmetric only; never HS* or `none`). */
export const DPOP_ALGORITHMS = [
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
  'Ed25519',
] as const;

/** One of DPOP_ALGORITHMS. */
export type DpopAlgorithm = (typeof DPOP_ALGORITHMS)[number];

/** Stateless server nonces (RFC 9449 §9): an HMAC of the current time window under `secret`. */
export interface DpopNonceOptions {
  /** Shared by every instance that must accept the others' nonces; at least 32 bytes. */
  secret: string | Buffer;
  /** Length of one nonce window (default 5 min); the current and the previous window are accepted. */
  lifetime?: Duration;
}

/** The `dpop` option of `createTokenAuth` (RFC 9449, docs/dpop.md). */
export interface DpopOptions {
  /** `true`: only `Authorization: DPoP` is accepted, Bearer is refused (default false: both). */
  required?: boolean;
  /** How far a proof's `iat` may lie in the past (default 60 s); `jti`s are remembered that long. */
  iatWindow?: Duration;
  /** Proof algorithms accepted (default: all of DPOP_ALGORITHMS); `EdDSA` brings `Ed25519` (RFC 9864) along. */
  algorithms?: DpopAlgorithm[];
  /** Require server nonces. */
  nonce?: DpopNonceOptions;
  /**
   * Where used proof ids are remembered (default: in this process, 100 000 at most and a tenth of that per proof
   * key, less as the store fills, on this TokenAuth's `clock`; `createMemoryReplayStore` makes one with other
   * bounds). A fleet passes a shared store.
   */
  replay?: ReplayStore;
}

/** What `mtls.getCertificate` may hand back: a TLS peer certificate, an X509Certificate, DER bytes or PEM text. */
export type ClientCertificate = PeerCertificate | X509Certificate | Buffer | string | null | undefined;

/** The `mtls` option (RFC 8705 §3): where the client certificate of a request is found. */
export interface MtlsOptions {
  /** Default: the TLS socket's peer certificate. Behind a TLS-terminating proxy, read what it forwards. */
  getCertificate?: (req: Request) => ClientCertificate;
}

/** `dpop` after validation. */
export interface ResolvedDpop {
  required: boolean;
  iatWindow: number;
  algorithms: ReadonlySet<string>;
  /** The `algs` value of the DPoP challenge. */
  algs: string;
  nonce: { secret: Buffer; lifetime: number } | undefined;
  /** The store given; undefined for the in-process one, which the binding step builds on the TokenAuth's clock. */
  replay: ReplayStore | undefined;
}

/** `mtls` after validation. */
export interface ResolvedMtls {
  getCertificate: ((req: Request) => ClientCertificate) | undefined;
}

const KNOWN_DPOP = new Set(['required', 'iatWindow', 'algorithms', 'nonce', 'replay']);

function plainObject(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    optionError(`option "${name}" must be an object`);
  return value as Record<string, unknown>;
}

function resolveNonce(value: unknown): ResolvedDpop['nonce'] {
  if (value === undefined) return undefined;
  const nonce = plainObject(value, 'dpop.nonce');
  for (const name of Object.keys(nonce))
    if (name !== 'secret' && name !== 'lifetime') optionError(`unknown option "dpop.nonce.${name}"`);
  const secret = typeof nonce.secret === 'string' ? Buffer.from(nonce.secret) : nonce.secret;
  // A guessable secret lets anyone mint nonces, which would defeat their purpose (bounding pre-made proofs).
  if (!Buffer.isBuffer(secret) || secret.length < 32)
    optionError('option "dpop.nonce.secret" must be a string or Buffer of at least 32 bytes');
  const lifetime = nonce.lifetime === undefined ? 300 : parseDuration(nonce.lifetime, 'dpop.nonce.lifetime');
  if (lifetime < 1) optionError('option "dpop.nonce.lifetime" must be at least one second');
  return { secret: Buffer.from(secret), lifetime };
}

/** Validate the `dpop` option once (TypeErrors name the option); undefined when DPoP is off. */
export function resolveDpop(value: unknown): ResolvedDpop | undefined {
  if (value === undefined) return undefined;
  const dpop = plainObject(value, 'dpop');
  for (const name of Object.keys(dpop)) if (!KNOWN_DPOP.has(name)) optionError(`unknown option "dpop.${name}"`);
  if (dpop.required !== undefined && typeof dpop.required !== 'boolean')
    optionError('option "dpop.required" must be a boolean');
  const iatWindow = dpop.iatWindow === undefined ? 60 : parseDuration(dpop.iatWindow, 'dpop.iatWindow');
  if (iatWindow < 1) optionError('option "dpop.iatWindow" must be at least one second');
  let algorithms: string[] = [...DPOP_ALGORITHMS];
  if (dpop.algorithms !== undefined) {
    if (!Array.isArray(dpop.algorithms) || dpop.algorithms.length === 0)
      optionError('option "dpop.algorithms" must be a non-empty array');
    for (const alg of dpop.algorithms) {
      if (!(DPOP_ALGORITHMS as readonly unknown[]).includes(alg))
        optionError(
          `option "dpop.algorithms" holds ${JSON.stringify(alg)}; proofs need one of ${DPOP_ALGORITHMS.join(', ')}`,
        );
    }
    // RFC 9864: `Ed25519` is the fully-specified name of EdDSA with Ed25519 (oauth4webapi signs with it).
    const listed = dpop.algorithms as string[];
    algorithms = [...new Set(listed.includes('EdDSA') ? [...listed, 'Ed25519'] : listed)];
  }
  const replay = dpop.replay;
  if (replay !== undefined && typeof (replay as ReplayStore).claimOnce !== 'function')
    optionError('option "dpop.replay" must be a ReplayStore (an object with claimOnce(id, expiresAt))');
  return {
    required: dpop.required === true,
    iatWindow,
    algorithms: new Set(algorithms),
    algs: algorithms.join(' '),
    nonce: resolveNonce(dpop.nonce),
    replay: replay as ReplayStore | undefined,
  };
}

/** Validate the `mtls` option once. */
export function resolveMtls(value: unknown): ResolvedMtls {
  if (value === undefined) return { getCertificate: undefined };
  const mtls = plainObject(value, 'mtls');
  for (const name of Object.keys(mtls)) if (name !== 'getCertificate') optionError(`unknown option "mtls.${name}"`);
  if (mtls.getCertificate !== undefined && typeof mtls.getCertificate !== 'function')
    optionError('option "mtls.getCertificate" must be a function');
  return { getCertificate: mtls.getCertificate as ResolvedMtls['getCertificate'] };
}
