// What an event asks of the revocation store: rules (a subject, a session, one token), checked, then stored; and how
// a store's failure tells the transmitter to come back (503 and Retry-After, or a SET left unacknowledged).
import { TokenAuthError } from '../base/errors';
import { isObject } from '../base/values';

/**
 * A rule an event asks for (SPEC names them in `actions`): `before` and `exp` in seconds since the epoch.
 * - `subject`: the subject's tokens issued at or before `before` are refused;
 * - `session`: tokens whose `sid` is `sid` are refused, and with `sub`, that subject's tokens without `sid` issued at
 *   or before `before`;
 * - `token`: the token with this `jti` is refused until `exp`.
 * `iss` is the issuer of the user's tokens (never the transmitter's, unless it issues them).
 */
export type RuleRequest =
  | { rule: 'subject'; iss: string; sub: string; before: number }
  | { rule: 'session'; iss: string; sid: string; sub?: string; before: number }
  | { rule: 'token'; jti: string; exp: number };

/** What the receiver needs of the revocation store (createRedisStore, createMemoryRevocationStore). */
export interface RuleStore {
  revokeSubject(subject: { iss: string; sub: string }, options: { before: number }): Promise<void>;
  revokeSession(session: { iss: string; sid: string; sub?: string }, options: { before: number }): Promise<void>;
  revoke(jti: string, exp: number): Promise<void>;
}

/** Whether `store` has the rules the receiver stores. */
export function isRuleStore(store: unknown): store is RuleStore {
  const rules = store as Partial<RuleStore> | null | undefined;
  return (
    typeof rules?.revokeSubject === 'function' &&
    typeof rules.revokeSession === 'function' &&
    typeof rules.revoke === 'function'
  );
}

const text = (value: unknown) => typeof value === 'string' && value !== '' && value.length <= 1024;
const time = (value: unknown) => typeof value === 'number' && Number.isFinite(value);

/** Whether `value` is a well-formed RuleRequest (an `actions` function may answer anything). */
export function isRuleRequest(value: unknown): value is RuleRequest {
  if (!isObject(value)) return false;
  switch (value.rule) {
    case 'subject':
      return text(value.iss) && text(value.sub) && time(value.before);
    case 'session':
      return text(value.iss) && text(value.sid) && (value.sub === undefined || text(value.sub)) && time(value.before);
    case 'token':
      return text(value.jti) && time(value.exp);
    default:
      return false;
  }
}

/**
 * Store every rule (each is idempotent: storing one twice changes nothing). Resolves once all are stored where every
 * instance sees them; rejects with the store's failure (a `verification_unavailable` TokenAuthError when it is full
 * or unreachable) otherwise, so that the SET is answered 503 or left unacknowledged and comes back.
 */
export async function storeRules(store: RuleStore, rules: readonly RuleRequest[]): Promise<void> {
  await Promise.all(
    rules.map((request) => {
      switch (request.rule) {
        case 'subject':
          return store.revokeSubject({ iss: request.iss, sub: request.sub }, { before: Math.floor(request.before) });
        case 'session': {
          const session = {
            iss: request.iss,
            sid: request.sid,
            ...(request.sub === undefined ? {} : { sub: request.sub }),
          };
          return store.revokeSession(session, { before: Math.floor(request.before) });
        }
        default:
          return store.revoke(request.jti, request.exp);
      }
    }),
  );
}

/** Retry-After (seconds) for a store that could not take a rule and did not say when to come back. */
export const STORE_RETRY_AFTER = 5;

/**
 * A store's failure as the receiver answers it: 503 with the store's own Retry-After (`revocation-store-full`,
 * `store-unavailable`, …); anything else the store threw (a misuse, a bug) is the same 503, reason
 * `rule-not-stored`, so that the transmitter comes back rather than losing the event.
 */
export function storeFailure(err: unknown): TokenAuthError {
  if (err instanceof TokenAuthError && err.code === 'verification_unavailable') return err;
  return new TokenAuthError('verification_unavailable', {
    reason: 'rule-not-stored',
    retryAfter: STORE_RETRY_AFTER,
    cause: err,
  });
}

/** The Retry-After, in seconds, a `verification_unavailable` failure carries. */
export function retryAfterOf(err: TokenAuthError): number {
  const seconds = Number(err.headers['Retry-After']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : STORE_RETRY_AFTER;
}
