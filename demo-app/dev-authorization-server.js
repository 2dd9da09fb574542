'use strict';
// The demo's dev authorization server: the authorization code flow with PKCE (RFC 6749 §4.1, RFC 7636 S256), as
// an OAuth 2.0 public client in a browser should use it today (RFC 9700 §2.1.1). `/oauth/authorize` hands out a
// short-lived, single-use code bound to the code_challenge, client_id and redirect_uri; `/oauth/token` exchanges
// that code and the code_verifier for the access token. Demo code, not part of the package: there is no login
// and the user "consents" by following the link.
const { createHash, randomBytes, timingSafeEqual } = require('node:crypto');
const express = require('express');
const { SCOPES, PROVIDERS } = require('./dev-issuer');

const CLIENT_ID = 'demo-app';
const CODE_LIFETIME_MS = 60_000; // RFC 6749 §4.1.2: a maximum of 10 minutes is recommended; a minute is plenty
const MAX_PENDING_CODES = 1000;
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/; // RFC 7636 §4.1 code_verifier (and an S256 challenge fits it)
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/; // base64url of a SHA-256, no padding
/** Tokens the builder can ask for, to show each failure: a good one, one already expired, one signed by a stranger. */
const TOKEN_KINDS = ['valid', 'expired', 'forged'];

function originOf(req) {
  return `${req.protocol}://${req.get('host')}`;
}

/** A list parameter: repeated, space- or comma-separated; each value must be one of `allowed`. */
function listParam(value, allowed) {
  const items = (Array.isArray(value) ? value : [value ?? ''])
    .flatMap((v) => String(v).split(/[\s,]+/))
    .filter((v) => v !== '');
  const unknown = items.filter((v) => !allowed.includes(v));
  return { items: [...new Set(items)], unknown };
}

/**
 * Only a path on this demo may receive a code: an absolute path, not `//host` or `/\host`, which browsers would
 * treat as another origin.
 */
function safeRedirect(value) {
  if (typeof value !== 'string' || !/^\/(?![/\\])/.test(value)) return undefined;
  const url = new URL(value, 'http://demo.invalid');
  return url.origin === 'http://demo.invalid' ? url : undefined;
}

const single = (value) => (typeof value === 'string' ? value : undefined);

function authorizeError(res, message) {
  res.status(400).type('text/plain').send(`Authorization failed: ${message}\n`);
}

/** RFC 6749 §5.2 error answer of the token endpoint. */
function tokenError(res, error, description) {
  res.status(400).set('Cache-Control', 'no-store').json({ error, error_description: description });
}

/** S256: BASE64URL(SHA256(ASCII(code_verifier))) must equal the code_challenge; compared in constant time. */
function verifierMatches(verifier, challenge) {
  const computed = createHash('sha256').update(verifier, 'ascii').digest();
  const expected = Buffer.from(challenge, 'base64url');
  return expected.length === computed.length && timingSafeEqual(computed, expected);
}

/**
 * The `/oauth/authorize` and `/oauth/token` routes, minting tokens with `issuer`. `codeLifetimeMs` is for tests.
 */
function devAuthorizationServer(issuer, { codeLifetimeMs = CODE_LIFETIME_MS } = {}) {
  /** code → what it was issued for; each is deleted on first use or once expired. */
  const codes = new Map();
  const forget = (now) => {
    for (const [code, grant] of codes) if (grant.expiresAt <= now) codes.delete(code);
  };

  const router = express.Router();

  router.get('/oauth/authorize', (req, res) => {
    const q = req.query;
    if (q.response_type !== 'code')
      return authorizeError(res, 'response_type must be "code" (the implicit flow is not offered)');
    if (q.client_id !== CLIENT_ID) return authorizeError(res, `unknown client_id (this demo knows "${CLIENT_ID}")`);
    const redirect = safeRedirect(q.redirect_uri);
    if (redirect === undefined)
      return authorizeError(res, 'redirect_uri must be a path on this demo, such as /callback');
    if (q.code_challenge_method !== 'S256') return authorizeError(res, 'code_challenge_method must be "S256" (PKCE)');
    const challenge = single(q.code_challenge);
    if (challenge === undefined || !CHALLENGE.test(challenge))
      return authorizeError(res, 'code_challenge must be the base64url SHA-256 of a code_verifier');
    const state = single(q.state);
    if (state === undefined || !PKCE_VALUE.test(state))
      return authorizeError(res, 'state must be an unguessable value of 43 to 128 URL-safe characters');
    const scopes = listParam(q.scope, SCOPES);
    if (scopes.unknown.length > 0) return authorizeError(res, `unknown scope (choose from ${SCOPES.join(', ')})`);
    const providers = listParam(q.providers, PROVIDERS);
    if (providers.unknown.length > 0)
      return authorizeError(res, `unknown provider (choose from ${PROVIDERS.join(', ')})`);
    const kind = single(q.demo_token) ?? 'valid';
    if (!TOKEN_KINDS.includes(kind)) return authorizeError(res, `demo_token must be one of ${TOKEN_KINDS.join(', ')}`);

    const now = Date.now();
    forget(now);
    if (codes.size >= MAX_PENDING_CODES) return authorizeError(res, 'too many pending codes; try again in a minute');
    const code = randomBytes(32).toString('base64url');
    codes.set(code, {
      clientId: CLIENT_ID,
      redirectUri: q.redirect_uri,
      challenge,
      expiresAt: now + codeLifetimeMs,
      mint: { scopes: scopes.items, providers: providers.items, origin: originOf(req), kind },
    });
    redirect.searchParams.set('code', code);
    redirect.searchParams.set('state', state);
    res.set('Cache-Control', 'no-store').redirect(302, `${redirect.pathname}${redirect.search}`);
  });

  router.post('/oauth/token', express.urlencoded({ extended: false, limit: '4kb' }), (req, res) => {
    const body = req.body ?? {};
    if (body.grant_type !== 'authorization_code')
      return tokenError(res, 'unsupported_grant_type', 'grant_type must be authorization_code');
    const code = single(body.code);
    const grant = code === undefined ? undefined : codes.get(code);
    // Single use: a code is gone after its first exchange, whether that succeeds or not.
    if (grant !== undefined) codes.delete(code);
    if (grant === undefined || grant.expiresAt <= Date.now())
      return tokenError(res, 'invalid_grant', 'the code is unknown, used or expired');
    if (body.client_id !== grant.clientId)
      return tokenError(res, 'invalid_grant', 'the code was issued to another client');
    if (body.redirect_uri !== grant.redirectUri)
      return tokenError(res, 'invalid_grant', 'redirect_uri differs from the authorization request');
    const verifier = single(body.code_verifier);
    if (verifier === undefined || !PKCE_VALUE.test(verifier) || !verifierMatches(verifier, grant.challenge)) {
      return tokenError(res, 'invalid_grant', 'code_verifier does not match the code_challenge');
    }
    const { kind, ...mint } = grant.mint;
    const lifetime = kind === 'expired' ? -60 : undefined;
    const token = issuer.mint({ ...mint, lifetime, forged: kind === 'forged' });
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json({
      access_token: token,
      token_type: 'Bearer',
      expires_in: kind === 'expired' ? 0 : issuer.lifetime,
      scope: mint.scopes.join(' '),
    });
  });

  return router;
}

module.exports = { devAuthorizationServer, CLIENT_ID };
