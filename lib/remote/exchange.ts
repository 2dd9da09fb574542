// RFC 8693 token exchange (docs/exchange.md): a subject token this instance verified, traded at the authorization
// server's token endpoint for a token to another service; cached per (subject, target), behind the breaker and a cap.
import { TokenAuthError } from '../base/errors';
import { fetchBounded, type BoundedAnswer } from '../fetch/bounded-fetch';
import { checkRemoteUrl } from '../fetch/remote-url';
import type { DiscoveredMetadata } from '../keys/discovery';
import {
  classifyExchangeAnswer,
  classifyExchangeFailure,
  MAX_EXCHANGE_BYTES,
  type ExchangeVerdict,
  type IssuedToken,
} from './exchange-answer';
import { cachedUntil, ExchangeCache, type HeldToken } from './exchange-cache';
import type { ResolvedTokenExchange } from './exchange-options';
import { ACCESS_TOKEN_TYPE, addTarget, readTarget, targetText, type NormalTarget } from './exchange-target';
import { countAsOutage } from './answer-class';
import { guardRemoteCall } from './remote-call';

/** RFC 8693 §2.1 `grant_type`. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** What `auth.exchange()` resolves: the token issued for the target (RFC 8693 §2.2.1). */
export interface ExchangedToken {
  /** The token to send to the target service. */
  accessToken: string;
  /** How to send it: `Bearer` (or what the server says, such as `DPoP`). */
  tokenType: string;
  /** Seconds it has left, when the server named its lifetime (counted down for a token from the cache). */
  expiresIn: number | undefined;
  /** Its type URI (`urn:ietf:params:oauth:token-type:access_token`), as the server named it. */
  issuedTokenType: string | undefined;
  /** The scope granted: as answered, else (RFC 8693 §2.2.1) the scope asked for. */
  scope: string[];
}

/** What the exchange needs besides its settings. */
export interface ExchangeContext {
  /** The discovered metadata of the one `issuerBaseURL`, when the endpoint is not configured. */
  metadata: (() => Promise<DiscoveredMetadata>) | undefined;
  clock: () => number;
  allowInsecureHttp: boolean;
}

/** Exchanges for one TokenAuth: the subject token must have been verified by the caller, just now. */
export interface Exchanger {
  /** Read a target (an OptionError for a malformed one), before anything is verified or asked. */
  target(value: unknown): NormalTarget;
  /** The token for `target` in exchange for `subject`, whose `exp` bounds the cache entry. */
  exchange(subject: string, subjectExp: number | undefined, target: NormalTarget): Promise<ExchangedToken>;
  /** Exchanged tokens held. */
  cached(): number;
  close(): void;
}

/** An answer that would fail every exchange alike (no usable endpoint): no call is made, no outage is counted. */
function misconfigured(reason: string): TokenAuthError {
  return new TokenAuthError('verification_unavailable', { reason, retryAfter: 5 });
}

/** What one caller gets: a fresh object, its lifetime counted from now. */
function handedOut(held: HeldToken, target: NormalTarget, now: number): ExchangedToken {
  const { token } = held;
  return {
    accessToken: token.accessToken,
    tokenType: token.tokenType,
    expiresIn: held.expiresAt === undefined ? undefined : Math.max(0, Math.round(held.expiresAt - now)),
    issuedTokenType: token.issuedTokenType,
    scope: [...(token.scope ?? target.scope)],
  };
}

/** Build the exchange of the resolved `tokenExchange` option. */
export function createExchanger(settings: ResolvedTokenExchange, context: ExchangeContext): Exchanger {
  const { clock } = context;
  const closing = new AbortController();
  const cache = new ExchangeCache(settings.cache);

  async function endpoint(): Promise<string> {
    if (settings.endpoint !== undefined) return settings.endpoint.href;
    if (context.metadata === undefined) throw misconfigured('exchange-endpoint-missing');
    let found: unknown;
    try {
      found = (await context.metadata()).tokenEndpoint;
    } catch (err) {
      // The server's discovery out of reach is its outage, as for introspection.
      throw countAsOutage(err);
    }
    if (found === undefined) throw misconfigured('exchange-endpoint-missing');
    try {
      return checkRemoteUrl(found, 'token_endpoint', context.allowInsecureHttp).href;
    } catch {
      throw misconfigured('exchange-endpoint-invalid');
    }
  }

  /** One call to the token endpoint, its answer classified (exchange-answer.ts). */
  async function call(subject: string, target: NormalTarget): Promise<ExchangeVerdict> {
    const url = await endpoint();
    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN_TYPE,
    });
    addTarget(form, target);
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
    };
    settings.client.apply(form, headers, url, clock());
    let answer: BoundedAnswer;
    try {
      answer = await fetchBounded(url, {
        headers,
        body: form.toString(),
        timeoutMs: settings.timeout * 1000,
        maxBytes: MAX_EXCHANGE_BYTES,
        signal: closing.signal,
        kind: 'exchange',
        readErrorBody: true,
      });
    } catch (err) {
      return classifyExchangeFailure(err);
    }
    return classifyExchangeAnswer(answer, target);
  }

  /** One call, the token issued or its failure thrown; guarded as every remote call is (remote/remote-call.ts). */
  const guarded = guardRemoteCall(
    async (job: { subject: string; target: NormalTarget }): Promise<IssuedToken> => {
      const verdict = await call(job.subject, job.target);
      if (verdict.kind === 'issued') return verdict.token;
      throw verdict.error;
    },
    { prefix: 'exchange', breaker: settings.breaker, maxInflight: settings.maxInflight, timeout: settings.timeout },
  );

  return {
    target: readTarget,
    async exchange(subject, subjectExp, target) {
      const keys = cache.keysOf(subject, targetText(target));
      const now = clock();
      const held = cache.get(keys, now);
      if (held !== undefined) return handedOut(held, target, now);
      const fresh = await cache.share(keys, async () => {
        const token = await guarded.call({ subject, target });
        const at = clock();
        const made: HeldToken = { token, expiresAt: token.expiresIn === undefined ? undefined : at + token.expiresIn };
        const until = cachedUntil(made, at, subjectExp);
        if (until !== undefined) cache.set(keys, made, until);
        return made;
      });
      return handedOut(fresh, target, clock());
    },
    cached: () => cache.size,
    close() {
      closing.abort();
      cache.clear();
    },
  };
}
