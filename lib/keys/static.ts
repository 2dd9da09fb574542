// Keys the app holds: a secret, a public key (PEM, JWK or KeyObject), or its own resolver function.
import { createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import type { Jwk } from '../jose/jwk';
import { TokenAuthError } from '../base/errors';
import type { JwsHeader } from '../jose/jws';
import { pemHint } from './hints';
import {
  algorithmsForKey,
  defaultAlgorithm,
  keyFitsAlgorithm,
  MIN_RSA_BITS,
  MIN_SECRET_BYTES,
  type Algorithm,
} from '../jose/algorithms';
import type { SigningKeySource } from './source';
import { optionError, OptionError } from '../base/option-error';

/** A JWS header in, a verification key out: the app's own key resolver (`key: (header) => …`). */
export type KeyResolver = (
  header: JwsHeader,
) => KeyObject | Promise<KeyObject> | null | undefined | Promise<KeyObject | null | undefined>;

/** A key the app holds, read once at set-up: the key and the algorithms it may verify. */
export interface HeldKey {
  key: KeyObject;
  algorithms: ReadonlySet<Algorithm>;
}

/** An RSA-PSS key whose parameters fit no PS* algorithm (RFC 7518 §3.5 fixes hash, MGF1 hash and salt length). */
const PSS_UNUSABLE =
  'is an RSA-PSS key without parameters that fit PS256, PS384 or PS512 (each fixes its hash, MGF1 hash and salt ' +
  'length), so it would refuse every token: give the same key as a plain RSA key (a JWK { kty: "RSA", n, e }, or a ' +
  'PEM of an rsaEncryption key) with algorithms: ["PS256"], or make the RSA-PSS key restricted to one of them ' +
  '(hash and MGF1 hash SHA-256, salt length 32 for PS256)';

/** For an RSA-PSS key, what its parameters restrict it to, for a refusal of option "algorithms". */
function restriction(key: KeyObject): string {
  if (key.asymmetricKeyType !== 'rsa-pss') return '';
  return `; its RSA-PSS parameters restrict it to ${algorithmsForKey(key).join(', ')}`;
}

/** The accepted algorithms for one known key: the option's, each checked against the key, or the key's default. */
function algorithmsFor(
  key: KeyObject,
  requested: readonly Algorithm[] | undefined,
  what: string,
  option: string,
): ReadonlySet<Algorithm> {
  if (requested === undefined) {
    const alg = defaultAlgorithm(key);
    if (alg === undefined)
      optionError(
        option,
        `${what} is not a key this package can verify with (use an HMAC secret, RSA, EC P-256/P-384/P-521, Ed25519 or Ed448)`,
      );
    return new Set([alg]);
  }
  for (const alg of requested) {
    if (!keyFitsAlgorithm(key, alg))
      optionError(
        'algorithms',
        `option "algorithms" names ${alg}, which ${what} cannot verify (key confusion is refused)${restriction(key)}`,
      );
  }
  return new Set(requested);
}

/** The source of one key the app holds (`key.secret`, `key.publicKey`), read at set-up. */
export function heldKeySource(held: HeldKey): SigningKeySource {
  const { key, algorithms } = held;
  return { kind: 'jws', algorithms, keyFor: () => key, close: () => undefined };
}

/** `{ secret }`: an HMAC secret of at least 32 bytes, turned into a KeyObject once. */
export function resolveSecret(secret: unknown, algorithms: readonly Algorithm[] | undefined): HeldKey {
  let bytes: Buffer;
  if (typeof secret === 'string') bytes = Buffer.from(secret, 'utf8');
  else if (secret instanceof Uint8Array) bytes = Buffer.from(secret);
  else optionError('key.secret', 'key.secret must be a string or a Buffer');
  if (bytes.length === 0)
    optionError(
      'key.secret',
      'key.secret is empty (an environment variable set to an empty string, such as TOKEN_SECRET=?)',
    );
  if (bytes.length < MIN_SECRET_BYTES)
    optionError('key.secret', `key.secret must be at least ${MIN_SECRET_BYTES} bytes (got ${bytes.length})`);
  const key = createSecretKey(bytes);
  return { key, algorithms: algorithmsFor(key, algorithms, 'an HMAC secret', 'key.secret') };
}

/** A public KeyObject from a PEM string, a JWK object or a KeyObject; private keys and secrets are refused. */
export function toPublicKey(input: unknown, what: string): KeyObject {
  function refuse(message: string): never {
    return optionError(what, message);
  }
  let key: KeyObject;
  try {
    if (input instanceof KeyObject) {
      if (input.type !== 'public') refuse(`${what} must be a public key (got a ${input.type} key)`);
      key = input;
    } else if (typeof input === 'string') {
      if (/PRIVATE KEY-----/.test(input)) refuse(`${what} must be a public key, not a private one`);
      key = createPublicKey(input);
    } else if (typeof input === 'object' && input !== null) {
      if (Array.isArray((input as { keys?: unknown }).keys))
        refuse(`${what} is a JWK Set ({ "keys": [...] }): give it as key.jwks, whose keys are chosen by kid`);
      const jwk = input as Jwk;
      if (jwk.kty === 'oct') refuse(`${what} is a symmetric JWK; pass it as key.secret`);
      if (jwk.d !== undefined) refuse(`${what} must be a public JWK (it holds private parameter "d")`);
      key = createPublicKey({ key: jwk, format: 'jwk' });
    } else {
      refuse(`${what} must be a PEM string, a JWK object or a KeyObject`);
    }
  } catch (err) {
    if (err instanceof OptionError) throw err;
    refuse(`${what} could not be read as a public key${typeof input === 'string' ? pemHint(input) : ''}`);
  }
  if (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) refuse(`${what} is a ${bits}-bit RSA key; at least ${MIN_RSA_BITS} bits are required`);
  }
  if (algorithmsForKey(key).length === 0) {
    if (key.asymmetricKeyType === 'rsa-pss') refuse(`${what} ${PSS_UNUSABLE}`);
    refuse(`${what} is not an RSA, EC P-256/P-384/P-521, Ed25519 or Ed448 public key`);
  }
  return key;
}

/** `{ publicKey }`: one RSA, EC or Edwards-curve (Ed25519, Ed448) public key, parsed once. */
export function resolvePublicKey(publicKey: unknown, algorithms: readonly Algorithm[] | undefined): HeldKey {
  const key = toPublicKey(publicKey, 'key.publicKey');
  return { key, algorithms: algorithmsFor(key, algorithms, 'this public key', 'key.publicKey') };
}

/** The algorithms of a key resolver: they must be named, since no key is known in advance. */
export function resolverAlgorithms(algorithms: readonly Algorithm[] | undefined): ReadonlySet<Algorithm> {
  if (algorithms === undefined || algorithms.length === 0) {
    optionError(
      'algorithms',
      'option "algorithms" is required with a key resolver function, since no key is known in advance',
    );
  }
  return new Set(algorithms);
}

/**
 * `key: (header) => KeyObject`: the app's resolver. The algorithms must be named, since no key is known in
 * advance. Whether the key it returns fits the header's `alg` is checked by the verifier, as for every source.
 */
export function resolverKeySource(resolve: KeyResolver, algorithms: ReadonlySet<Algorithm>): SigningKeySource {
  const fitted = (key: KeyObject | null | undefined): KeyObject => {
    if (key === null || key === undefined) throw new TokenAuthError('invalid_token', { reason: 'no-key' });
    if (!(key instanceof KeyObject)) {
      throw new TokenAuthError('internal', { reason: 'resolver-returned-non-key' });
    }
    return key;
  };
  return {
    kind: 'jws',
    algorithms,
    keyFor(header) {
      const key = resolve(header);
      if (key instanceof Promise) return key.then(fitted);
      return fitted(key as KeyObject | null | undefined);
    },
    close: () => undefined,
  };
}
