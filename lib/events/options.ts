// The options of `auth.securityEvents()` (docs/continuous-access.md): transmitters, Back-Channel Logout, actions per
// event type, subject formats mapped to claims, maxAge; all checked when it is called, each fault an OptionError
// naming its dotted path.
import { positiveDuration, type Duration } from '../base/duration';
import { knownFields, type FieldList } from '../base/option-checks';
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';
import type { EventAction } from './actions';
import { resolveTransmitter, type ResolvedTransmitter, type TransmitterOptions } from './transmitter-options';

/** OpenID Connect Back-Channel Logout 1.0: logout tokens POSTed to the same router. */
export interface BackchannelLogoutOptions {
  /** The OP's issuer: one of this TokenAuth's issuers, whose keys verify the logout tokens. */
  issuer: string;
  /** This application's client id at the OP: the logout tokens' `aud`. */
  clientId: string;
}

/** Options of `auth.securityEvents()`. */
export interface SecurityEventsOptions {
  /** SSF transmitters whose SETs (CAEP, RISC) become revocation rules. */
  transmitters?: TransmitterOptions[];
  /** Logout tokens of one of this TokenAuth's issuers. */
  backchannelLogout?: BackchannelLogoutOptions;
  /** What an event type does instead of its default: `'subject'`, `'session'`, `'ignore'` or a function. */
  actions?: Record<string, EventAction>;
  /**
   * Subject formats whose value the tokens carry as their `sub` claim: `{ email: 'sub' }` for tokens whose `sub` is
   * the user's email address. The rules name a user by `iss` and `sub`; a format with no mapping is reported.
   */
  subjects?: Record<string, string>;
  /** Oldest SET accepted, by its `iat` (default 7 days: a poll may deliver late); each `jti` is remembered as long. */
  maxAge?: Duration;
}

/** The options after checking; durations in seconds. */
export interface ResolvedSecurityEvents {
  transmitters: ResolvedTransmitter[];
  backchannelLogout: BackchannelLogoutOptions | undefined;
  actions: ReadonlyMap<string, EventAction>;
  subjects: ReadonlyMap<string, string>;
  maxAge: number;
}

const OPTIONS: FieldList<SecurityEventsOptions> = {
  transmitters: true,
  backchannelLogout: true,
  actions: true,
  subjects: true,
  maxAge: true,
};
const LOGOUT_FIELDS: FieldList<BackchannelLogoutOptions> = { issuer: true, clientId: true };
const ACTION_WORDS: ReadonlySet<unknown> = new Set(['subject', 'session', 'ignore']);
/** Seven days (SPEC §21: poll delivers late). */
const DEFAULT_MAX_AGE = 7 * 24 * 3600;

function resolveActions(value: unknown): ReadonlyMap<string, EventAction> {
  if (value === undefined) return new Map();
  if (!isObject(value)) optionError('actions', 'option "actions" must be an object: event type URI → action');
  const actions = new Map<string, EventAction>();
  for (const [type, action] of Object.entries(value)) {
    if (!ACTION_WORDS.has(action) && typeof action !== 'function')
      optionError(
        `actions.${type}`,
        `option "actions" for ${JSON.stringify(type)} must be 'subject', 'session', 'ignore' or a function answering rules`,
      );
    actions.set(type, action as EventAction);
  }
  return actions;
}

function resolveSubjects(value: unknown): ReadonlyMap<string, string> {
  if (value === undefined) return new Map();
  if (!isObject(value)) optionError('subjects', 'option "subjects" must be an object: subject format → token claim');
  const subjects = new Map<string, string>();
  for (const [format, claim] of Object.entries(value)) {
    // The store's rules name a user by the `iss` and `sub` of its tokens (docs/fleet.md): a format maps to `sub`.
    if (claim !== 'sub')
      optionError(
        `subjects.${format}`,
        `option "subjects.${format}" must be 'sub': the revocation rules match a token's sub claim, so map a format whose value your tokens carry as sub`,
      );
    if (format === 'iss_sub' || format === 'complex' || format === 'aliases')
      optionError(
        `subjects.${format}`,
        `option "subjects" maps simple formats (email, opaque, phone_number, …); ${format} is read as it is`,
      );
    subjects.set(format, claim);
  }
  return subjects;
}

function resolveLogout(value: unknown): BackchannelLogoutOptions | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) optionError('backchannelLogout', 'option "backchannelLogout" must be an object');
  knownFields(value, LOGOUT_FIELDS, 'backchannelLogout');
  for (const name of ['issuer', 'clientId'] as const) {
    if (typeof value[name] !== 'string' || value[name] === '')
      optionError(`backchannelLogout.${name}`, `option "backchannelLogout.${name}" must be a non-empty string`);
  }
  return { issuer: value.issuer as string, clientId: value.clientId as string };
}

/** Check the options of `auth.securityEvents()`; an OptionError naming the dotted path of anything wrong. */
export function resolveSecurityEvents(input: unknown, allowInsecureHttp: boolean): ResolvedSecurityEvents {
  if (!isObject(input)) optionError('', 'securityEvents expects an options object');
  knownFields(input, OPTIONS, '', 'securityEvents');
  const list = input.transmitters ?? [];
  if (!Array.isArray(list)) optionError('transmitters', 'option "transmitters" must be an array');
  const transmitters = list.map((value, index) => resolveTransmitter(value, index, allowInsecureHttp));
  transmitters.forEach((transmitter, index) => {
    if (transmitters.findIndex((other) => other.issuer === transmitter.issuer) !== index)
      optionError(
        `transmitters[${index}].issuer`,
        `transmitter ${JSON.stringify(transmitter.issuer)} is configured twice`,
      );
  });
  const backchannelLogout = resolveLogout(input.backchannelLogout);
  if (transmitters.length === 0 && backchannelLogout === undefined)
    optionError('transmitters', 'securityEvents needs "transmitters" (SSF) or "backchannelLogout", or both');
  return {
    transmitters,
    backchannelLogout,
    actions: resolveActions(input.actions),
    subjects: resolveSubjects(input.subjects),
    maxAge: positiveDuration(input.maxAge, 'maxAge', DEFAULT_MAX_AGE),
  };
}
