/**
 * What each event does (SPEC §21's table), on the examples of CAEP 1.0 §3, the CAEP interoperability profile and
 * RISC 1.0, and on Keycloak's transmitter's subjects; `actions` and `subjects` override it.
 */
import { ActionError, decide, eventTime, type EventAction, type SecurityEvent } from '../../lib/events/actions';
import type { SubjectNaming } from '../../lib/events/subjects';

const CAEP = 'https://schemas.openid.net/secevent/caep/event-type/';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type/';
const IDP = 'https://idp.example.com/123456789/';
const T = 1615304991;

const naming = (claims: Record<string, string> = {}, defaultIssuer = IDP): SubjectNaming => ({
  claims: new Map(Object.entries(claims)),
  names: (iss) => iss === IDP,
  defaultIssuer,
});
const context = (n = naming()) => ({ naming: n, tokenLife: 3900 });

function event(type: string, subject: unknown, body: Record<string, unknown> = {}): SecurityEvent {
  return { type, transmitter: IDP, jti: 'j', issuedAt: T + 100, timestamp: T, subject: subject as never, event: body };
}

const userIssSub = { format: 'iss_sub', iss: IDP, sub: '99beb27c-c1c2-4955-882a-e0dc4996fcbc' };
const sessionOpaque = { format: 'opaque', id: 'dMTlD|1600802906337.16|16008.16' };
const tenant = { format: 'opaque', id: '123456789' };

type Row = [string, SecurityEvent, unknown];

describe('the event table', () => {
  it.each<Row>([
    [
      'CAEP session-revoked, an opaque session (CAEP 1.0 §3.1 first example): its session',
      event(`${CAEP}session-revoked`, sessionOpaque),
      { kind: 'rules', rules: [{ rule: 'session', iss: IDP, sid: sessionOpaque.id, before: T }] },
    ],
    [
      'CAEP session-revoked, complex user + session + tenant (CAEP 1.0 §3.1): the session with its user',
      event(`${CAEP}session-revoked`, { format: 'complex', session: sessionOpaque, user: userIssSub, tenant }),
      { kind: 'rules', rules: [{ rule: 'session', iss: IDP, sid: sessionOpaque.id, sub: userIssSub.sub, before: T }] },
    ],
    [
      'CAEP session-revoked, complex user + device + tenant (CAEP 1.0 §3.1): the user',
      event(`${CAEP}session-revoked`, { format: 'complex', user: userIssSub, device: userIssSub, tenant }),
      { kind: 'rules', rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }] },
    ],
    [
      "Keycloak's admin logout of every session (session id ALL): the user",
      event(`${CAEP}session-revoked`, {
        format: 'complex',
        user: userIssSub,
        session: { format: 'opaque', id: 'ALL' },
      }),
      { kind: 'rules', rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }] },
    ],
    [
      'CAEP token-claims-change of a jwt_id (CAEP 1.0 §3.2): that token, until it can no longer be accepted',
      event(
        `${CAEP}token-claims-change`,
        { format: 'jwt_id', iss: IDP, jti: 'f61t6e20zdo3px56gepu8rzlsp4c1dpc0fx7' },
        { claims: { role: 'ro-admin' } },
      ),
      { kind: 'rules', rules: [{ rule: 'token', jti: 'f61t6e20zdo3px56gepu8rzlsp4c1dpc0fx7', exp: T + 3900 }] },
    ],
    [
      'CAEP token-claims-change of a SAML assertion: no rule can name it',
      event(`${CAEP}token-claims-change`, { format: 'saml_assertion_id', issuer: IDP, assertion_id: '_a75adf55' }),
      { kind: 'none', outcome: 'subject-unmapped' },
    ],
    [
      'credential-change revoke',
      event(`${CAEP}credential-change`, userIssSub, { change_type: 'revoke' }),
      { kind: 'rules', rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }] },
    ],
    [
      'credential-change delete',
      event(`${CAEP}credential-change`, userIssSub, { change_type: 'delete' }),
      { kind: 'rules', rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }] },
    ],
    [
      'credential-change create (CAEP interop example)',
      event(`${CAEP}credential-change`, userIssSub, { change_type: 'create' }),
      { kind: 'none', outcome: 'no-rule' },
    ],
    [
      'credential-change update',
      event(`${CAEP}credential-change`, userIssSub, { change_type: 'update' }),
      { kind: 'none', outcome: 'no-rule' },
    ],
    [
      'assurance-level-change decrease',
      event(`${CAEP}assurance-level-change`, userIssSub, { change_direction: 'decrease' }),
      { kind: 'rules', rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }] },
    ],
    [
      'assurance-level-change increase',
      event(`${CAEP}assurance-level-change`, userIssSub, { change_direction: 'increase' }),
      { kind: 'none', outcome: 'no-rule' },
    ],
    [
      'assurance-level-change without a direction',
      event(`${CAEP}assurance-level-change`, userIssSub, {}),
      { kind: 'none', outcome: 'no-rule' },
    ],
    [
      'device-compliance-change to not-compliant with a user in its subject',
      event(
        `${CAEP}device-compliance-change`,
        { format: 'complex', user: userIssSub, device: tenant },
        { current_status: 'not-compliant', previous_status: 'compliant' },
      ),
      { kind: 'rules', rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }] },
    ],
    [
      'device-compliance-change of a device alone',
      event(
        `${CAEP}device-compliance-change`,
        { format: 'complex', device: tenant, tenant },
        { current_status: 'not-compliant' },
      ),
      { kind: 'none', outcome: 'subject-unmapped' },
    ],
    [
      'device-compliance-change to compliant',
      event(`${CAEP}device-compliance-change`, userIssSub, { current_status: 'compliant' }),
      { kind: 'none', outcome: 'no-rule' },
    ],
    ...[
      'account-disabled',
      'account-purged',
      'credential-compromise',
      'sessions-revoked',
      'account-credential-change-required',
    ].map(
      (name) =>
        [
          `RISC ${name}`,
          event(`${RISC}${name}`, userIssSub),
          { kind: 'rules', rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }] },
        ] as Row,
    ),
    [
      'RISC account-enabled: nothing (new tokens are newer)',
      event(`${RISC}account-enabled`, userIssSub),
      { kind: 'none', outcome: 'no-rule' },
    ],
    [
      'an event type no rule is made for',
      event('https://schemas.openid.net/secevent/caep/event-type/session-established', userIssSub),
      { kind: 'none', outcome: 'ignored' },
    ],
    [
      "a user of an issuer that is not this TokenAuth's",
      event(`${RISC}account-disabled`, { ...userIssSub, iss: 'https://elsewhere.example' }),
      { kind: 'none', outcome: 'subject-unmapped' },
    ],
    [
      'an email with no claim mapped to it (CAEP interop profile)',
      event(`${RISC}account-disabled`, { format: 'email', email: 'jane@example.com' }),
      { kind: 'none', outcome: 'subject-unmapped' },
    ],
    [
      'a phone number',
      event(`${RISC}account-disabled`, { format: 'phone_number', phone_number: '+12065550100' }),
      { kind: 'none', outcome: 'subject-unmapped' },
    ],
    [
      'SSF verification: its state',
      event(
        'https://schemas.openid.net/secevent/ssf/event-type/verification',
        { format: 'opaque', id: 'stream' },
        { state: 's1' },
      ),
      { kind: 'verification', state: 's1' },
    ],
  ])('%s', async (_what, given, decision) => {
    expect(await decide(given, new Map(), context())).toEqual(decision);
  });

  it('maps an email subject to sub with subjects: { email: "sub" }, under the default issuer', async () => {
    const given = event(`${RISC}account-disabled`, { format: 'email', email: 'jane@example.com' });
    expect(await decide(given, new Map(), context(naming({ email: 'sub' })))).toEqual({
      kind: 'rules',
      rules: [{ rule: 'subject', iss: IDP, sub: 'jane@example.com', before: T }],
    });
    expect(await decide(given, new Map(), context({ ...naming({ email: 'sub' }), defaultIssuer: undefined }))).toEqual({
      kind: 'none',
      outcome: 'subject-unmapped',
    });
  });

  it('follows actions: ignore, subject instead of the default, and a function', async () => {
    const revoked = event(`${CAEP}session-revoked`, { format: 'complex', session: sessionOpaque, user: userIssSub });
    const actions = (action: EventAction) => new Map([[revoked.type, action]]);
    expect(await decide(revoked, actions('ignore'), context())).toEqual({ kind: 'none', outcome: 'ignored' });
    expect(await decide(revoked, actions('subject'), context())).toEqual({
      kind: 'rules',
      rules: [{ rule: 'subject', iss: IDP, sub: userIssSub.sub, before: T }],
    });
    const seen: SecurityEvent[] = [];
    const custom = await decide(
      revoked,
      actions((e) => {
        seen.push(e);
        return [{ rule: 'token', jti: 'x', exp: e.timestamp + 60 }];
      }),
      context(),
    );
    expect(custom).toEqual({ kind: 'rules', rules: [{ rule: 'token', jti: 'x', exp: T + 60 }] });
    expect(seen[0].subject).toEqual(revoked.subject);
  });

  it('refuses what an actions function answers when it is no list of rules, or when it throws', async () => {
    const given = event(`${RISC}account-disabled`, userIssSub);
    const failing = async (action: EventAction) => decide(given, new Map([[given.type, action]]), context());
    await expect(failing(() => [{ rule: 'subject', iss: IDP } as never])).rejects.toBeInstanceOf(ActionError);
    await expect(failing(() => 'all' as never)).rejects.toBeInstanceOf(ActionError);
    await expect(
      failing(() => {
        throw new Error('boom');
      }),
    ).rejects.toBeInstanceOf(ActionError);
  });

  it('reads a subject inside the event for older CAEP and RISC transmitters', async () => {
    const { subjectOf } = await import('../../lib/events/subjects');
    expect(subjectOf({}, { subject: { subject_type: 'iss-sub', iss: IDP, sub: 'u1' } })).toMatchObject({
      format: 'iss_sub',
      sub: 'u1',
    });
    expect(subjectOf({ sub_id: userIssSub }, { subject: { format: 'email', email: 'x@y' } })).toBe(userIssSub);
  });

  it('takes the event_timestamp as when it happened, never later than the SET was issued', () => {
    expect(eventTime({ event_timestamp: T }, T + 5)).toBe(T);
    expect(eventTime({ event_timestamp: T + 500 }, T + 5)).toBe(T + 5);
    expect(eventTime({}, T + 5)).toBe(T + 5);
  });
});
