// Claims modes as data ('strict', 'jwt', 'at+jwt'): which claims each requires, its `typ` rule, required claims
// and the app's validateClaims, behind one ClaimPolicy the verifier calls.
import { shapeBViolation, type VerifiedClaims } from './claims';
import { registeredTypeViolation, type JwtClaims } from './registered';
import { TokenAuthError } from '../base/errors';
import { normalizeTyp, type JwsHeader } from '../jose/jws';
import { resolveScopeClaim, type ScopeClaimOption, type ScopeReader } from './scope-claim';
import { isStringArray, isThenable } from '../base/values';
import { optionError } from '../base/option-error';
import { createBrand } from '../base/brand';

export type { JwtClaims, RegisteredClaims } from './registered';

/** How much of the payload is checked beyond signature, time, issuer and audience (docs/any-issuer.md). */
export type ClaimsMode = 'strict' | 'jwt' | 'at+jwt';

/** What `claims: 'at+jwt'` guarantees: the claims RFC 9068 §2.2 requires of a JWT access token. */
export interface AccessTokenClaims extends JwtClaims {
  iss: string;
  aud: string | string[];
  sub: string;
  client_id: string;
  iat: number;
  jti: string;
}

/** The claims each mode guarantees. */
export interface ModeClaims {
  strict: VerifiedClaims;
  jwt: JwtClaims;
  'at+jwt': AccessTokenClaims;
}

/** The claims of the default mode: `'strict'` (Shape B), or `'jwt'` when `issuerBaseURL` (`D`) is given. */
type DefaultClaims<D> = [D] extends [undefined] ? VerifiedClaims : JwtClaims;

/**
 * The claims guaranteed by a `claims` option `M`; with `claims` left out, `'strict'` (Shape B) unless
 * `issuerBaseURL` (`D`) is given, which makes `'jwt'` the default. A union of modes gives the union of claims.
 * `[M] extends [undefined]` comes first: without `strictNullChecks` (JavaScript with checkJs, TypeScript without
 * `strict`) `undefined` passes `extends ClaimsMode`, which would type the default mode's claims as `unknown`.
 */
export type ClaimsOf<M, D = undefined> = [M] extends [undefined]
  ? DefaultClaims<D>
  : M extends ClaimsMode
    ? ModeClaims[M]
    : DefaultClaims<D>;

/** `validateClaims`: the app's own rule on verified claims; `false` or a throw refuses the token. */
export type ClaimsValidator<C = JwtClaims> = (claims: C, header: JwsHeader | undefined) => boolean | Promise<boolean>;

/** The claim options this room resolves. */
export interface ClaimOptionsInput {
  claims?: unknown;
  typ?: unknown;
  scopeClaim?: unknown;
  requiredClaims?: unknown;
  validateClaims?: unknown;
}

/** One mode as data: what it requires of the payload and the header, and where it reads scopes by default. */
interface ModeRule {
  /** The first reason the payload fails the mode (`shape:<path>`, `at+jwt:<claim>`), or undefined. */
  violation: (payload: Record<string, unknown>) => string | undefined;
  /** Accepted `typ` values, normalised; undefined: any, or none, short of another kind of JWT. */
  typ: ReadonlySet<string> | undefined;
  scopeClaims: readonly string[];
  /** An integer `iat` is required (read with the other times, RFC 7519 §4.1.6). */
  requireIat: boolean;
  /** Said in a debug line when a refusal comes from this mode, so a misconfigured mode is found from the log. */
  hint: string;
}

const isString = (v: unknown) => typeof v === 'string' && v !== '';
const isInteger = (v: unknown) => Number.isInteger(v);
const isAudience = (v: unknown) => isString(v) || (isStringArray(v) && v.length > 0);

/** RFC 9068 §2.2: required claims of a JWT access token, each with the type it must have. */
const AT_JWT_REQUIRED: ReadonlyArray<readonly [string, (v: unknown) => boolean]> = [
  ['iss', isString],
  ['exp', isInteger],
  ['aud', isAudience],
  ['sub', isString],
  ['client_id', isString],
  ['iat', isInteger],
  ['jti', isString],
];

const JWT_SCOPE_CLAIMS = ['scope', 'scp', 'scopes'] as const;

const MODES: Readonly<Record<ClaimsMode, ModeRule>> = {
  strict: {
    violation: (payload) => {
      const path = shapeBViolation(payload);
      return path === undefined ? undefined : `shape:${path}`;
    },
    typ: undefined,
    scopeClaims: ['scopes'],
    requireIat: true,
    hint: "claims: 'strict' (the default with option \"key\") accepts only the identity service's Shape B; tokens of other authorization servers (OpenID Connect, RFC 9068) need claims: 'jwt' or 'at+jwt'",
  },
  jwt: {
    violation: (payload) => {
      const claim = registeredTypeViolation(payload);
      return claim === undefined ? undefined : `jwt:${claim}`;
    },
    typ: undefined,
    scopeClaims: JWT_SCOPE_CLAIMS,
    requireIat: false,
    hint: "claims: 'jwt' checks registered claims only, each of the type RFC 7519 §4.1 gives it when present (iss, sub, jti strings; aud a string or an array of strings), as JwtClaims types them",
  },
  'at+jwt': {
    violation: (payload) => {
      for (const [claim, valid] of AT_JWT_REQUIRED) if (!valid(payload[claim])) return `at+jwt:${claim}`;
      return undefined;
    },
    typ: new Set(['at+jwt']),
    scopeClaims: JWT_SCOPE_CLAIMS,
    requireIat: true,
    hint: "claims: 'at+jwt' requires typ at+jwt and iss, exp, aud, sub, client_id, iat, jti (RFC 9068); use claims: 'jwt' for other access tokens",
  },
};

/** The claim rules of one TokenAuth, resolved once; the verifier and the scope check each call one member. */
export interface ClaimPolicy {
  readonly mode: ClaimsMode;
  readonly requireIat: boolean;
  /** The accepted header `typ` values, normalised (the mode's rule or option `typ`); undefined: any but another JWT's. */
  readonly typ: ReadonlySet<string> | undefined;
  /** The claims scopes are read from, in order (`scopeClaim` or the mode's default); undefined for a function. */
  readonly scopeClaims: readonly string[] | undefined;
  /**
   * The mode's claims, the `typ` rule, `requiredClaims` and `validateClaims`, on a payload whose signature, times,
   * issuer and audience passed. Throws (or rejects, only when `validateClaims` answers with a promise) an
   * `invalid_token` TokenAuthError. `header` is undefined in upstream mode.
   */
  check(payload: Record<string, unknown>, header: JwsHeader | undefined): void | Promise<void>;
  /** Granted scopes of verified claims (`scopeClaim`); throws `internal` when a scopeClaim function throws. */
  scopesOf: ScopeReader;
  /** Whether these claims passed `check` here: what lets `auth.claims(req)` type them by this mode, soundly. */
  passed(claims: object): boolean;
}

/** A `typ` naming another kind of JWT (RFC 8725 §3.11): an ID token, DPoP proof, logout or event token. */
function namesAnotherJwt(normalized: string): boolean {
  return normalized.endsWith('+jwt') && normalized !== 'at+jwt';
}

/** Whether a header's `typ` is refused: another kind of JWT always; outside `accepted` when there is a list. */
export function typRefused(typ: unknown, accepted: ReadonlySet<string> | undefined): boolean {
  if (typ === undefined) return accepted !== undefined;
  if (typeof typ !== 'string') return true;
  const normalized = normalizeTyp(typ);
  if (namesAnotherJwt(normalized)) return true;
  return accepted !== undefined && !accepted.has(normalized);
}

function resolveTyp(value: unknown, rule: ModeRule, mode: ClaimsMode): ReadonlySet<string> | undefined {
  if (value === undefined) return rule.typ;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || list.some((t) => typeof t !== 'string' || t.trim() === '')) {
    optionError('typ', 'option "typ" must be a non-empty string or a non-empty array of them');
  }
  const accepted = new Set((list as string[]).map(normalizeTyp));
  for (const typ of accepted) {
    if (namesAnotherJwt(typ))
      optionError('typ', `option "typ" may not accept "${typ}": it names another kind of JWT than an access token`);
    if (rule.typ !== undefined && !rule.typ.has(typ))
      optionError('typ', `option "typ" may not accept "${typ}" with claims: '${mode}'`);
  }
  return accepted;
}

function resolveRequired(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((c) => typeof c !== 'string' || c === '')) {
    optionError('requiredClaims', 'option "requiredClaims" must be an array of claim names');
  }
  return [...new Set(value as string[])];
}

function invalid(reason: string, cause?: unknown): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason, cause });
}

/** The mode a TokenAuth uses: the option, or the default (`'jwt'` with discovery, `'strict'` with a key). */
export function resolveClaimsMode(value: unknown, discovery: boolean): ClaimsMode {
  if (value === undefined) return discovery ? 'jwt' : 'strict';
  if (typeof value !== 'string' || !Object.prototype.hasOwnProperty.call(MODES, value)) {
    optionError('claims', `option "claims" must be 'strict', 'jwt' or 'at+jwt'`);
  }
  return value as ClaimsMode;
}

/**
 * Resolve `claims`, `typ`, `scopeClaim`, `requiredClaims` and `validateClaims` into one policy. `discovery`: an
 * `issuerBaseURL` was given (the default mode is then `'jwt'`); `upstream`: claims come from another service with
 * no JOSE header, so header rules (`typ`, `'at+jwt'`) cannot be kept and are refused here.
 */
export function resolveClaimPolicy(
  input: ClaimOptionsInput,
  context: { discovery: boolean; upstream: boolean },
): ClaimPolicy {
  const mode = resolveClaimsMode(input.claims, context.discovery);
  const rule = MODES[mode];
  if (context.upstream && (mode === 'at+jwt' || input.typ !== undefined)) {
    optionError(
      input.typ !== undefined ? 'typ' : 'claims',
      `options "typ" and claims: 'at+jwt' need the token's header, which upstream mode ({ upstream }) and introspect: 'always' do not see`,
    );
  }
  const typ = resolveTyp(input.typ, rule, mode);
  const required = resolveRequired(input.requiredClaims);
  const validate = input.validateClaims;
  if (validate !== undefined && typeof validate !== 'function')
    optionError('validateClaims', 'option "validateClaims" must be a function (claims, header) => boolean');
  const validator = validate as ClaimsValidator<Record<string, unknown>> | undefined;
  // Payloads that passed, branded (lib/base/brand.ts): marked once per verdict (a cache miss), never per request.
  const passed = createBrand();
  const verdictOf =
    (payload: Record<string, unknown>) =>
    (answer: boolean): void => {
      if (answer !== true) throw invalid('validate');
      passed.mark(payload);
    };
  const refused = (err: unknown): never => {
    throw invalid('validate', err);
  };

  const scopeClaim = input.scopeClaim;
  return {
    mode,
    requireIat: rule.requireIat,
    typ,
    scopeClaims:
      scopeClaim === undefined
        ? rule.scopeClaims
        : typeof scopeClaim === 'string'
          ? [scopeClaim]
          : Array.isArray(scopeClaim)
            ? (scopeClaim as string[])
            : undefined,
    scopesOf: resolveScopeClaim(input.scopeClaim as ScopeClaimOption | undefined, rule.scopeClaims),
    passed: (claims) => passed.has(claims),
    check(payload, header) {
      if (header !== undefined && typRefused(header.typ, typ)) throw invalid('typ');
      const wrong = rule.violation(payload);
      if (wrong !== undefined) throw invalid(wrong);
      for (const claim of required) {
        if (payload[claim] === undefined || payload[claim] === null) throw invalid(`required:${claim}`);
      }
      if (validator === undefined) {
        passed.mark(payload);
        return;
      }
      let answer: boolean | Promise<boolean>;
      try {
        answer = validator(payload, header);
      } catch (err) {
        return refused(err);
      }
      if (!isThenable(answer)) return verdictOf(payload)(answer);
      return answer.then(verdictOf(payload), refused);
    },
  };
}

/**
 * For a debug line: why a refusal came from the mode, or undefined when it did not. `shape:*` under `'strict'`,
 * `jwt:*` under `'jwt'`, `at+jwt:*` and a missing `typ` under `'at+jwt'`, and `iat` where the mode requires it.
 */
export function modeHint(mode: ClaimsMode, reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  const fromMode =
    (mode === 'strict' && (reason.startsWith('shape:') || reason === 'iat')) ||
    (mode === 'jwt' && reason.startsWith('jwt:')) ||
    (mode === 'at+jwt' && (reason.startsWith('at+jwt:') || reason === 'typ' || reason === 'iat'));
  return fromMode ? MODES[mode].hint : undefined;
}
