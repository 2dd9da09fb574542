// The `dpop` and `mtls` options: their types, defaults and validation (an option error at createTokenAuth).
import type { Request } from 'express';
import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { parseDuration, type Duration } from '../base/duration';
import type { ReplayStore } from './replay';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';

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

const DPOP_FIELDS: FieldList<DpopOptions> = {
  required: true,
  iatWindow: true,
  algorithms: true,
  nonce: true,
  replay: true,
};
const NONCE_FIELDS: FieldList<DpopNonceOptions> = { secret: true, lifetime: true };
const MTLS_FIELDS: FieldList<MtlsOptions> = { getCertificate: true };

function plainObject(value: unknown, name: string): Record<string, unknown> {
  if (!isObject(value)) optionError(name, `option "${name}" must be an object`);
  return value;
}

/** A duration of at least one second, or `fallback` when absent. */
function seconds(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const found = parseDuration(value, name);
  if (found < 1) optionError(name, `option "${name}" must be at least one second`);
  return found;
}

function resolveNonce(value: unknown): ResolvedDpop['nonce'] {
  if (value === undefined) return undefined;
  const nonce = plainObject(value, 'dpop.nonce');
  knownFields(nonce, NONCE_FIELDS, 'dpop.nonce');
  const secret = typeof nonce.secret === 'string' ? Buffer.from(nonce.secret) : nonce.secret;
  // A guessable secret lets anyone mint nonces, which would defeat their purpose (bounding pre-made proofs).
  if (!Buffer.isBuffer(secret) || secret.length < 32)
    optionError('dpop.nonce.secret', 'option "dpop.nonce.secret" must be a string or Buffer of at least 32 bytes');
  return { secret: Buffer.from(secret), lifetime: seconds(nonce.lifetime, 'dpop.nonce.lifetime', 300) };
}

/** Validate the `dpop` option once (OptionErrors name the option); undefined when DPoP is off. */
export function resolveDpop(value: unknown): ResolvedDpop | undefined {
  if (value === undefined) return undefined;
  const dpop = plainObject(value, 'dpop');
  knownFields(dpop, DPOP_FIELDS, 'dpop');
  if (dpop.required !== undefined && typeof dpop.required !== 'boolean')
    optionError('dpop.required', 'option "dpop.required" must be a boolean');
  const iatWindow = seconds(dpop.iatWindow, 'dpop.iatWindow', 60);
  let algorithms: string[] = [...DPOP_ALGORITHMS];
  if (dpop.algorithms !== undefined) {
    if (!Array.isArray(dpop.algorithms) || dpop.algorithms.length === 0)
      optionError('dpop.algorithms', 'option "dpop.algorithms" must be a non-empty array');
    for (const alg of dpop.algorithms) {
      if (!(DPOP_ALGORITHMS as readonly unknown[]).includes(alg))
        optionError(
          'dpop.algorithms',
          `option "dpop.algorithms" holds ${JSON.stringify(alg)}; proofs need one of ${DPOP_ALGORITHMS.join(', ')}`,
        );
    }
    // RFC 9864: `Ed25519` is the fully-specified name of EdDSA with Ed25519 (oauth4webapi signs with it).
    const listed = dpop.algorithms as string[];
    algorithms = [...new Set(listed.includes('EdDSA') ? [...listed, 'Ed25519'] : listed)];
  }
  const replay = dpop.replay;
  if (replay !== undefined && typeof (replay as ReplayStore).claimOnce !== 'function')
    optionError('dpop.replay', 'option "dpop.replay" must be a ReplayStore (an object with claimOnce(id, expiresAt))');
  const watch = (replay as ReplayStore | undefined)?.watch;
  if (watch !== undefined && typeof watch !== 'function')
    optionError('dpop.replay', 'option "dpop.replay" has a watch that is not a function');
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
  knownFields(mtls, MTLS_FIELDS, 'mtls');
  if (mtls.getCertificate !== undefined && typeof mtls.getCertificate !== 'function')
    optionError('mtls.getCertificate', 'option "mtls.getCertificate" must be a function');
  return { getCertificate: mtls.getCertificate as ResolvedMtls['getCertificate'] };
}
