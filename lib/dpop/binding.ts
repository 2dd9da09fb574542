// The sender-constraint step of the pipeline, one seam for the HTTP edge: checkBinding(req, token, claims) applies
// DPoP (RFC 9449) and mTLS (RFC 8705) bindings and the scheme rules; it may use the rest of dpop/, extract/, token/, base/.
import type { Request } from 'express';
import { createHash } from 'node:crypto';
import { authorizationField, bearerCredential } from '../extract/bearer';
import { requestOrigin } from '../extract/request-origin';
import { type VerifiedClaims } from '../token/claims';
import {
  bearerChallenge,
  challengeParams,
  challengeTrailer,
  TokenAuthError,
  withHeaders,
  type ChallengeContext,
} from '../base/errors';
import { dpopCredential, isDpopScheme, proofField } from './extract';
import { checkCertificateBinding } from './mtls';
import { createNonceIssuer } from './nonce';
import type { ResolvedDpop, ResolvedMtls } from './options';
import { checkProof, invalidProof, normaliseUri } from './proof';
import { createMemoryReplayStore, ReplayShareExhausted, type ReplayStore } from './replay';
import { isObject, isThenable, type MaybePromise } from '../base/values';

/**
 * Sender constraint, the pipeline's one seam for DPoP (RFC 9449) and mTLS-bound tokens (RFC 8705): which
 * credential a request carries, whether the verified token is bound to the sender, and the challenges to answer
 * with. Proofs are checked on every request, after the (cached) token verdict; nothing about them is cached.
 */
export interface SenderConstraint {
  /** The access token of the Authorization header (Bearer, or DPoP when `dpop` is on), or its fault. */
  credential(req: Request, maxTokenLength: number): string | undefined | TokenAuthError;
  /** The claims when the token is used by its holder; throws or rejects with a TokenAuthError otherwise. */
  checkBinding(req: Request, token: string, claims: VerifiedClaims): MaybePromise<VerifiedClaims>;
  /** Add the DPoP challenges (RFC 9449 §7.1) to a failure, when DPoP is on. */
  challenge(err: TokenAuthError, req: Request | undefined, context: ChallengeContext): TokenAuthError;
}

/** What the binding step needs from the resolved options. */
export interface SenderConstraintConfig {
  dpop: ResolvedDpop | undefined;
  mtls: ResolvedMtls;
  clock: () => number;
  clockTolerance: number;
  /**
   * The configured `resource` (RFC 9728), when there is one: a proof's `htu` must then name its origin, never the
   * origin the request claims (a forged `Host` would let a proof made for another deployment pass).
   */
  resource?: string;
}

/**
 * A dot segment (`.` or `..`, percent-encoded or not) or a backslash in a request's path: a URL parser would move
 * such a path (`/admin/../x` → `/x`) while Express routes it as sent, so its proof could name another route.
 */
const MOVABLE_PATH = /\\|(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

/**
 * The normalised request URI without query and fragment (RFC 9449 §4.3): `origin` (the resource's, or the
 * request's own) and the path of `req.originalUrl`, as Express routes it; undefined when that path is not one.
 */
function requestUri(req: Request, origin: string): string | undefined {
  const url = req.originalUrl;
  const end = url.search(/[?#]/);
  const path = end < 0 ? url : url.slice(0, end);
  if (!path.startsWith('/') || MOVABLE_PATH.test(path)) return undefined;
  return normaliseUri(`${origin}${path}`);
}

/** 503 when single use cannot be promised: the store is down or full, or this proof key holds its whole share. */
const STORE_DOWN = (cause: unknown) =>
  new TokenAuthError('verification_unavailable', {
    reason: cause instanceof ReplayShareExhausted ? 'dpop:replay-share' : 'dpop:replay-store',
    cause,
    retryAfter: 5,
  });

/** Build the sender-constraint step of one TokenAuth. */
export function createSenderConstraint(config: SenderConstraintConfig): SenderConstraint {
  const { dpop, mtls, clock, clockTolerance } = config;
  const origin = config.resource === undefined ? undefined : new URL(config.resource).origin;
  const nonces = dpop?.nonce === undefined ? undefined : createNonceIssuer(dpop.nonce.secret, dpop.nonce.lifetime);
  // The default store keeps time by this TokenAuth's clock, the one the proof's `iat` is checked against.
  const replay = dpop?.replay ?? createMemoryReplayStore({ clock });

  /** RFC 9449 §4.3 on the request's proof, then the binding, the nonce and single use. */
  function checkDpop(
    req: Request,
    token: string,
    jkt: string,
    claims: VerifiedClaims,
    settings: ResolvedDpop,
    store: ReplayStore,
  ): MaybePromise<VerifiedClaims> {
    const proof = proofField(req);
    if (proof === undefined) throw invalidProof('header');
    // Without a resource, the request names its origin: only a well-formed scheme and host[:port] are taken.
    const base = origin ?? requestOrigin(req);
    if (base === undefined) throw invalidProof('request-origin');
    const uri = requestUri(req, base);
    if (uri === undefined) throw invalidProof('request-uri');
    const now = clock();
    const checked = checkProof(proof, {
      method: req.method,
      uri,
      jkt,
      token,
      now,
      iatWindow: settings.iatWindow,
      clockTolerance,
      algorithms: settings.algorithms,
    });
    if (nonces !== undefined) {
      const next = nonces.current(now);
      if (!nonces.accepts(checked.nonce, now)) {
        throw new TokenAuthError('use_dpop_nonce', { reason: 'dpop:nonce', headers: { 'DPoP-Nonce': next } });
      }
      // Set before next(): the handler's answer carries the nonce for the client's next proof.
      req.res?.setHeader('DPoP-Nonce', next);
    }
    const id = createHash('sha256').update(`${checked.jkt}.${checked.jti}`).digest('base64url');
    // Remembered as long as any instance could accept the proof: one whose clock is up to clockTolerance behind
    // takes it until its own clock reads iat + iatWindow (both edges inclusive).
    const expiresAt = Math.ceil(checked.iat + settings.iatWindow + clockTolerance);
    let first: boolean | Promise<boolean>;
    try {
      first = store.claimOnce(id, expiresAt, checked.jkt);
    } catch (err) {
      throw STORE_DOWN(err);
    }
    const decide = (fresh: boolean) => {
      if (fresh !== true) throw invalidProof('replay');
      return claims;
    };
    if (!isThenable(first)) return decide(first);
    return first.then(decide, (err: unknown) => {
      throw STORE_DOWN(err);
    });
  }

  return {
    credential(req, maxTokenLength) {
      const field = authorizationField(req.headers, req.rawHeaders);
      const bearer = bearerCredential(field, maxTokenLength);
      if (dpop === undefined) return bearer;
      if (bearer !== undefined) {
        if (dpop.required && typeof bearer === 'string')
          return new TokenAuthError('invalid_token', { reason: 'dpop:bearer-refused' });
        return bearer;
      }
      return dpopCredential(field, maxTokenLength);
    },

    checkBinding(req, token, claims) {
      const cnf = claims.cnf;
      const viaDpop = dpop !== undefined && isDpopScheme(req.headers.authorization);
      // `required` refuses every token that does not come with DPoP, however it was read (a getToken hook too).
      if (dpop?.required === true && !viaDpop)
        throw new TokenAuthError('invalid_token', { reason: 'dpop:bearer-refused' });
      if (cnf === undefined && !viaDpop) return claims;
      const bound = isObject(cnf) ? cnf : {};
      if (bound['x5t#S256'] !== undefined) checkCertificateBinding(req, bound['x5t#S256'], mtls);
      if (dpop === undefined) return claims;
      if (!viaDpop) {
        // RFC 9449 §7.2: a DPoP-bound token presented as a bearer token is refused.
        if (bound.jkt !== undefined)
          throw new TokenAuthError('invalid_token', { reason: 'dpop:bound-token-as-bearer' });
        return claims;
      }
      if (typeof bound.jkt !== 'string') throw new TokenAuthError('invalid_token', { reason: 'dpop:token-not-bound' });
      return checkDpop(req, token, bound.jkt, claims, dpop, replay);
    },

    challenge(err, req, context) {
      if (dpop === undefined || err.headers['WWW-Authenticate'] !== undefined) return err;
      const dpopError = err.code === 'invalid_dpop_proof' || err.code === 'use_dpop_nonce';
      // The DPoP challenge describes every error, insufficient_scope included, as it always has.
      const params = dpopError
        ? `error="${err.code}", error_description="${err.message}"`
        : err.code === 'insufficient_scope'
          ? `error="insufficient_scope", error_description="${err.message}", scope="${err.scope ?? ''}"`
          : challengeParams(err);
      if (params === undefined) return err;
      const viaDpop = dpop.required || dpopError || (req !== undefined && isDpopScheme(req.headers.authorization));
      const trailer = challengeTrailer(err, context);
      const { realm } = context;
      let challenge = `DPoP realm="${realm}", algs="${dpop.algs}"`;
      if (viaDpop && params !== '') challenge += `, ${params}`;
      challenge += trailer;
      if (!dpop.required)
        challenge += `, ${viaDpop ? `Bearer realm="${realm}"${trailer}` : bearerChallenge(err, context)}`;
      return withHeaders(err, { 'WWW-Authenticate': challenge });
    },
  };
}
