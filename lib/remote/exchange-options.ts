// The `tokenExchange` option (docs/exchange.md): who this server is at the authorization server's token endpoint,
// where that endpoint is, and the bounds of a call and of the exchanged-token cache. Checked once, at createTokenAuth.
import { positiveDuration, type Duration } from '../base/duration';
import { knownFields, positiveInteger, type FieldList } from '../base/option-checks';
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';
import { resolveBreaker, type BreakerConfig, type BreakerOptions } from './breaker';
import { CLIENT_FIELDS, resolveClientAuth, type ClientAuth, type ClientCredentials } from './client-auth';
import type { IssuerBase } from '../keys/discovery-options';
import { DEFAULT_MAX_INFLIGHT, resolveMaxInflight } from './inflight';
import { checkRemoteUrl } from '../fetch/remote-url';

/** Bounds of the exchanged-token cache. */
export interface ExchangeCacheOptions {
  /** Most exchanged tokens held (default 1 000). */
  max?: number;
  /** Most bytes held, sealed tokens and their keys counted (default 2 MiB). */
  maxBytes?: number;
}

/** `tokenExchange`: RFC 8693 token exchange at the authorization server, for `auth.exchange()`. */
export interface TokenExchangeOptions extends ClientCredentials {
  /** The token endpoint; default: `token_endpoint` of the metadata discovered at the one `issuerBaseURL`. */
  endpoint?: string;
  /** Limit of one call, body included (default 5 s). */
  timeout?: Duration;
  /** Circuit breaker in front of the token endpoint (default 5 failures, 5 s cooldown); `false` turns it off. */
  breaker?: BreakerOptions | false;
  /** Most exchanges under way at once (default 100); one more is answered 503 at once, never queued. */
  maxInflight?: number;
  /** Bounds of the cache of exchanged tokens, or `false` to ask the server on every call. */
  cache?: ExchangeCacheOptions | false;
}

/** The exchange settings after validation; durations in seconds. */
export interface ResolvedTokenExchange {
  client: ClientAuth;
  /** The configured endpoint, or undefined to take the discovered one. */
  endpoint: URL | undefined;
  timeout: number;
  breaker: BreakerConfig | false;
  maxInflight: number;
  cache: { max: number; maxBytes: number } | false;
}

const FIELDS: FieldList<TokenExchangeOptions> = {
  ...CLIENT_FIELDS,
  endpoint: true,
  timeout: true,
  breaker: true,
  maxInflight: true,
  cache: true,
};
const CACHE_FIELDS: FieldList<ExchangeCacheOptions> = { max: true, maxBytes: true };
const DEFAULT_TIMEOUT = 5;
const DEFAULT_CACHE = { max: 1000, maxBytes: 2 * 1024 * 1024 };

function resolveExchangeCache(value: unknown): ResolvedTokenExchange['cache'] {
  if (value === false) return false;
  if (value === undefined) return DEFAULT_CACHE;
  if (!isObject(value)) optionError('tokenExchange.cache', 'option "tokenExchange.cache" must be an object or false');
  knownFields(value, CACHE_FIELDS, 'tokenExchange.cache');
  return {
    max: positiveInteger(value.max, 'tokenExchange.cache.max', DEFAULT_CACHE.max),
    maxBytes: positiveInteger(value.maxBytes, 'tokenExchange.cache.maxBytes', DEFAULT_CACHE.maxBytes),
  };
}

/**
 * Validate `tokenExchange` (a TypeError naming the option for anything wrong). The token endpoint is the configured
 * `endpoint`, or the one discovered at the single `issuerBaseURL`. Undefined when the option is absent.
 */
export function resolveTokenExchange(
  value: unknown,
  issuerBaseURL: readonly IssuerBase[] | undefined,
  allowInsecureHttp: boolean,
): ResolvedTokenExchange | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value))
    optionError(
      'tokenExchange',
      'option "tokenExchange" must be an object ({ clientId, clientSecret } or { clientId, privateKey })',
    );
  knownFields(value, FIELDS, 'tokenExchange');
  const client = resolveClientAuth(value, 'tokenExchange');
  const endpoint =
    value.endpoint === undefined
      ? undefined
      : checkRemoteUrl(value.endpoint, 'tokenExchange.endpoint', allowInsecureHttp);
  if (endpoint === undefined && issuerBaseURL?.length !== 1) {
    optionError(
      'tokenExchange.endpoint',
      'option "tokenExchange.endpoint" is required unless "issuerBaseURL" names exactly one authorization server (whose token_endpoint is discovered)',
    );
  }
  return {
    client,
    endpoint,
    timeout: positiveDuration(value.timeout, 'tokenExchange.timeout', DEFAULT_TIMEOUT),
    breaker: resolveBreaker(value.breaker, 'tokenExchange.breaker'),
    maxInflight: resolveMaxInflight(value.maxInflight, 'tokenExchange.maxInflight') ?? DEFAULT_MAX_INFLIGHT,
    cache: resolveExchangeCache(value.cache),
  };
}
