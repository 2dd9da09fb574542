// Builds the key source that the `key` and `issuerBaseURL` options name, validating the `key` option's forms.
import { parseDuration } from '../base/duration';
import type { KeySourceConfig } from './options';
import { discoveryKeySource } from './discovery';
import { jwksKeySource } from './jwks';
import { resolveBreaker } from './breaker';
import { undefinedKeyFieldMessage } from './hints';
import { checkRemoteUrl } from './remote-url';
import { checkJwksAddress } from './wrong-document';
import { publicKeySource, resolverKeySource, secretKeySource, type KeyResolver } from './static';
import type { KeySource } from './source';
import { upstreamSource } from './upstream';
import { resolveMaxInflight } from './inflight';
import { optionError } from '../base/option-error';

type KeyForm = 'secret' | 'publicKey' | 'jwksUri' | 'upstream';

/** The fields each `key` form accepts; anything else is a typo or a field of another form, refused at set-up. */
const KEY_FIELDS: Record<KeyForm, readonly string[]> = {
  secret: ['secret'],
  publicKey: ['publicKey'],
  jwksUri: ['jwksUri', 'cooldown', 'timeout'],
  upstream: ['upstream', 'timeout', 'breaker', 'maxInflight'],
};

const DEFAULT_COOLDOWN = 30;
const DEFAULT_TIMEOUT = 5;

function timeoutOf(value: unknown): number {
  if (value === undefined) return DEFAULT_TIMEOUT;
  const seconds = parseDuration(value, 'key.timeout');
  if (seconds <= 0) optionError('option "key.timeout" must be more than zero');
  return seconds;
}

/**
 * Build the key source named by the `key` option, validating it (a TypeError at set-up for anything wrong).
 * Exactly one of `secret`, `publicKey`, `jwksUri`, `upstream` may be given, or a resolver function.
 */
export function createKeySource(options: KeySourceConfig): KeySource {
  if (options.issuerBaseURL !== undefined) {
    if (options.algorithms?.some((alg) => alg.startsWith('HS'))) {
      optionError('option "algorithms" may not name an HS* algorithm with issuerBaseURL (a JWKS carries public keys only)');
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
  const fields = key as Record<string, unknown>;
  const forms = (Object.keys(KEY_FIELDS) as KeyForm[]).filter((form) => fields[form] !== undefined);
  // `{ secret: process.env.TOKEN_SECRET }` with the variable unset: say so, rather than "exactly one of".
  const unsetForm = (Object.keys(KEY_FIELDS) as KeyForm[]).find((form) => form in fields && fields[form] === undefined);
  if (forms.length === 0 && unsetForm !== undefined) optionError(undefinedKeyFieldMessage(unsetForm, process.env));
  if (forms.length !== 1) {
    optionError(`option "key" must have exactly one of secret, publicKey, jwksUri or upstream${forms.length > 1 ? ` (got ${forms.join(' and ')})` : ''}`);
  }
  const form = forms[0];
  for (const field of Object.keys(fields)) {
    // A field left undefined (an unset environment variable, say) is absent, as it is for choosing the form.
    if (fields[field] !== undefined && !KEY_FIELDS[form].includes(field)) {
      optionError(`option "key.${field}" does not apply to key.${form} (allowed: ${KEY_FIELDS[form].join(', ')})`);
    }
  }

  switch (form) {
    case 'secret':
      return secretKeySource(fields.secret, options.algorithms);
    case 'publicKey':
      return publicKeySource(fields.publicKey, options.algorithms);
    case 'jwksUri': {
      const url = checkRemoteUrl(fields.jwksUri, 'key.jwksUri', options.allowInsecureHttp);
      checkJwksAddress(url, 'key.jwksUri');
      if (options.algorithms?.some((alg) => alg.startsWith('HS'))) {
        optionError('option "algorithms" may not name an HS* algorithm with key.jwksUri (a JWKS carries public keys only)');
      }
      return jwksKeySource({
        url,
        cooldown: fields.cooldown === undefined ? DEFAULT_COOLDOWN : parseDuration(fields.cooldown, 'key.cooldown'),
        timeout: timeoutOf(fields.timeout),
        algorithms: options.algorithms,
        clock: options.clock,
      });
    }
    case 'upstream': {
      const base = checkRemoteUrl(fields.upstream, 'key.upstream', options.allowInsecureHttp);
      if (base.search !== '') optionError('option "key.upstream" must be a base address without a query string');
      if (options.algorithms !== undefined) {
        optionError('option "algorithms" does not apply with key.upstream (the upstream service checks the signature)');
      }
      return upstreamSource({
        base,
        timeout: timeoutOf(fields.timeout),
        breaker: resolveBreaker(fields.breaker, 'key.breaker'),
        maxInflight: resolveMaxInflight(fields.maxInflight, 'key.maxInflight'),
      });
    }
  }
}

export type { KeySource, SigningKeySource, RemoteClaimsSource, RemoteClaims } from './source';
