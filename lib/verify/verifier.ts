// verify(token): cache → key → signature → claims, with no HTTP. Synchronous when the key is at hand; it calls the
// key room and token/ through narrow seams, never a branch per mode.
import type { KeyObject } from 'node:crypto';
import { isThenable, type MaybePromise } from '../base/values';
import { ResultCache, type CacheStats, type Verdict } from './cache';
import type { ClaimPolicy } from '../token/claim-modes';
import type { VerifiedClaims } from '../token/claims';
import { isVerifyTraced, noteVerdict, traceVerify, type VerifyTrace } from '../observe/diagnostics';
import { asTokenAuthError, isTokenFault, TokenAuthError, tokenFacts } from '../base/errors';
import { checkHeader, decodeJws, decodePaddedJws, type DecodedJws } from '../jose/jws';
import { keyFitsAlgorithm } from '../jose/algorithms';
import { keyHandle, type KeyCandidates, type KeyChoice, type KeyHandle, type SigningKeySource } from '../keys/source';
import type { RemoteClaimsSource, TokenSource } from '../remote/source';
import { createSignatureCheck } from './signature';
import {
  checkIssuerAudience,
  checkTimes,
  readTimes,
  type RegisteredClaimRules,
  type TokenTimes,
} from '../token/registered';

/** What a verifier needs: where keys come from, the claim rules, the clock and the cache. */
export interface VerifierConfig {
  source: TokenSource;
  /** A per-token choice of source (introspection: verify/dispatch.ts); default: always `source`. */
  route?: (token: string) => TokenSource;
  rules: RegisteredClaimRules;
  /** The mode's claims, `typ`, `requiredClaims`, `validateClaims` (token/claim-modes.ts). */
  claims: ClaimPolicy;
  clock: () => number;
  cache: ResultCache;
}

/** A syntax rule a token has not passed yet, run on a cache miss (see `Verifier.verify`). */
type Precheck = (token: string) => TokenAuthError | undefined;

/** Verifies tokens (cache → key → signature → claims); knows nothing of HTTP. */
export interface Verifier {
  /**
   * The verified claims of a syntactically checked token, or a TokenAuthError thrown (synchronously when the
   * key is at hand, as a rejection otherwise). Synchronous answers keep the hot path free of promise overhead.
   * `precheck`, when given, is a syntax rule the token has not passed yet: it runs on a cache miss, before any
   * decoding, and its fault is thrown. A token found in the cache passed it when it was stored (one cache serves
   * one TokenAuth, whose tokens all meet the same rules), so a hit skips it.
   */
  verify(token: string, precheck?: (token: string) => TokenAuthError | undefined): MaybePromise<VerifiedClaims>;
  stats(): CacheStats;
}

function failed(err: unknown, times?: TokenTimes, decoded?: DecodedJws): Verdict {
  const error = asTokenAuthError(err);
  if (decoded !== undefined && error.facts === undefined) error.facts = tokenFacts(decoded.header, decoded.payload);
  return { ok: false, error, times };
}

/** Build a verifier. The signature check is resolved once here, not per request. */
export function createVerifier(config: VerifierConfig): Verifier {
  const { source, route, rules, clock, cache } = config;
  const policy = config.claims;
  const signatureIsGood = createSignatureCheck();

  /** The claim rules (times, issuer, audience, the claims mode: docs/options.md) on a payload whose origin is established; async only for an async validateClaims. */
  function judgeClaims(
    payload: Record<string, unknown>,
    size: number,
    now: number,
    decoded?: DecodedJws,
    held?: KeyHandle,
  ): MaybePromise<Verdict> {
    let times: TokenTimes | undefined;
    let checked: void | Promise<void>;
    try {
      times = readTimes(payload, rules);
      checkTimes(times, now, rules);
      checkIssuerAudience(payload, rules);
      checked = policy.check(payload, decoded?.header);
    } catch (err) {
      return failed(err, times, decoded);
    }
    // Frozen once here, after the app's validateClaims: every request with this token shares these claims.
    const verdict: Verdict = {
      ok: true,
      claims: payload as VerifiedClaims,
      times,
      size,
      header: decoded?.header,
      held,
    };
    if (!isThenable(checked)) return verdict;
    const known = times;
    return checked.then(
      () => verdict,
      (err: unknown) => failed(err, known, decoded),
    );
  }

  /** The signature (RFC 7515 §5.2), by jsonwebtoken, with a KeyObject that must fit the header's algorithm. */
  function judgeSignature(token: string, decoded: DecodedJws, key: KeyObject, now: number): MaybePromise<Verdict> {
    const alg = decoded.header.alg;
    if (!keyFitsAlgorithm(key, alg))
      return failed(new TokenAuthError('invalid_token', { reason: 'key-mismatch' }), undefined, decoded);
    let good: boolean;
    try {
      good = signatureIsGood(token, decoded.signedEnd, alg, key);
    } catch {
      good = false;
    }
    if (!good) return failed(new TokenAuthError('invalid_token', { reason: 'signature' }), undefined, decoded);
    // The cache serves this success only while the key stays held (withdrawn keys).
    return judgeClaims(decoded.payload, decoded.payloadLength, now, decoded, keyHandle(key));
  }

  /** The key, or of several candidates (a key set naming the `kid` twice; a few at most) the first that verifies. */
  function judgeChoice(token: string, decoded: DecodedJws, choice: KeyChoice, now: number): MaybePromise<Verdict> {
    if (!Array.isArray(choice)) return judgeSignature(token, decoded, choice as KeyObject, now);
    const alg = decoded.header.alg;
    const signer = (choice as KeyCandidates).find((candidate) => {
      if (!keyFitsAlgorithm(candidate, alg)) return false;
      try {
        return signatureIsGood(token, decoded.signedEnd, alg, candidate);
      } catch {
        return false;
      }
    });
    if (signer === undefined)
      return failed(new TokenAuthError('invalid_token', { reason: 'signature' }), undefined, decoded);
    return judgeClaims(decoded.payload, decoded.payloadLength, now, decoded, keyHandle(signer));
  }

  function verifyLocally(signing: SigningKeySource, token: string, now: number): MaybePromise<Verdict> {
    let decoded: DecodedJws | undefined;
    let key: MaybePromise<KeyChoice>;
    try {
      // AWS ALB's preset keys read padded segments (or unpadded); every other source the strict compact form.
      decoded = signing.segments === 'padded' ? decodePaddedJws(token) : decodeJws(token);
      checkHeader(decoded.header, signing.algorithms);
      key = signing.keyFor(decoded.header, decoded.payload);
    } catch (err) {
      return failed(err, undefined, decoded);
    }
    const known = decoded;
    if (!isThenable(key)) return judgeChoice(token, known, key, now);
    return key.then(
      (k) => judgeChoice(token, known, k, clock()),
      (err: unknown) => failed(err, undefined, known),
    );
  }

  function verifyRemotely(remote: RemoteClaimsSource, token: string): Promise<Verdict> {
    return remote.claimsFor(token).then(
      (answer) => judgeClaims(answer.payload, answer.size, clock()),
      (err: unknown) => failed(err),
    );
  }

  /** Store what may be stored; `first`: the token's first sighting, recorded now that its verdict is known. */
  function remember(key: string | undefined, token: string, verdict: Verdict, first: boolean): void {
    // Text that is not a JWS at all (a character outside base64url) is refused again as cheaply as it was found.
    if (!verdict.ok && verdict.error.reason === 'syntax') return;
    if (first) cache.sighted(token, verdict);
    if (!cache.admits(verdict, key)) return;
    cache.set(key ?? cache.keyOf(token), token.length, verdict, clock(), verdict.ok || isTokenFault(verdict.error));
  }

  function conclude(verdict: Verdict, now: number): VerifiedClaims {
    if (!verdict.ok) throw verdict.error;
    checkTimes(verdict.times, now, rules);
    return verdict.claims;
  }

  /** One verification; `trace` is the diagnostics context, undefined when nobody listens. */
  function verifyWith(
    token: string,
    precheck: Precheck | undefined,
    trace: VerifyTrace | undefined,
  ): MaybePromise<VerifiedClaims> {
    const now = clock();
    const key = cache.lookupKey(token);
    if (key !== undefined) {
      const known = cache.get(key, now);
      if (known !== undefined) {
        noteVerdict(trace, known, true);
        return conclude(known, now);
      }
      const shared = cache.inflight(key);
      if (shared !== undefined) {
        return shared.then((verdict) => {
          noteVerdict(trace, verdict, true);
          return conclude(verdict, clock());
        });
      }
    }
    if (precheck !== undefined) {
      const fault = precheck(token);
      if (fault !== undefined) throw fault;
    }

    const chosen = route === undefined ? source : route(token);
    if (trace !== undefined) trace.source = chosen.kind === 'jws' ? 'local' : 'upstream';
    const verdict = chosen.kind === 'jws' ? verifyLocally(chosen, token, now) : verifyRemotely(chosen, token);
    if (!isThenable(verdict)) {
      noteVerdict(trace, verdict, false);
      remember(key, token, verdict, key === undefined);
      return conclude(verdict, now);
    }
    // A verdict that waited (a key fetch, a remote verifier) is admitted at once: it cost a round trip, and its key
    // is needed for in-flight sharing anyway. Only the synchronous cold path waits for a second sighting.
    const shareKey = key ?? cache.keyOf(token);
    return cache
      .share(
        shareKey,
        verdict.then((settled) => {
          remember(shareKey, token, settled, key === undefined);
          return settled;
        }),
      )
      .then((settled) => {
        noteVerdict(trace, settled, false);
        return conclude(settled, clock());
      });
  }

  const traceSource = source.kind === 'jws' ? 'local' : 'upstream';
  return {
    verify(token, precheck) {
      return isVerifyTraced()
        ? traceVerify(traceSource, verifyWith, token, precheck)
        : verifyWith(token, precheck, undefined);
    },
    stats: () => cache.stats(),
  };
}
