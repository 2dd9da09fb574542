// Keys for the command line: a signing key read from a file (PEM or private JWK) or a secret, a new development
// key pair, and a public key printed as PEM or as a JWKS. Messages name files and flags, never key material.
import { createPrivateKey, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  algorithmsForKey,
  defaultAlgorithm,
  isSupportedAlgorithm,
  MIN_SECRET_BYTES,
  type Algorithm,
} from '../jose/algorithms';
import { keyThumbprint, type Jwk } from '../jose/jwk';
import { generateSigningKeyPair } from '../jose/sign';
import { isObject } from '../base/values';
import { UsageError } from './usage';

/** A key to sign with: the key, its algorithm, and the `kid` to put in the header. */
export interface CliSigningKey {
  key: KeyObject | string;
  alg: Algorithm;
  kid: string | undefined;
}

/** The algorithm asked for with `--alg`, checked against the key (no key confusion), or the key's default. */
function chooseAlgorithm(
  fits: readonly Algorithm[],
  fallback: Algorithm | undefined,
  requested: string | undefined,
  what: string,
): Algorithm {
  if (requested === undefined) {
    if (fallback === undefined)
      throw new UsageError(`${what} is not a key this package verifies (use RSA, EC P-256/P-384/P-521 or Ed25519)`);
    return fallback;
  }
  if (!isSupportedAlgorithm(requested))
    throw new UsageError(`--alg must be one of HS256, HS384, HS512, RS256, …, PS256, …, ES256, ES384, ES512, EdDSA`);
  if (!fits.includes(requested))
    throw new UsageError(`--alg ${requested} does not fit ${what} (it fits ${fits.join(', ') || 'none'})`);
  return requested;
}

/** An HMAC secret from `--secret` or TOKEN_SECRET (`source` names which). */
export function secretSigningKey(secret: string, source: string, alg: string | undefined): CliSigningKey {
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < MIN_SECRET_BYTES)
    throw new UsageError(
      `${source} is ${bytes} bytes; an HMAC secret must be at least ${MIN_SECRET_BYTES} (the verifier refuses shorter ones)`,
    );
  return {
    key: secret,
    alg: chooseAlgorithm(['HS256', 'HS384', 'HS512'], 'HS256', alg, `the secret from ${source}`),
    kid: undefined,
  };
}

/** A private JWK from a file's JSON: the object itself, or the one private key of a JWKS. */
function privateJwkOf(document: unknown, file: string): Record<string, unknown> {
  if (isObject(document) && Array.isArray(document.keys)) {
    const held = document.keys.filter((jwk) => isObject(jwk) && jwk.d !== undefined);
    if (held.length !== 1)
      throw new UsageError(`${file} is a JWKS with ${held.length} private keys; give a file with exactly one`);
    return held[0] as Record<string, unknown>;
  }
  if (!isObject(document)) throw new UsageError(`${file} is JSON but not a JWK`);
  if (document.kty === 'oct')
    throw new UsageError(`${file} is a symmetric JWK; pass its secret with --secret or TOKEN_SECRET`);
  if (document.d === undefined)
    throw new UsageError(`${file} holds a public JWK; token needs the private key (a JWK with "d")`);
  return document;
}

/**
 * How a message names the `--key` value: the path when it looks like one, else only the flag, so that a key pasted
 * in place of a file name (a PEM, a private JWK) is never printed back.
 */
function named(file: string): string {
  const pathLike = file.length <= 256 && !/[\r\n{}"]/.test(file) && !file.includes('PRIVATE KEY');
  return pathLike ? file : 'the value given to --key (not a file name: keys are read from files only)';
}

/** The private key in a file (PEM or JWK), with the JWK's own `kid` and `alg` when it has them. */
export function readPrivateKey(file: string): { key: KeyObject; kid: string | undefined; alg: string | undefined } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read the key file ${named(file)}`);
  }
  if (text.trim().startsWith('{')) {
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      throw new UsageError(`${file} starts like JSON but does not parse`);
    }
    const jwk = privateJwkOf(document, file);
    try {
      const key = createPrivateKey({ key: jwk as Jwk, format: 'jwk' });
      return {
        key,
        kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
        alg: typeof jwk.alg === 'string' ? jwk.alg : undefined,
      };
    } catch {
      throw new UsageError(`${file} holds a JWK that is not a usable private key`);
    }
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    throw new UsageError(
      /-----BEGIN [A-Z ]*(PUBLIC KEY|CERTIFICATE)-----/.test(text)
        ? `${file} holds a public key only; token needs the private key`
        : `${file} is neither a PEM private key nor a private JWK`,
    );
  }
  try {
    return { key: createPrivateKey(text), kid: undefined, alg: undefined };
  } catch {
    throw new UsageError(`${file} holds a PEM private key that could not be read (encrypted keys are not supported)`);
  }
}

/** A signing key from a key file (`--key`). */
export function fileSigningKey(file: string, alg: string | undefined, kid: string | undefined): CliSigningKey {
  const read = readPrivateKey(file);
  const publicKey = createPublicKey(read.key);
  const chosen = chooseAlgorithm(
    algorithmsForKey(publicKey),
    (read.alg as Algorithm | undefined) ?? defaultAlgorithm(publicKey),
    alg,
    `the key in ${file}`,
  );
  return { key: read.key, alg: chosen, kid: kid ?? read.kid ?? keyThumbprint(publicKey) };
}

/** A new development key pair for `alg`, as PEM (private, then public); for HS*, a random secret instead. */
export function newKeyPair(alg: string): string {
  if (!isSupportedAlgorithm(alg))
    throw new UsageError(
      '--alg must be one of ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512, EdDSA or HS256',
    );
  if (alg === 'HS256' || alg === 'HS384' || alg === 'HS512') return `${randomBytes(48).toString('base64url')}\n`;
  const pair = generateSigningKeyPair(alg);
  return `${pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string}${pair.publicKey.export({ type: 'spki', format: 'pem' }) as string}`;
}

/** The public key of the private key in `file`: SPKI PEM, or a JWKS with its `kid` (thumbprint), `alg` and `use`. */
export function publicKeyOf(file: string, asJwks: boolean, alg: string | undefined): string {
  const read = readPrivateKey(file);
  const publicKey = createPublicKey(read.key);
  if (!asJwks) return publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const chosen = chooseAlgorithm(
    algorithmsForKey(publicKey),
    (read.alg as Algorithm | undefined) ?? defaultAlgorithm(publicKey),
    alg,
    `the key in ${file}`,
  );
  const jwk = {
    ...(publicKey.export({ format: 'jwk' }) as Record<string, unknown>),
    kid: read.kid ?? keyThumbprint(publicKey),
    alg: chosen,
    use: 'sig',
  };
  return `${JSON.stringify({ keys: [jwk] }, null, 2)}\n`;
}

/**
 * Write a key file that did not exist: mode 0600 for a private key or secret (readable by its owner only), 0644 for
 * a public key. An existing file (or a link in its place) is refused, never overwritten or followed.
 */
export function writeKeyFile(file: string, text: string, secret: boolean): void {
  try {
    writeFileSync(file, text, { mode: secret ? 0o600 : 0o644, flag: 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'EEXIST'
        ? `${named(file)} exists; remove it or choose another --out (key files are never overwritten)`
        : `cannot write the key file ${named(file)}`,
    );
  }
}
