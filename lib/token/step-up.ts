// Step-up authentication (RFC 9470): a route's demand on how and how recently the user authenticated, checked
// against the token's `acr` and `auth_time` on every request, after the cached verdict.
import { parseDuration, type Duration } from '../base/duration';
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';

/** What the user's authentication must meet (RFC 9470): the step-up fields of a route's options. */
export interface StepUpOptions {
  /** Accepted authentication context classes: the token's `acr` must be one of them. */
  acr?: readonly string[];
  /** Longest time since the user authenticated (`auth_time`); a token without `auth_time` is then refused. */
  maxAge?: Duration;
}

/** A route's step-up demand, parsed once at set-up; `maxAge` in whole seconds. */
export interface StepUp {
  readonly acr: ReadonlySet<string> | undefined;
  /** `acr_values` of the challenge: the accepted classes, space-separated. */
  readonly acrValues: string | undefined;
  readonly maxAge: number | undefined;
}

const STEP_UP_FIELDS: FieldList<StepUpOptions> = { acr: true, maxAge: true };
// RFC 9470 §3: acr_values is a space-separated list inside a quoted-string: no spaces, quotes or backslashes.
const ACR = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Validate `requireVerifiedUser`'s route options (a TypeError naming the option, its messages naming `owner`, the
 * function they were given to); undefined when none demand anything.
 */
export function parseStepUp(input: unknown, owner = 'requireVerifiedUser'): StepUp | undefined {
  if (input === undefined) return undefined;
  if (!isObject(input)) optionError('', `${owner} options must be an object { acr?, maxAge? }`);
  knownFields(input, STEP_UP_FIELDS, '', owner);
  const { acr, maxAge } = input;
  let accepted: ReadonlySet<string> | undefined;
  if (acr !== undefined) {
    if (!Array.isArray(acr) || acr.length === 0 || acr.some((value) => typeof value !== 'string' || !ACR.test(value))) {
      optionError(
        'acr',
        `${owner} option "acr" must be a non-empty array of acr values (no spaces, quotes or backslashes)`,
      );
    }
    accepted = new Set(acr as string[]);
  }
  let seconds: number | undefined;
  if (maxAge !== undefined) {
    // RFC 9470 §3 names max_age in whole seconds, as OpenID Connect's max_age.
    seconds = Math.floor(parseDuration(maxAge, 'maxAge', `${owner} maxAge`));
  }
  if (accepted === undefined && seconds === undefined) return undefined;
  return Object.freeze({
    acr: accepted,
    acrValues: accepted === undefined ? undefined : [...accepted].join(' '),
    maxAge: seconds,
  });
}

/**
 * Whether the user's authentication meets the route's demand at `now` (seconds): `acr` one of those accepted,
 * `auth_time` a number no older than `maxAge` (give or take `clockTolerance`). Throws
 * `insufficient_user_authentication` (401) naming what the client must ask the authorization server for.
 */
export function checkStepUp(
  stepUp: StepUp,
  claims: Readonly<Record<string, unknown>>,
  now: number,
  clockTolerance: number,
): void {
  if (stepUp.acr !== undefined) {
    const acr = claims.acr;
    if (typeof acr !== 'string' || !stepUp.acr.has(acr)) throw refused(stepUp, 'acr');
  }
  if (stepUp.maxAge !== undefined) {
    const authTime = claims.auth_time;
    if (typeof authTime !== 'number' || !Number.isFinite(authTime)) throw refused(stepUp, 'auth_time-missing');
    if (now - authTime > stepUp.maxAge + clockTolerance) throw refused(stepUp, 'auth_time');
    // An authentication "in the future" proves no recent one: a skewed or forged auth_time is not fresh.
    if (authTime > now + clockTolerance) throw refused(stepUp, 'auth_time-future');
  }
}

function refused(stepUp: StepUp, reason: string): TokenAuthError {
  return new TokenAuthError('insufficient_user_authentication', {
    reason: `step-up:${reason}`,
    acrValues: stepUp.acrValues,
    maxAge: stepUp.maxAge,
  });
}
