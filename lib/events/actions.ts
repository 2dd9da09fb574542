// What each event type does (docs/continuous-access.md): CAEP 1.0 and RISC 1.0 events as rules, SSF's own stream
// events, as one table of data; the `actions` option overrides a row per event type.
import { isObject } from '../base/values';
import { isRuleRequest, type RuleRequest } from './rules';
import { sessionOf, tokenOf, userOf, type SubjectIdentifier, type SubjectNaming } from './subjects';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type/';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type/';
const SSF = 'https://schemas.openid.net/secevent/ssf/event-type/';

/** SSF 1.0 §8.1.4.1: the verification event a stream's receiver asks for. */
export const VERIFICATION_EVENT = `${SSF}verification`;
/** SSF 1.0 §8.1.5: the transmitter changed the stream's status. */
export const STREAM_UPDATED_EVENT = `${SSF}stream-updated`;

/** One event of a verified SET, as an `actions` function sees it (read-only). */
export interface SecurityEvent {
  /** The event type URI (a member name of the SET's `events`). */
  readonly type: string;
  /** The issuer of the SET (the transmitter), or of the logout token. */
  readonly transmitter: string;
  readonly jti: string;
  /** The SET's `iat`, seconds since the epoch. */
  readonly issuedAt: number;
  /** When it happened: the event's `event_timestamp` (never later than `issuedAt`), else `issuedAt`. */
  readonly timestamp: number;
  /** The subject as sent (`sub_id`, or the event's own `subject`), when there is one. */
  readonly subject: SubjectIdentifier | undefined;
  /** The event's own members (`change_type`, `reason_admin`, …). */
  readonly event: Readonly<Record<string, unknown>>;
}

/**
 * What an event type does (`actions` option): `'subject'` (a subject rule for its user), `'session'` (a session
 * rule for its session, else a subject rule), `'ignore'`, or a function answering the rules to store (none: `[]`).
 */
export type EventAction =
  'subject' | 'session' | 'ignore' | ((event: SecurityEvent) => RuleRequest[] | Promise<RuleRequest[]>);

/** What the receiver does with one event. */
export type Decision =
  | { kind: 'rules'; rules: RuleRequest[] }
  /** `no-rule`: the event asks for none (a credential created); `ignored`: a type no rule is made for. */
  | { kind: 'none'; outcome: 'no-rule' | 'ignored' | 'subject-unmapped' }
  | { kind: 'verification'; state: string | undefined }
  | { kind: 'stream-updated'; status: string | undefined };

/** What deciding needs besides the event. */
export interface DecisionContext {
  naming: SubjectNaming;
  /** `maxLifetime` + `clockTolerance`: how long past its event a token the event names can still be accepted. */
  tokenLife: number;
}

const none = (outcome: 'no-rule' | 'ignored' | 'subject-unmapped'): Decision => ({ kind: 'none', outcome });
const rules = (list: RuleRequest[]): Decision => ({ kind: 'rules', rules: list });

/**
 * Keycloak's transmitter names the session `ALL` when an admin logs a user out of every session
 * (SecurityEventTokenMapper, docs/continuous-access.md): that is the user's subject rule, not one session's.
 */
const EVERY_SESSION = 'ALL';

function subjectRule(event: SecurityEvent, context: DecisionContext): Decision {
  const user = event.subject === undefined ? undefined : userOf(event.subject, context.naming);
  if (user === undefined) return none('subject-unmapped');
  return rules([{ rule: 'subject', iss: user.iss, sub: user.sub, before: event.timestamp }]);
}

function sessionRule(event: SecurityEvent, context: DecisionContext): Decision {
  const session = event.subject === undefined ? undefined : sessionOf(event.subject, context.naming, true);
  if (session === undefined || (session.sid === EVERY_SESSION && session.sub !== undefined))
    return subjectRule(event, context);
  return rules([{ rule: 'session', ...session, before: event.timestamp }]);
}

/** CAEP token-claims-change: the one token a `jwt_id` names, else its user's tokens. */
function tokenRule(event: SecurityEvent, context: DecisionContext): Decision {
  const token = event.subject === undefined ? undefined : tokenOf(event.subject, context.naming);
  if (token === undefined) return subjectRule(event, context);
  return rules([{ rule: 'token', jti: token.jti, exp: Math.ceil(event.timestamp + context.tokenLife) }]);
}

/** A subject rule when the event's member `name` is one of `values`, else no rule. */
const when =
  (name: string, values: readonly string[]) =>
  (event: SecurityEvent, context: DecisionContext): Decision =>
    typeof event.event[name] === 'string' && values.includes(event.event[name] as string)
      ? subjectRule(event, context)
      : none('no-rule');

type Row = (event: SecurityEvent, context: DecisionContext) => Decision;

/** The table (SPEC §21, CAEP 1.0 §3, RISC 1.0 §2): event type → what it does. */
const DEFAULT_ACTIONS: ReadonlyMap<string, Row> = new Map<string, Row>([
  [`${CAEP}session-revoked`, sessionRule],
  [`${CAEP}token-claims-change`, tokenRule],
  [`${CAEP}credential-change`, when('change_type', ['revoke', 'delete'])],
  [`${CAEP}assurance-level-change`, when('change_direction', ['decrease'])],
  [`${CAEP}device-compliance-change`, when('current_status', ['not-compliant'])],
  [`${RISC}account-disabled`, subjectRule],
  [`${RISC}account-purged`, subjectRule],
  [`${RISC}credential-compromise`, subjectRule],
  [`${RISC}sessions-revoked`, subjectRule],
  [`${RISC}account-credential-change-required`, subjectRule],
  [`${RISC}account-enabled`, () => none('no-rule')],
  [VERIFICATION_EVENT, (event) => ({ kind: 'verification', state: stringMember(event.event, 'state') })],
  [STREAM_UPDATED_EVENT, (event) => ({ kind: 'stream-updated', status: stringMember(event.event, 'status') })],
]);

/** The event types the receiver acts on: what a stream it creates requests (`events_requested`). */
export const ACTED_ON_EVENTS: readonly string[] = [...DEFAULT_ACTIONS.keys()].filter(
  (type) => !type.startsWith(SSF) && !type.endsWith('account-enabled'),
);

function stringMember(event: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = event[name];
  return typeof value === 'string' ? value : undefined;
}

/** Most rules one event may ask for through an `actions` function. */
export const MAX_RULES_PER_EVENT = 16;

/** An `actions` function that answered something other than a list of rules (its author's fault). */
export class ActionError extends Error {
  constructor(cause?: unknown) {
    super('an actions function failed or answered no list of rules', cause === undefined ? undefined : { cause });
    this.name = 'ActionError';
  }
}

/** What one event does: the `actions` override for its type, else the table, else nothing (reported). */
export async function decide(
  event: SecurityEvent,
  actions: ReadonlyMap<string, EventAction>,
  context: DecisionContext,
): Promise<Decision> {
  const action = actions.get(event.type);
  if (action === 'ignore') return none('ignored');
  if (action === 'subject') return subjectRule(event, context);
  if (action === 'session') return sessionRule(event, context);
  if (typeof action === 'function') {
    let answer: unknown;
    try {
      answer = await action(event);
    } catch (err) {
      throw new ActionError(err);
    }
    if (!Array.isArray(answer) || answer.length > MAX_RULES_PER_EVENT || !answer.every(isRuleRequest))
      throw new ActionError();
    return answer.length === 0 ? none('no-rule') : rules(answer.map((rule: RuleRequest) => ({ ...rule })));
  }
  return (DEFAULT_ACTIONS.get(event.type) ?? (() => none('ignored')))(event, context);
}

/** When an event happened: its `event_timestamp` (CAEP 1.0 §2), never later than the SET's `iat`; else `iat`. */
export function eventTime(event: unknown, issuedAt: number): number {
  const stamp = isObject(event) ? event.event_timestamp : undefined;
  return typeof stamp === 'number' && Number.isFinite(stamp) ? Math.min(stamp, issuedAt) : issuedAt;
}
