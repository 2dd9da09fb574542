// What a refused request was expected to carry, and from which option: one hint per refusal reason, made from the
// resolved configuration (names and values of options; of the token, only its short header fields, quoted and cut).
import type { TokenAuthError, TokenAuthErrorCode } from '../base/errors';
import { escapeControls, quoted } from '../base/printable';
import { algorithmSpec, type AlgorithmFamily } from '../jose/algorithms';
import { modeHint } from '../token/claim-modes';
import { acceptedList } from '../token/issuer';
import type { ResolvedOptions } from './options';
import { describeConfiguration, quote, seconds, type Described, type Hint } from './refusal-context';
import { dpopHint, REMOTE_HINTS, REMOTE_PREFIX_HINTS } from './remote-refusal-hints';
import { EVENT_HINTS, EVENT_PREFIX_HINTS } from './event-hints';
import { wanted, type RequirementOwner } from '../authorize/refusal';
import type { ScopeRequirement } from '../token/scopes';

/** The key forms that verify an algorithm family, for an `alg` no allowed algorithm shares a family with. */
const KEYS_OF: Record<AlgorithmFamily, string> = {
  hmac: 'option "key.secret"',
  rsa: 'an RSA key: option "key.publicKey", "key.jwksUri" or "issuerBaseURL"',
  'rsa-pss': 'an RSA key: option "key.publicKey", "key.jwksUri" or "issuerBaseURL"',
  ecdsa: 'an EC key of its curve: option "key.publicKey", "key.jwksUri" or "issuerBaseURL"',
  eddsa: 'an Ed25519 or Ed448 key: option "key.publicKey", "key.jwksUri" or "issuerBaseURL"',
};

/** `alg`: the algorithms the key allows, the one the token used, and the key form that would verify it. */
const algHint: Hint = (c, err) => {
  const used = err.facts?.alg;
  const head = `expected alg ${acceptedList(c.algorithms)}: what ${c.key} allows (option "algorithms" narrows it, within what the key fits)`;
  if (used === undefined) return `${head}; the token's header has no alg string`;
  const tail = `; the token used ${quoted(used)}`;
  if (used.toLowerCase() === 'none') return `${head}${tail}, and "none" is never accepted, whatever the options`;
  const spec = algorithmSpec(used);
  if (spec === undefined) return `${head}${tail}, which this package does not verify`;
  if (c.algorithms.some((alg) => algorithmSpec(alg)?.family === spec.family))
    return `${head}${tail}: add it to option "algorithms" if this key should verify it`;
  return `${head}${tail}: a ${used} token needs ${KEYS_OF[spec.family]}, not ${c.key}`;
};

/** `typ`: the values accepted, from the mode or option `typ`; or why the token's `typ` is refused in every mode. */
const typHint: Hint = (c, err) => {
  const { typ, mode } = c.options.claims;
  const used = err.facts?.typ;
  const token = used === undefined ? 'the token has no typ' : `the token's typ is ${quoted(used)}`;
  const normalized = used?.toLowerCase().replace(/^application\//, '');
  if (normalized !== undefined && normalized.endsWith('+jwt') && normalized !== 'at+jwt')
    return `${token}, which names another kind of JWT than an access token (RFC 8725 §3.11): refused in every claims mode, whatever option "typ" says`;
  if (typ === undefined) return `${token}; expected a string typ (option "typ" narrows it further)`;
  const from =
    mode === 'at+jwt' && typ.size === 1 && typ.has('at+jwt') ? "claims: 'at+jwt' (RFC 9068 §2.1)" : 'option "typ"';
  return `expected typ ${acceptedList([...typ])} (with or without "application/", any case), from ${from}; ${token}`;
};

/** A refusal of the claims mode: the mode, and the mode that fits the token. */
const modeRefusal: Hint = (c, err) => {
  const mode = c.options.claims.mode;
  const what = err.reason?.slice(err.reason.indexOf(':') + 1) ?? '';
  const because = modeHint(mode, err.reason) ?? `claims: '${mode}' refused it`;
  const of = mode === 'strict' ? "Shape B's" : mode === 'at+jwt' ? "RFC 9068's" : 'claim';
  const position = what.includes('[')
    ? ' (a provider or field the package does not know is named by its position among the keys, from 0)'
    : '';
  return `${of} ${what} is missing or malformed${position}; ${because}`;
};

/** Step-up (RFC 9470): what the route demands of the user's authentication. */
const stepUpHint: Hint = (_c, err) => {
  const wants = [
    err.acrValues === undefined ? undefined : `acr ${quote(err.acrValues)}`,
    err.maxAge === undefined ? undefined : `auth_time within ${seconds(err.maxAge)}`,
  ].filter((want) => want !== undefined);
  return `expected ${wants.join(' and ')}, from the route's options "acr" / "maxAge" (requireVerifiedUser(scopes, { acr, maxAge }), RFC 9470)`;
};

/**
 * A route's requirements (authorize/): the refusing check sets `err.hint` itself (what the route required, where it
 * was read, the token's value by shape and count); these rows say where to look for a refusal made without one.
 */
const ROUTE_REQUIREMENT_HINTS: Readonly<Record<string, Hint>> = {
  issuer: () => 'the token\'s iss is not one of the route\'s option "issuers"',
  role: () =>
    'expected the roles of the route\'s option "roles", read as option "roleClaim" says (default claim "roles")',
  permission: () =>
    'expected the permissions of the route\'s option "permissions", read as option "permissionClaim" says (default claim "permissions")',
  group: () =>
    'expected the groups of the route\'s option "groups", read as option "groupClaim" says (default claim "groups")',
  claim: () => 'expected the claim values of the route\'s option "claims"',
  'authorization-details': () =>
    'expected an authorization_details entry (RFC 9396) that meets the route\'s option "authorizationDetails"',
  policy: () => 'the route\'s option "allow" answered false',
  'allow-threw': () => 'the route\'s option "allow" threw or rejected; err.cause holds what it threw',
  'roleClaim-threw': () => 'the option "roleClaim" function threw; err.cause holds what it threw',
  'groupClaim-threw': () => 'the option "groupClaim" function threw; err.cause holds what it threw',
  'permissionClaim-threw': () => 'the option "permissionClaim" function threw; err.cause holds what it threw',
};

/** Hints by exact reason. */
const BY_REASON: Readonly<Record<string, Hint>> = {
  ...REMOTE_HINTS,
  ...EVENT_HINTS,
  'token-in-query': () =>
    'a token was seen in the query string (access_token=…), where it is never read: URLs end up in logs, browser history and Referer headers (RFC 6750 §2.3, §5.3); send it in the Authorization header, "Bearer <token>"',
  ...ROUTE_REQUIREMENT_HINTS,
  authorization: () =>
    'expected one Authorization header field, "Bearer <token>" (RFC 6750 §2.1); option "getToken" reads the token elsewhere',
  empty: () => 'expected a token after the scheme, "Bearer <token>"; option "getToken" reads the token elsewhere',
  length: (c) => `expected a token of at most ${c.options.maxTokenLength} characters, from option "maxTokenLength"`,
  syntax: (c) =>
    c.options.introspection === undefined && c.options.source.form !== 'upstream'
      ? 'expected a compact JWS (three base64url parts); opaque tokens need option "introspection"'
      : `expected an RFC 6750 token (base64url characters, "=" padding at the end) for ${c.remote}`,
  segments: () =>
    'expected a compact JWS of three non-empty parts (RFC 7515 §7.1); opaque tokens need option "introspection"',
  kid: () =>
    'expected a string kid in the header (RFC 7515 §4.1.4), or none; the keys of option "key" are chosen by it',
  crit: () =>
    'expected no "crit" header (RFC 7515 §4.1.11): no extension is understood, whatever option "algorithms" or "typ" says',
  alg: algHint,
  'key-mismatch': (c, err) =>
    `the key from ${c.key} for this header cannot verify alg ${quoted(err.facts?.alg ?? '')}: key confusion is refused (RFC 8725 §3.1)`,
  signature: (c) =>
    `the signature does not verify with ${c.key}: the token was signed with another key${
      c.options.source.form === 'held' && c.options.source.held.key.type === 'secret'
        ? ' (check that issuer and app read the same secret)'
        : " (another issuer's, or one the key set no longer lists)"
    }`,
  'kid-unknown': (c) =>
    `expected a kid that the key set of ${c.key} lists: it was fetched again (at most once per option "key.cooldown") and still lacks it`,
  'kid-no-fit': (c, err) =>
    `the key set of ${c.key} lists this kid, but not for alg ${quoted(err.facts?.alg ?? '')}: expected the alg of the key it names`,
  'kid-ambiguous': (c) =>
    `expected a kid: the key set of ${c.key} holds several keys for this alg, and a token without kid names none of them`,
  'no-key': () => 'the key resolver of option "key" returned no key for this header',
  exp: (c) =>
    `the token expired: expected exp later than now, give or take option "clockTolerance" (${seconds(c.options.rules.clockTolerance)})`,
  nbf: (c) =>
    `the token is not valid yet: expected nbf no later than now, give or take option "clockTolerance" (${seconds(c.options.rules.clockTolerance)}); check the clocks`,
  'iat-future': (c) =>
    `the token was issued in the future: expected iat no later than now, give or take option "clockTolerance" (${seconds(c.options.rules.clockTolerance)}); check the clocks`,
  iat: (c, err) =>
    modeHint(c.options.claims.mode, err.reason) ??
    'expected a numeric iat: options "maxTokenAge" and "maxLifetime" need it, and it must be a number when present (RFC 7519 §4.1.6)',
  lifetime: (c) =>
    `expected exp - iat of at most ${seconds(c.options.rules.maxLifetime ?? 0)}, from option "maxLifetime"`,
  'max-age': (c) =>
    `the token is older than option "maxTokenAge" allows (${seconds(c.options.rules.maxTokenAge ?? 0)} since iat)`,
  aud: (c) =>
    c.audience === undefined
      ? 'option "audience" is false: any aud is accepted'
      : `expected aud ${c.audience}; the authorization server must issue the token for this API (its identifier, or an RFC 8707 resource indicator)`,
  iss: (c) => `expected iss ${c.issuer}`,
  'iss-key': (c) =>
    `the key of ${c.key} that this token names is bound to one issuer (its JWK "issuer" member, {tenantid} filled in from the token's tid), and the token's iss is another; nor is that issuer one this API accepts for the tenant the token's tid and iss name`,
  tid: () =>
    'expected a tid claim holding the tenant ID (a lower-case GUID) that the issuer template fills in (option "tenants")',
  typ: typHint,
  validate: () => 'option "validateClaims" answered false or threw (err.cause holds what it threw)',
  revoked: () => 'the token is revoked: option "revocation" lists it, or option "isRevoked" answered true',
  'subject-revoked': () =>
    'the store of option "revocation" holds a subject rule for this iss and sub (revokeSubject): tokens issued at or before its before are refused until before + option "maxLifetime" + "clockTolerance"',
  'session-revoked': () =>
    'the store of option "revocation" holds a session rule (revokeSession) naming this token\'s sid, or, for a token without sid, its sub: refused until before + option "maxLifetime" + "clockTolerance"',
  scope: (c, err) =>
    `expected scope ${quote(err.scope ?? '')} of the route (requireVerifiedUser's scopes), read ${c.scopes}`,
  // App hooks and programming errors (500): the hook that threw is named; its error is err.cause.
  'getToken-threw': () => 'option "getToken" threw; err.cause holds what it threw',
  'isRevoked-threw': () => 'option "isRevoked" threw or rejected; err.cause holds what it threw',
  'scopeClaim-threw': () => 'the option "scopeClaim" function threw; err.cause holds what it threw',
  'resolver-returned-non-key': () => 'the key resolver of option "key" returned something other than a KeyObject',
  'getCertificate-threw': () => 'option "mtls.getCertificate" threw; err.cause holds what it threw',
  'resolveProfile-threw': () => 'verifyRouter option "resolveProfile" threw; err.cause holds what it threw',
  'resolveProfile-shape': () => 'verifyRouter option "resolveProfile" answered something other than a ProfileResult',
  'guard-hook-threw': () =>
    "a route guard hook (the MCP entry's tool or AuthInfo step) threw; err.cause holds what it threw",
  'claims-of-another-TokenAuth': () =>
    'auth.claims(req) was asked of another TokenAuth than the one whose middleware verified this request (their option "claims" may differ)',
  unexpected: () => 'not a refusal but a bug or an unexpected throw: err.cause holds it; no option causes this',
  method: () => 'the verify endpoint (verifyRouter) answers GET and POST only',
  view: () => 'expected view=claims or view=profile (verifyRouter option "defaultView" applies when none is given)',
  profile: () => 'verifyRouter option "resolveProfile" found no profile for this token',
  'mcp:sender-constrained-token': () =>
    'the MCP SDK\'s verifier hands over a bare token: a DPoP- or certificate-bound token needs requireMcpAuth (option "dpop", "mtls")',
};

/** Hints by the start of a reason, for reasons that carry a detail (`shape:providers`, `jwks-timeout`). */
const BY_PREFIX: ReadonlyArray<readonly [string, Hint]> = [
  ...REMOTE_PREFIX_HINTS,
  ...EVENT_PREFIX_HINTS,
  ['shape:', modeRefusal],
  ['at+jwt:', modeRefusal],
  [
    'jwt:',
    (_c, err) =>
      `${err.reason?.slice('jwt:'.length) ?? ''} is present but not of the type RFC 7519 §4.1 gives it (iss, sub, jti: a string; aud: a string or an array of strings); claims: 'jwt' refuses it, so that JwtClaims never types a claim wrongly`,
  ],
  [
    'required:',
    (_c, err) => `expected claim ${quote(err.reason?.slice('required:'.length) ?? '')}, from option "requiredClaims"`,
  ],
  ['step-up:', stepUpHint],
  [
    'header-',
    () =>
      'expected a compact JWS whose header is a base64url JSON object (RFC 7515 §7.1); opaque tokens need option "introspection"',
  ],
  [
    'payload-',
    () =>
      'expected a compact JWS whose payload is a base64url JSON object (RFC 7519 §7.2); opaque tokens need option "introspection"',
  ],
  [
    'signature-',
    () =>
      'expected a compact JWS with a base64url signature (RFC 7515 §7.1); opaque tokens need option "introspection"',
  ],
];

/** For a failure no row names: what its code expects. */
const BY_CODE: Readonly<Record<TokenAuthErrorCode, Hint>> = {
  missing_token: (c) =>
    c.proxy !== undefined
      ? `expected header ${c.proxy.header}, which only ${c.proxy.proxy} sets, on the requests it lets through (the ${c.proxy.preset} preset reads no other header, Authorization included): this request did not come through the proxy, or the proxy does not cover this path`
      : `expected an Authorization header "Bearer <token>" (RFC 6750 §2.1)${c.options.dpop === undefined ? '' : ' or "DPoP <token>" with a DPoP proof'}; option "getToken" reads the token elsewhere`,
  invalid_token: (c) =>
    `the token does not meet the rules of this TokenAuth (${c.key}, claims: '${c.options.claims.mode}')`,
  token_expired: (c) =>
    `the token expired, give or take option "clockTolerance" (${seconds(c.options.rules.clockTolerance)})`,
  insufficient_scope: (c, err) => BY_REASON.scope(c, err),
  verification_unavailable: (c) => `${c.remote} cannot be asked right now; Retry-After says when to try again`,
  invalid_request: () => 'the request is malformed for this route',
  not_found: () => 'nothing found for this token (verifyRouter option "resolveProfile")',
  method_not_allowed: () => 'the verify endpoint (verifyRouter) answers GET and POST only',
  internal: () => 'not a refusal but a bug or an app hook throwing: err.cause holds it',
  invalid_dpop_proof: (c, err) => dpopHint(c, err),
  use_dpop_nonce: (c, err) => dpopHint(c, err),
  insufficient_user_authentication: stepUpHint,
  forbidden: () =>
    "the token does not meet the route's requirements (roles, permissions, groups, claims, authorizationDetails, issuers or allow: docs/authorization.md)",
  exchange_refused: () =>
    `the authorization server refused the token exchange (its error code is err.reason); check what option "tokenExchange.clientId" may request there`,
};

function hintOf(c: Described, err: TokenAuthError): string {
  const reason = err.reason;
  if (reason !== undefined) {
    const exact = BY_REASON[reason];
    if (exact !== undefined) return exact(c, err);
    for (const [prefix, hint] of BY_PREFIX) if (reason.startsWith(prefix)) return hint(c, err);
  }
  return BY_CODE[err.code](c, err);
}

/**
 * The hint maker of one TokenAuth: `err.hint` when its room set one (what a key address answered, the issuers an
 * `iss` routing knows), else what the configuration expected, by reason (or by code for a reason no row names).
 * Every hint is escaped again as a whole (base/printable.ts): each room quotes what it takes from a token or a
 * server, and no text a room forgot can break a log line either.
 */
export function refusalHints(options: ResolvedOptions): (err: TokenAuthError) => string {
  const described = describeConfiguration(options);
  return (err) => escapeControls(err.hint ?? hintOf(described, err));
}

/**
 * The hint of a scope refusal on a route, set when it is refused: every scope the route requires (each of its `any`
 * alternatives named), whose requirement it is (the route, an MCP tool) and where the token's scopes were read.
 */
export function scopeRefusalHint(
  options: ResolvedOptions,
): (scopes: ScopeRequirement, owner: RequirementOwner) => string {
  const { scopes } = describeConfiguration(options);
  const implied = options.scopeImplies === undefined ? '' : ' (a scope that implies one counts, option "scopeImplies")';
  return (requirement, owner) =>
    `expected ${wanted('scope', requirement.all, requirement.any)}${implied} of ${owner('scopes')}, read ${scopes}`;
}

/** Every reason with a row of its own, and every prefix: for the test that each reason in lib/ has one. */
export const HINTED_REASONS: { readonly exact: readonly string[]; readonly prefixes: readonly string[] } = {
  exact: Object.keys(BY_REASON),
  prefixes: BY_PREFIX.map(([prefix]) => prefix),
};
