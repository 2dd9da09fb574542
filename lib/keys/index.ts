// Builds the signing-key source that the `key` and `issuerBaseURL` options name, validating the `key` option's forms
// (the `upstream` form is a remote source: remote/index.ts builds it from the fields read here).
import { parseDuration } from '../base/duration';
import type { KeySourceConfig } from './options';
import { discoveryKeySource } from './discovery';
import { jwksKeySource } from './jwks';
import { undefinedKeyFieldMessage } from './hints';
import { checkRemoteUrl } from '../fetch/remote-url';
import { checkJwksAddress } from './wrong-document';
import { publicKeySource, resolverKeySource, secretKeySource, type KeyResolver } from './static';
import type { SigningKeySource } from './source';
import { optionError } from '../base/option-error';

/** The object forms of the `key` option. */
export type KeyForm = 'secret' | 'publicKey' | 'jwksUri' | 'upstream';

/** The fields each `key` form accepts; anything else is a typo or a field of another form, refused at set-up. */
const KEY_FIELDS: Record<KeyForm, readonly string[]> = {
  secret: ['secret'],
  publicKey: ['publicKey'],
  jwksUri: ['jwksUri', 'cooldown', 'timeout'],
  upstream: ['upstream', 'timeout', 'breaker', 'maxInflight'],
};

const DEFAULT_COOLDOWN = 30;
const DEFAULT_TIMEOUT = 5;

/** `key.timeout`: seconds, more than zero; 5 when absent. */
export function keyTimeout(value: unknown): number {
  if (value === undefined) return DEFAULT_TIMEOUT;
  const seconds = parseDuration(value, 'key.timeout');
  if (seconds <= 0) optionError('option "key.timeout" must be more than zero');
  return seconds;
}

/** The `key` option read: which form it takes, and its fields (each allowed for that form). */
export interface KeyOptionRead {
  form: KeyForm;
  fields: Readonly<Record<string, unknown>>;
}

/**
 * Read the `key` option's object form, validating it (a TypeError at set-up for anything wrong): exactly one of
 * `secret`, `publicKey`, `jwksUri`, `upstream`, and only the fields that form allows.
 */
export function readKeyOption(key: object): KeyOptionRead {
  const fields = key as Record<string, unknown>;
  const forms = (Object.keys(KEY_FIELDS) as KeyForm[]).filter((form) => fields[form] !== undefined);
  // `{ secret: process.env.TOKEN_SECRET }` with the variable unset: say so, rather than "exactly one of".
  const unsetForm = (Object.keys(KEY_FIELDS) as KeyForm[]).find((form) => form in fields && fields[form] === undefined);
  if (forms.length === 0 && unsetForm !== undefined) optionError(undefinedKeyFieldMessage(unsetForm, process.env));
  if (forms.length !== 1) {
    optionError(
      `option "key" must have exactly one of secret, publicKey, jwksUri or upstream${forms.length > 1 ? ` (got ${forms.join(' and ')})` : ''}`,
    );
  }
  const form = forms[0];
  for (const field of Object.keys(fields)) {
    // A field left undefined (an unset environment variable, say) is absent, as it is for choosing the form.
    if (fields[field] !== undefined && !KEY_FIELDS[form].includes(field)) {
      optionError(`option "key.${field}" does not apply to key.${form} (allowed: ${KEY_FIELDS[form].join(', ')})`);
    }
  }
  return { form, fields };
}

/**
 * Build the signing-key source named by the `key` option (read by `readKeyOption`, any form but `upstream`) or by
 * `issuerBaseURL`, validating it (a TypeError at set-up for anything wrong).
 */
export function createKeySource(options: KeySourceConfig, read?: KeyOptionRead): SigningKeySource {
  if (options.issuerBaseURL !== undefined) {
    if (options.algorithms?.some((alg) => alg.startsWith('HS'))) {
      optionError(
        'option "algorithms" may not name an HS* algorithm with issuerBaseURL (a JWKS carries public keys only)',
      );
    }
    return discoveryKeySource({
      issuers: options.issuerBaseURL,
      cooldown: DEFAULT_COOLDOWN,
      timeout: options.discoveryTimeout,
      algorithms: options.algorithms,
      clock: options.clock,
      allowInsecureHttp: options.allowInsecureHttp,
    });
  }
  const key = options.key;
  if (typeof key === 'function') return resolverKeySource(key as KeyResolver, options.algorithms);
  const { form, fields } = read ?? readKeyOption(key as object);
  switch (form) {
    case 'secret':
      return secretKeySource(fields.secret, options.algorithms);
    case 'publicKey':
      return publicKeySource(fields.publicKey, options.algorithms);
    case 'jwksUri': {
      const url = checkRemoteUrl(fields.jwksUri, 'key.jwksUri', options.allowInsecureHttp);
      checkJwksAddress(url, 'key.jwksUri');
      if (options.algorithms?.some((alg) => alg.startsWith('HS'))) {
        optionError(
          'option "algorithms" may not name an HS* algorithm with key.jwksUri (a JWKS carries public keys only)',
        );
      }
      return jwksKeySource({
        url,
        cooldown: fields.cooldown === undefined ? DEFAULT_COOLDOWN : parseDuration(fields.cooldown, 'key.cooldown'),
        timeout: keyTimeout(fields.timeout),
        algorithms: options.algorithms,
        clock: options.clock,
      });
    }
    case 'upstream':
      // remote/index.ts builds the upstream source; reaching here is a wiring error of the composition.
      return optionError('option "key.upstream" names a remote source, not keys');
  }
}

export type { SigningKeySource } from './source';
