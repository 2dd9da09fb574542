// `key.jwks`: a JWK Set the app gives inline (`{ "keys": [...] }`), read once at set-up with the checks a fetched
// set's keys pass (keys/key-set.ts), refused at createTokenAuth when malformed, then keys chosen by `kid`.
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';
import { algorithmsForKey, type Algorithm } from '../jose/algorithms';
import { JWKS_DEFAULT_ALGORITHMS, MAX_JWKS_KEYS } from './jwks';
import { indexKeys, keyFromSet, readJwkOrFault, type JwksKey, type KeySet } from './key-set';
import type { SigningKeySource } from './source';
import type { ServedIssuers } from '../token/issuer';

/** A JWK Set given inline, as the app holds it: verification keys chosen by `kid`. */
export interface InlineJwks {
  set: KeySet;
  /** The algorithms a token may name: option `algorithms`, or every asymmetric one (each key is fit-checked). */
  algorithms: ReadonlySet<Algorithm>;
}

/**
 * Read `key.jwks` (an OptionError naming its dotted path for anything wrong): an object whose `keys` is a non-empty
 * array of at most MAX_JWKS_KEYS JWKs, as a fetched set is bounded. Entries that say they are for another use
 * (`use` other than `sig`, `key_ops` without `verify`: a server's set pasted whole) are left out; every other entry
 * must be a usable public verification key, and at least one must verify one of the accepted algorithms. HS* is
 * never accepted: a JWK Set here holds public keys only (symmetric ones are `key.secret`).
 */
export function resolveInlineJwks(value: unknown, algorithms: readonly Algorithm[] | undefined): InlineJwks {
  const shape = 'a JWK Set: { "keys": [ <public JWK>, … ] }';
  if (Array.isArray(value)) optionError('key.jwks', `option "key.jwks" is an array: give the set itself, ${shape}`);
  if (!isObject(value)) optionError('key.jwks', `option "key.jwks" must be ${shape}`);
  if (!Array.isArray(value.keys)) optionError('key.jwks.keys', `option "key.jwks.keys" must be an array (${shape})`);
  const entries: unknown[] = value.keys;
  if (entries.length === 0) optionError('key.jwks.keys', 'option "key.jwks.keys" is empty: give at least one key');
  if (entries.length > MAX_JWKS_KEYS)
    optionError(
      'key.jwks.keys',
      `option "key.jwks.keys" holds ${entries.length} keys; at most ${MAX_JWKS_KEYS}, as for a fetched JWKS`,
    );
  const usable: JwksKey[] = [];
  entries.forEach((entry, index) => {
    const read = readJwkOrFault(entry);
    if ('key' in read) usable.push(read);
    else if (read.otherUse !== true) {
      const path = `key.jwks.keys[${index}]`;
      optionError(path, `option "${path}" is not a usable public verification key: ${read.why}`);
    }
  });
  if (usable.length === 0)
    optionError('key.jwks.keys', 'option "key.jwks.keys" holds no signature key (each says it is for another use)');
  const accepted = new Set(algorithms ?? JWKS_DEFAULT_ALGORITHMS);
  if (!usable.some((entry) => algorithmsForKey(entry.key).some((alg) => accepted.has(alg))))
    optionError(
      'algorithms',
      `option "algorithms" names ${[...accepted].join(', ')}, which no key of option "key.jwks" can verify`,
    );
  return { set: indexKeys(usable, 0), algorithms: accepted };
}

/**
 * The key source of an inline JWK Set: the key the token's `kid` names (or, without `kid`, the one key that fits
 * its `alg`), held to the key's own `alg` and `issuer` (`served`: the issuers the app accepts). Never fetches, so a
 * `kid` it lacks is a 401 at once. Synchronous: verification stays free of promises.
 */
export function inlineJwksKeySource(jwks: InlineJwks, served?: ServedIssuers): SigningKeySource {
  const { set, algorithms } = jwks;
  return {
    kind: 'jws',
    algorithms,
    keyFor(header, payload) {
      const found = keyFromSet(set, header, payload, served);
      if (found !== undefined) return found;
      const hint = 'expected a kid that option "key.jwks" lists: a set given inline is never fetched again';
      throw new TokenAuthError('invalid_token', { reason: 'kid-unknown', hint });
    },
    close: () => undefined,
  };
}
