// Builds the token source of the options: the signing keys of keys/, or, for the `key.upstream` form, the remote
// source that asks the identity service's verify endpoint about each new token.
import { optionError } from '../base/option-error';
import { checkRemoteUrl } from '../fetch/remote-url';
import { createKeySource, keyTimeout, readKeyOption } from '../keys';
import type { KeySourceConfig } from '../keys/options';
import { resolveBreaker } from './breaker';
import { resolveMaxInflight } from './inflight';
import type { TokenSource } from './source';
import { upstreamSource } from './upstream';

/**
 * Build the token source named by the `key` and `issuerBaseURL` options, validating it (a TypeError at set-up for
 * anything wrong): upstream mode for `key.upstream`, else the signing keys of keys/.
 */
export function createTokenSource(options: KeySourceConfig): TokenSource {
  const key = options.key;
  if (options.issuerBaseURL !== undefined || typeof key === 'function') return createKeySource(options);
  const read = readKeyOption(key as object);
  if (read.form !== 'upstream') return createKeySource(options, read);
  const base = checkRemoteUrl(read.fields.upstream, 'key.upstream', options.allowInsecureHttp);
  if (base.search !== '') optionError('option "key.upstream" must be a base address without a query string');
  if (options.algorithms !== undefined) {
    optionError('option "algorithms" does not apply with key.upstream (the upstream service checks the signature)');
  }
  return upstreamSource({
    base,
    timeout: keyTimeout(read.fields.timeout),
    breaker: resolveBreaker(read.fields.breaker, 'key.breaker'),
    maxInflight: resolveMaxInflight(read.fields.maxInflight, 'key.maxInflight'),
  });
}

export type { TokenSource, RemoteClaimsSource, RemoteClaims } from './source';
