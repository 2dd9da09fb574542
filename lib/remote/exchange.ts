// RFC 8693 token exchange (docs/exchange.md): a subject token this instance verified, traded at the authorization
// server's token endpoint for a token to another service; cached per (subject, target), behind the breaker and a cap.
import { TokenAuthError } from '../base/errors';
import { fetchBounded, type BoundedAnswer } from '../fetch/bounded-fetch';
import { checkRemoteUrl } from '../fetch/remote-url';
import type { DiscoveredMetadata } from '../keys/discovery';
import { CircuitBreaker } from './breaker';
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
import { limitInflight } from './inflight';
import { LONGEST_RETRY_AFTER } from './retry-after';

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
  const breaker = settings.breaker === false ? undefined : new CircuitBreaker(settings.breaker);
  // A 429 holds every new call (RFC 6585 §4: it is addressed to this client), for the time it names, capped.
  let heldUntil = 0;

  async function endpoint(): Promise<string> {
    if (settings.endpoint !== undefined) return settings.endpoint.href;
    if (context.metadata === undefined) throw misconfigured('exchange-endpoint-missing');
    const found = (await context.metadata()).tokenEndpoint;
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

  // The failures the breaker counts: the server's outages, not refusals of one request, nor a throttle.
  const outages = new WeakSet<TokenAuthError>();
  const isOutage = (err: unknown) => err instanceof TokenAuthError && outages.has(err);

  /** The call behind the breaker and the throttle: the token issued, or its failure thrown. */
  async function ask(job: { subject: string; target: NormalTarget }): Promise<IssuedToken> {
    const wait = heldUntil - Date.now();
    if (wait > 0) {
      throw new TokenAuthError('verification_unavailable', {
        reason: 'exchange-throttled',
        retryAfter: Math.ceil(wait / 1000),
      });
    }
    const run = async () => {
      const verdict = await call(job.subject, job.target);
      if (verdict.kind === 'issued') return verdict.token;
      if (verdict.kind === 'throttle')
        heldUntil = Math.max(heldUntil, Date.now() + Math.min(verdict.retryAfter, LONGEST_RETRY_AFTER) * 1000);
      if (verdict.kind === 'outage') outages.add(verdict.error);
      throw verdict.error;
    };
    return breaker === undefined ? run() : breaker.run(run, isOutage);
  }
  // The cap stands outside the breaker: a busy refusal makes no call, so it is no outage.
  const limited = limitInflight(ask, settings.maxInflight, 'exchange-busy');

  return {
    target: readTarget,
    async exchange(subject, subjectExp, target) {
      const keys = cache.keysOf(subject, targetText(target));
      const now = clock();
      const held = cache.get(keys, now);
      if (held !== undefined) return handedOut(held, target, now);
      const fresh = await cache.share(keys, async () => {
        const token = await limited({ subject, target });
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
