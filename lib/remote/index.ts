// The token source of the options, resolved at set-up and built after: the signing keys of keys/, or, for the
// `key.upstream` form, the remote source that asks the identity service's verify endpoint about each new token.
import { optionError } from '../base/option-error';
import type { FieldList } from '../base/option-checks';
import { checkRemoteUrl } from '../fetch/remote-url';
import {
  createKeySource,
  keyTimeout,
  readKeyOption,
  resolveKeys,
  type KeyContext,
  type KeyOptionsInput,
  type ResolvedKeys,
} from '../keys';
import { resolveBreaker } from './breaker';
import { resolveMaxInflight } from './inflight';
import type { TokenSource } from './source';
import type { IssuerRule } from '../token/issuer';
import { upstreamSource, type UpstreamKeyOption, type UpstreamSourceConfig } from './upstream';

const UPSTREAM_FIELDS: FieldList<UpstreamKeyOption> = {
  upstream: true,
  timeout: true,
  breaker: true,
  maxInflight: true,
};

/** The token source the options name, checked: signing keys, or the upstream service. */
export type ResolvedTokenSource = ResolvedKeys | ({ form: 'upstream' } & UpstreamSourceConfig);

/**
 * Resolve the token source named by the `key` and `issuerBaseURL` options (an OptionError for anything wrong):
 * upstream mode for `key.upstream`, else the signing keys of keys/.
 */
export function resolveTokenSource(options: KeyOptionsInput, context: KeyContext): ResolvedTokenSource {
  const read = readKeyOption(options, UPSTREAM_FIELDS, context.allowInsecureHttp);
  if (read.form !== 'upstream') return resolveKeys(read, context);
  const base = checkRemoteUrl(read.fields.upstream, 'key.upstream', context.allowInsecureHttp);
  if (base.search !== '')
    optionError('key.upstream', 'option "key.upstream" must be a base address without a query string');
  if (context.algorithms !== undefined) {
    optionError(
      'algorithms',
      'option "algorithms" does not apply with key.upstream (the upstream service checks the signature)',
    );
  }
  return {
    form: 'upstream',
    base,
    timeout: keyTimeout(read.fields.timeout),
    breaker: resolveBreaker(read.fields.breaker, 'key.breaker'),
    maxInflight: resolveMaxInflight(read.fields.maxInflight, 'key.maxInflight'),
  };
}

/**
 * Build the token source resolved by `resolveTokenSource`; `clock` paces key fetches, and the issuers of option
 * `issuer` are those a JWK Set's keys serve (keys/key-set.ts). Throws no option error.
 */
export function createTokenSource(options: {
  source: ResolvedTokenSource;
  clock: () => number;
  rules: { issuer: IssuerRule | false };
}): TokenSource {
  const { source, clock } = options;
  if (source.form === 'upstream') return upstreamSource(source);
  const issuer = options.rules.issuer;
  return createKeySource(source, clock, issuer === false ? undefined : () => issuer.issuers);
}

export type { TokenSource, RemoteClaimsSource, RemoteClaims } from './source';
