// Subjects of security events (RFC 9493 subject identifiers; SSF 1.0 §3 complex subjects, jwt_id and
// saml_assertion_id) read from `sub_id`, or from inside the event for older CAEP and RISC transmitters, and named as
// the rules name them: a user (`iss`, `sub`), a session (`iss`, `sid`), one token (`jti`).
import { isObject } from '../base/values';

/** A subject identifier: a `format` and its members (RFC 9493 §3). */
export type SubjectIdentifier = Readonly<Record<string, unknown>> & { readonly format: string };

/** How subjects become rule names: set up once from the options and this TokenAuth's issuers. */
export interface SubjectNaming {
  /** `subjects`: a format (`email`, `opaque`, …) → the token claim holding that value (`sub`). */
  readonly claims: ReadonlyMap<string, string>;
  /** Whether `iss` names an issuer of this TokenAuth's tokens (a rule for another issuer could refuse nothing). */
  names(iss: string): boolean;
  /** The issuer of this TokenAuth's tokens a subject without an `iss` is about (see `defaultIssuer`), if known. */
  readonly defaultIssuer: string | undefined;
}

/** The complex subject members the rules act on (SSF 1.0 §3.3); others (`tenant`, `device`, …) name no rule. */
const PROCESSED_MEMBERS: ReadonlySet<string> = new Set(['format', 'user', 'session']);
/** Complex members SSF 1.0 §3.3 names, the only ones a report names (others are counted as `other`). */
const KNOWN_MEMBERS = ['user', 'session', 'device', 'tenant', 'application', 'org_unit', 'group'];

/** Older RISC `subject_type` values (the RISC profile's drafts), as RFC 9493 formats. */
const LEGACY_TYPES: Readonly<Record<string, string>> = {
  'iss-sub': 'iss_sub',
  email: 'email',
  phone: 'phone_number',
  opaque: 'opaque',
};

/** Where each simple format keeps the value a token claim can hold (RFC 9493 §3.2). */
const VALUE_MEMBER: Readonly<Record<string, string>> = {
  email: 'email',
  phone_number: 'phone_number',
  opaque: 'id',
  account: 'uri',
  uri: 'uri',
  did: 'url',
};

/** A subject identifier as read: `format` from `format`, or from an older `subject_type`; undefined otherwise. */
function identifier(value: unknown): SubjectIdentifier | undefined {
  if (!isObject(value)) return undefined;
  if (typeof value.format === 'string') return value as SubjectIdentifier;
  // Own keys only: a `subject_type` of "constructor" must not read Object.prototype (a function for a format).
  const legacy =
    typeof value.subject_type === 'string' && Object.hasOwn(LEGACY_TYPES, value.subject_type)
      ? LEGACY_TYPES[value.subject_type]
      : undefined;
  return legacy === undefined ? undefined : { ...value, format: legacy };
}

/**
 * The primary subject of a SET (SSF 1.0 §3.1): its top-level `sub_id`, or for event types CAEP and RISC defined
 * before SSF (§3.1.1) the `subject` inside the event. Undefined when there is none it can read.
 */
export function subjectOf(payload: Readonly<Record<string, unknown>>, event: unknown): SubjectIdentifier | undefined {
  return identifier(payload.sub_id) ?? (isObject(event) ? identifier(event.subject) : undefined);
}

/** A complex member read as a subject identifier. */
function member(subject: SubjectIdentifier, name: string): SubjectIdentifier | undefined {
  return subject.format === 'complex' ? identifier(subject[name]) : undefined;
}

/**
 * The first member of a complex subject that the transmitter's metadata makes critical (`critical_subject_members`,
 * SSF 1.0 §7.1) and the rules cannot act on: SSF 1.0 §3.6 says such an event is discarded. Undefined otherwise.
 */
export function unprocessableMember(subject: SubjectIdentifier, critical: readonly string[]): string | undefined {
  if (subject.format !== 'complex') return undefined;
  return critical.find((name) => subject[name] !== undefined && !PROCESSED_MEMBERS.has(name));
}

/** A short, bounded description of a subject for reports: `iss_sub`, `complex(user,session)`. */
export function describeSubject(subject: SubjectIdentifier | undefined): string {
  if (subject === undefined) return 'none';
  if (subject.format !== 'complex') return subject.format.slice(0, 32);
  const names = KNOWN_MEMBERS.filter((name) => subject[name] !== undefined);
  const other = Object.keys(subject).some((name) => name !== 'format' && !KNOWN_MEMBERS.includes(name));
  return `complex(${[...names, ...(other ? ['other'] : [])].join(',')})`;
}

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '' && value.length <= 1024;

/** A user named for the rules: the issuer of its tokens and its `sub`. */
export interface NamedUser {
  iss: string;
  sub: string;
}

/** A simple identifier as a user: `iss_sub` as it is, another format through `subjects`; undefined if it cannot be. */
function simpleUser(id: SubjectIdentifier, naming: SubjectNaming): NamedUser | undefined {
  if (id.format === 'iss_sub') {
    return isText(id.iss) && isText(id.sub) && naming.names(id.iss) ? { iss: id.iss, sub: id.sub } : undefined;
  }
  if (id.format === 'aliases' && Array.isArray(id.identifiers)) {
    for (const alias of id.identifiers.slice(0, 8)) {
      const one = identifier(alias);
      const named = one === undefined || one.format === 'aliases' ? undefined : simpleUser(one, naming);
      if (named !== undefined) return named;
    }
    return undefined;
  }
  const value = Object.hasOwn(VALUE_MEMBER, id.format) ? id[VALUE_MEMBER[id.format]] : undefined;
  if (!isText(value) || naming.claims.get(id.format) === undefined || naming.defaultIssuer === undefined)
    return undefined;
  return { iss: naming.defaultIssuer, sub: value };
}

/** The user a subject names: a simple user identifier, or a complex subject's `user` member. */
export function userOf(subject: SubjectIdentifier, naming: SubjectNaming): NamedUser | undefined {
  if (subject.format === 'complex') {
    const user = member(subject, 'user');
    return user === undefined ? undefined : simpleUser(user, naming);
  }
  return subject.format === 'jwt_id' || subject.format === 'saml_assertion_id'
    ? undefined
    : simpleUser(subject, naming);
}

/** A session named for the rules: its issuer, its `sid`, and its user's `sub` when the subject names one. */
export interface NamedSession {
  iss: string;
  sid: string;
  sub?: string;
}

/** A session identifier's `sid` and, when it carries one, its issuer: `opaque` (`id`) or `iss_sub`. */
function sessionId(id: SubjectIdentifier): { sid: string; iss?: string } | undefined {
  if (id.format === 'opaque' && isText(id.id)) return { sid: id.id };
  if (id.format === 'iss_sub' && isText(id.sub) && isText(id.iss)) return { sid: id.sub, iss: id.iss };
  return undefined;
}

/**
 * The session a subject names: a complex subject's `session` member (with its `user`), or, where the event says a
 * simple subject is a session (`simpleIsSession`: CAEP session-revoked's opaque subject), that subject. Its issuer:
 * the session's own, the user's, or the default one; undefined when none is known or it is not this TokenAuth's.
 */
export function sessionOf(
  subject: SubjectIdentifier,
  naming: SubjectNaming,
  simpleIsSession = false,
): NamedSession | undefined {
  const session = subject.format === 'complex' ? member(subject, 'session') : simpleIsSession ? subject : undefined;
  const id = session === undefined ? undefined : sessionId(session);
  if (id === undefined) return undefined;
  const user = userOf(subject, naming);
  const iss = id.iss ?? user?.iss ?? naming.defaultIssuer;
  if (iss === undefined || !naming.names(iss)) return undefined;
  return user === undefined || user.iss !== iss ? { iss, sid: id.sid } : { iss, sid: id.sid, sub: user.sub };
}

/** The token a `jwt_id` subject names (SSF 1.0 §3.5.1), when its issuer is this TokenAuth's. */
export function tokenOf(subject: SubjectIdentifier, naming: SubjectNaming): { jti: string } | undefined {
  if (subject.format !== 'jwt_id' || !isText(subject.jti) || !isText(subject.iss) || !naming.names(subject.iss))
    return undefined;
  return { jti: subject.jti };
}
