import type { ResolvedOptions } from '../options';
import { publicKeySource, resolverKeySource, secretKeySource, type KeyResolver } from './static';
import type { KeySource } from './source';

function fail(message: string): never {
  throw new TypeError(`express-verified-user: ${message}`);
}

/**
 * Build the key source named by the `key` option, validating it (a TypeError at set-up for anything wrong).
 * Exactly one of `secret`, `publicKey`, `jwksUri`, `upstream` may be given, or a resolver function.
 */
export function createKeySource(options: ResolvedOptions): KeySource {
  const key = options.key;
  if (typeof key === 'function') return resolverKeySource(key as KeyResolver, options.algorithms);
  const forms = ['secret', 'publicKey', 'jwksUri', 'upstream'].filter((form) => (key as Record<string, unknown>)[form] !== undefined);
  if (forms.length !== 1) {
    fail(`option "key" must have exactly one of secret, publicKey, jwksUri or upstream${forms.length > 1 ? ` (got ${forms.join(' and ')})` : ''}`);
  }
  if ('secret' in key) return secretKeySource(key.secret, options.algorithms);
  if ('publicKey' in key) return publicKeySource(key.publicKey, options.algorithms);
  return fail(`key source "${forms[0]}" is not available in this build`);
}

export type { KeySource, SigningKeySource, RemoteClaimsSource, RemoteClaims } from './source';
