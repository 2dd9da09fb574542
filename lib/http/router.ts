// The verify endpoint (GET/POST …/auth/@users/verify) answering Shape B (claims) or Shape A (profile).
import type { Request, RequestHandler, Response } from 'express';
import { authenticationFor, type Authenticator, type RouteAuthentication } from './authenticate';
import type { RegisteredClaims } from '../token/claim-modes';
import type { VerifiedClaims } from '../token/claims';
import { TokenAuthError } from '../base/errors';
import { isProfileResult, toProfile, type ProfileResult } from '../token/profile';
import { guardRoute } from './guard';
import { addRequiredScopes, parseScopeRequirement, type ScopeRequirementInput } from '../token/scopes';
import { OPEN_ROUTE } from '../authorize/route';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';

/** Which payload the verify endpoint answers with: Shape B (`'claims'`) or Shape A (`'profile'`). */
export type VerifyView = 'claims' | 'profile';

/** Builds Shape A for a verified token; `undefined` or `null` means "no profile" (404). `C`: the mode's claims. */
export type ProfileResolver<C extends RegisteredClaims = RegisteredClaims> = (
  claims: C,
  req: Request,
) => ProfileResult | null | undefined | Promise<ProfileResult | null | undefined>;

/** Options of `verifyRouter`. */
export interface VerifyRouterOptions<C extends RegisteredClaims = RegisteredClaims> {
  /** The view when the request names none (default `'claims'`, Shape B). */
  defaultView?: VerifyView;
  /** Scopes every answer needs (default `['identify']`); the profile view also needs `profile` and `email`. */
  requiredScopes?: ScopeRequirementInput;
  /** Builds Shape A (sync or async; default `toProfile`, the linked google account). */
  resolveProfile?: ProfileResolver<C>;
}

// Express's default routing is case-insensitive and tolerates a trailing slash; a percent-encoded `@` is the
// same path to any client that encodes it.
const VERIFY_PATH = /^\/auth\/(?:@|%40)users\/verify\/?$/i;
const ALLOWED_METHODS = new Set(['GET', 'HEAD', 'POST']);
const ALLOW = 'GET, HEAD, POST';
const PROFILE_SCOPES = ['profile', 'email'];
const ROUTER_OPTIONS: FieldList<VerifyRouterOptions> = {
  defaultView: true,
  requiredScopes: true,
  resolveProfile: true,
};
const INVALID_VIEW = 'Invalid view: use view=claims or view=profile';
const NO_PROFILE = 'No profile is linked to this token';

interface RouterConfig {
  defaultView: VerifyView;
  /** Each view's authentication, and that of a request naming no known view (its 400 comes after the token's check). */
  claimsView: RouteAuthentication;
  profileView: RouteAuthentication;
  unknownView: RouteAuthentication;
  resolveProfile: ProfileResolver;
}

function resolveRouterOptions(input: unknown): RouterConfig {
  if (input === undefined) input = {};
  if (!isObject(input)) optionError('', 'verifyRouter expects an options object');
  knownFields(input, ROUTER_OPTIONS, '', 'verifyRouter');
  const defaultView = input.defaultView ?? 'claims';
  if (defaultView !== 'claims' && defaultView !== 'profile')
    optionError('defaultView', 'verifyRouter option "defaultView" must be "claims" or "profile"');
  const resolveProfile = input.resolveProfile ?? toProfile;
  if (typeof resolveProfile !== 'function')
    optionError('resolveProfile', 'verifyRouter option "resolveProfile" must be a function (claims, req) => profile');
  const claimsScopes = parseScopeRequirement(
    input.requiredScopes ?? ['identify'],
    'requiredScopes',
    'verifyRouter option "requiredScopes"',
  );
  const owner = () => 'the verify endpoint (verifyRouter option "requiredScopes", and the profile view\'s scopes)';
  return {
    defaultView,
    claimsView: authenticationFor({ ...OPEN_ROUTE, scopes: claimsScopes, owner }),
    profileView: authenticationFor({ ...OPEN_ROUTE, scopes: addRequiredScopes(claimsScopes, PROFILE_SCOPES), owner }),
    unknownView: authenticationFor(OPEN_ROUTE),
    resolveProfile: resolveProfile as ProfileResolver,
  };
}

/**
 * The requested view, read from the raw query string so that Express 4's and 5's query parsers (and an app's
 * own `query parser` setting) cannot change the answer: exactly one `view` parameter, or none. Undefined means
 * the request named something else, which is a 400 once the token has been checked.
 */
function requestedView(url: string, fallback: VerifyView): VerifyView | undefined {
  const at = url.indexOf('?');
  if (at === -1) return fallback;
  const views = new URLSearchParams(url.slice(at + 1)).getAll('view');
  if (views.length === 0) return fallback;
  if (views.length === 1 && (views[0] === 'claims' || views[0] === 'profile')) return views[0];
  return undefined;
}

/**
 * The verify endpoint as one Express handler: `GET`/`POST {mount}/auth/@users/verify` (HEAD as GET), answering
 * Shape B or Shape A with the service's errors. It matches its own path instead of using `express.Router`, so
 * the same handler works in Express 4 and 5 apps whichever `express` this package resolves.
 */
export function createVerifyRouter(auth: Authenticator, options?: VerifyRouterOptions<never>): RequestHandler {
  const config = resolveRouterOptions(options);

  /** After the preflight check: no-store, the method, and the requested view's authentication. */
  function authentication(req: Request, res: Response): RouteAuthentication {
    // Set first, so that errors forwarded with `errors: 'next'` keep it whatever renders them.
    res.setHeader('Cache-Control', 'no-store');
    if (!ALLOWED_METHODS.has(req.method))
      throw new TokenAuthError('method_not_allowed', { headers: { Allow: ALLOW }, reason: 'method' });
    const view = requestedView(req.url, config.defaultView);
    // Check order is token (401), view (400), scopes (403), profile (404): an unknown view is judged only after
    // the token, and scopes are asked only for a view that exists.
    return view === 'profile' ? config.profileView : view === 'claims' ? config.claimsView : config.unknownView;
  }

  async function answer(req: Request, res: Response, claims: VerifiedClaims | undefined): Promise<void> {
    if (claims === undefined) throw new TokenAuthError('missing_token');
    const view = requestedView(req.url, config.defaultView);
    if (view === undefined) throw new TokenAuthError('invalid_request', { message: INVALID_VIEW, reason: 'view' });
    const body = view === 'claims' ? claims : await profileOf(claims, req);
    if (!res.headersSent) res.status(200).json(body);
  }

  async function profileOf(claims: VerifiedClaims, req: Request): Promise<ProfileResult> {
    let profile: unknown;
    try {
      profile = await config.resolveProfile(claims, req);
    } catch (err) {
      throw new TokenAuthError('internal', { reason: 'resolveProfile-threw', cause: err });
    }
    if (profile === undefined || profile === null)
      throw new TokenAuthError('not_found', { message: NO_PROFILE, reason: 'profile' });
    if (!isProfileResult(profile)) throw new TokenAuthError('internal', { reason: 'resolveProfile-shape' });
    return profile;
  }

  const guarded = guardRoute(auth, { authentication, accept: answer });
  return function verifyEndpoint(req, res, next) {
    if (!VERIFY_PATH.test(req.path)) {
      next();
      return;
    }
    guarded(req, res, next);
  };
}
