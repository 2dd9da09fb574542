// One SET or logout token from arrival to answer, for push and poll alike: verified, each jti once, its events
// decided (actions.ts), its rules stored, and only then remembered and acknowledged; never acknowledged unstored.
import { TokenAuthError } from '../base/errors';
import { digestOf } from '../remote/answer-memory';
import { deepFreeze } from '../verify/frozen';
import { decide, eventTime, ActionError, type DecisionContext, type EventAction, type SecurityEvent } from './actions';
import { readLogoutToken, type LogoutSource } from './logout-token';
import type { AcceptedOutcome, Outcome } from './report';
import { storeFailure, storeRules, type RuleRequest, type RuleStore } from './rules';
import { readSet, SetRefusal, type SetSource } from './set';
import type { ReceiverState } from './state';
import { describeSubject, subjectOf, unprocessableMember } from './subjects';

/** What a transmitter's stream says of a verification event's `state` (SSF 1.0 §8.1.4.1). */
export type VerificationAnswer = 'verified' | 'unrequested' | 'mismatch';

/** A transmitter as the receiver sees it when a SET comes in. */
export interface TransmitterSource extends SetSource {
  /** Its metadata's `critical_subject_members`, as last read. */
  criticalMembers(): readonly string[];
  /** A verification event arrived with this `state`: does it answer the one requested? */
  verification(state: string | undefined): Promise<VerificationAnswer>;
  /** A stream-updated event said the stream is now `status`. */
  streamUpdated(status: string | undefined): void;
}

/** What receiving needs, set up once. */
export interface ReceiveContext extends DecisionContext {
  store: RuleStore;
  state: ReceiverState;
  actions: ReadonlyMap<string, EventAction>;
  clock: () => number;
  clockTolerance: number;
  maxAge: number;
}

const accepted = (outcome: AcceptedOutcome, rules = 0): Outcome => ({ status: 'accepted', outcome, rules });

/** A failure on the way, as an outcome: the sender's fault (400), or ours to retry (503). */
function failed(err: unknown): Outcome {
  if (err instanceof SetRefusal) return { status: 'refused', err: err.err, reason: err.reason };
  if (err instanceof ActionError)
    return {
      status: 'unavailable',
      error: new TokenAuthError('verification_unavailable', { reason: 'action-failed', retryAfter: 30, cause: err }),
    };
  if (err instanceof TokenAuthError && err.code === 'verification_unavailable')
    return { status: 'unavailable', error: err };
  return { status: 'unavailable', error: storeFailure(err) };
}

/** Store `rules` and then remember `seen` for `ttl` seconds: the order that never acknowledges an unstored rule. */
async function storeThenRemember(
  context: ReceiveContext,
  rules: readonly RuleRequest[],
  seen: string,
  ttl: number,
): Promise<Outcome | undefined> {
  try {
    if (rules.length > 0) await storeRules(context.store, rules);
  } catch (err) {
    return { status: 'unavailable', error: storeFailure(err) };
  }
  // A jti not remembered only means a replay would store the same rules again, which changes nothing.
  await context.state.put(seen, '1', ttl).catch(() => undefined);
  return undefined;
}

/** Receive one SET from `source` (push or poll). Never rejects: every failure is an outcome. */
export async function receiveSet(text: string, source: TransmitterSource, context: ReceiveContext): Promise<Outcome> {
  let eventType: string | undefined;
  let subjectFormat: string | undefined;
  const tagged = (outcome: Outcome): Outcome => ({ ...outcome, eventType, subjectFormat });
  try {
    const set = await readSet(text, {
      sourceFor: (iss) => (iss === source.issuer ? source : undefined),
      now: context.clock(),
      clockTolerance: context.clockTolerance,
      maxAge: context.maxAge,
    });
    eventType = set.events[0][0];
    const seen = `jti:${digestOf(`${source.issuer}\n${set.jti}`)}`;
    if (await context.state.has(seen)) return tagged(accepted('replayed'));
    const rules: RuleRequest[] = [];
    let outcome: AcceptedOutcome | undefined;
    for (const [type, body] of set.events) {
      const subject = subjectOf(set.payload, body);
      subjectFormat ??= describeSubject(subject);
      if (subject !== undefined && unprocessableMember(subject, source.criticalMembers()) !== undefined)
        throw new SetRefusal('invalid_request', 'critical-subject-member');
      const event: SecurityEvent = deepFreeze({
        type,
        transmitter: source.issuer,
        jti: set.jti,
        issuedAt: set.iat,
        timestamp: eventTime(body, set.iat),
        subject: subject === undefined ? undefined : structuredClone(subject),
        event: structuredClone(body),
      });
      const decision = await decide(event, context.actions, context);
      if (decision.kind === 'rules') rules.push(...decision.rules);
      else if (decision.kind === 'none') outcome ??= decision.outcome;
      else if (decision.kind === 'stream-updated') {
        source.streamUpdated(decision.status);
        outcome ??= 'stream-updated';
      } else {
        const answer = await source.verification(decision.state);
        if (answer === 'mismatch') throw new SetRefusal('invalid_state', 'verification-state');
        outcome ??= answer === 'verified' ? 'verified' : 'verification';
      }
    }
    const unstored = await storeThenRemember(context, rules, seen, context.maxAge + context.clockTolerance);
    if (unstored !== undefined) return tagged(unstored);
    return tagged(rules.length > 0 ? accepted('applied', rules.length) : accepted(outcome ?? 'ignored'));
  } catch (err) {
    return tagged(failed(err));
  }
}

/** Receive one Back-Channel Logout token. Never rejects: every failure is an outcome. */
export async function receiveLogout(text: string, source: LogoutSource, context: ReceiveContext): Promise<Outcome> {
  try {
    const now = context.clock();
    const logout = await readLogoutToken(text, source, now, context.clockTolerance);
    const tagged = (outcome: Outcome): Outcome => ({ ...outcome, subjectFormat: logout.format });
    const seen = `logout:${digestOf(`${source.issuer}\n${logout.jti}`)}`;
    if (await context.state.has(seen)) return tagged(accepted('replayed'));
    const ttl = Math.max(1, logout.exp - now + context.clockTolerance);
    const unstored = await storeThenRemember(context, [logout.rule], seen, ttl);
    return tagged(unstored ?? accepted('applied', 1));
  } catch (err) {
    return failed(err);
  }
}
