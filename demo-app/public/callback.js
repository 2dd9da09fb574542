'use strict';
/* global URLSearchParams, history */ // browser globals (the shared ESLint config lists Node's)
// Checks `state`, exchanges the code and PKCE verifier for a token (POST /oauth/token), then calls the verify
// endpoint exactly as the service's sample client does (GET, an empty query string, Authorization, Content-Type
// and Accept), then the profile view and two protected routes.
(async function callback() {
  const $ = (selector, root = document) => root.querySelector(selector);
  const params = new URLSearchParams(location.search);
  // The code is single-use and short-lived, but still: keep it out of the address bar, the history and bookmarks.
  if (location.search !== '') history.replaceState(null, '', location.pathname);
  const pending = window.demoPkce.take();

  const summary = $('#summary');
  const setSummary = (kind, text) => {
    summary.className = `banner ${kind}`;
    summary.textContent = text;
  };
  const finish = (state) => {
    document.body.dataset.state = state;
  };

  // Scopes the link builder can grant; anything else (the demo's `admin`) no demo token ever carries.
  const BUILDER_SCOPES = ['identify', 'email', 'profile', 'google', 'roblox', 'discord'];
  let granted; // the token's scopes, once Shape B has been read

  function scopeAdvice(challenge) {
    const match = /scope="([^"]*)"/.exec(challenge ?? '');
    const required = match ? match[1].split(' ').filter(Boolean) : [];
    const missing = granted ? required.filter((s) => !granted.includes(s)) : required;
    const needs = `this needs ${required.join(', ') || 'more scopes'}`;
    const lacks = granted && missing.length > 0 ? `; the token lacks ${missing.join(', ')}` : '';
    const advice = missing.every((s) => BUILDER_SCOPES.includes(s))
      ? ' Tick them in the link builder.'
      : ' No demo token can carry it: this route answers 403 on purpose.';
    return `${needs}${lacks}.${advice}`;
  }

  /** A sentence for each answer, so a failure says what went wrong and what to do. */
  function explain({ status, body, challenge }) {
    const message = body && typeof body.message === 'string' ? body.message : '';
    if (status === 200) return 'OK';
    if (status === 401 && message === 'Missing access token')
      return 'Missing access token: the request carried no token.';
    if (status === 401 && message === 'Access token expired')
      return `${message}: the token's lifetime is over. Authorize again for a fresh one.`;
    if (status === 401) return `${message}: the token was rejected. Build a new link and authorize again.`;
    if (status === 403) return `Insufficient scope: ${scopeAdvice(challenge)}`;
    if (status === 404) return `${message}. Link the Google account in the link builder.`;
    return `${message || 'Unexpected answer'} (HTTP ${status}).`;
  }

  async function call(url, headers) {
    const response = await fetch(url, { method: 'GET', headers });
    const body = await response.json().catch(() => null);
    return { status: response.status, body, challenge: response.headers.get('WWW-Authenticate') };
  }

  function show(section, result) {
    const root = $(section);
    const line = $('.result', root);
    line.textContent = `HTTP ${result.status} · ${explain(result)}`;
    line.className = `result ${result.status === 200 ? 'ok' : 'error'}`;
    $('.body', root).textContent = JSON.stringify(result.body, null, 2);
    root.dataset.status = String(result.status);
  }

  function stop(kind, heading, text) {
    $('#heading').textContent = heading;
    setSummary(kind, text);
    for (const id of ['#claims', '#profile']) $('.result', $(id)).textContent = 'Not called: there is no token.';
    for (const id of ['#route-me', '#route-admin']) $('.status', $(id)).textContent = '—';
    finish('done');
  }

  /** RFC 6749 §4.1.3: POST the code, the redirect_uri and client_id it was issued for, and the PKCE verifier. */
  async function exchange(code, verifier) {
    const response = await fetch('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: '/callback',
        client_id: 'demo-app',
        code_verifier: verifier,
      }),
    });
    const body = await response.json().catch(() => null);
    if (response.status !== 200 || !body || typeof body.access_token !== 'string') {
      throw new Error(
        body && body.error_description ? `${body.error}: ${body.error_description}` : `HTTP ${response.status}`,
      );
    }
    return body.access_token;
  }

  const code = params.get('code');
  if (params.has('error')) {
    stop(
      'error',
      'Authorization refused',
      `The authorization server answered ${params.get('error')}. Start again from the link builder.`,
    );
    return;
  }
  if (!code) {
    stop(
      'error',
      'Missing code',
      'Missing authorization code: this page expects ?code= and ?state= from the authorization server. Start from the link builder and press “Authorize”.',
    );
    return;
  }
  // RFC 6749 §10.12: an answer whose state is not the one this tab sent is not ours to use (login CSRF).
  if (!pending || params.get('state') !== pending.state) {
    stop(
      'error',
      'State mismatch',
      'Refused: the state in this answer does not match the one this tab sent, so the code was not exchanged. Start again from the link builder.',
    );
    return;
  }

  let token;
  try {
    token = await exchange(code, pending.verifier);
  } catch (err) {
    stop(
      'error',
      'Code exchange failed',
      `The code could not be exchanged for a token (${err.message}). Start again from the link builder.`,
    );
    return;
  }

  const sampleClientHeaders = {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
    Accept: 'application/json',
  };

  try {
    const claims = await call('/api/auth/@users/verify?', sampleClientHeaders);
    show('#claims', claims);
    if (claims.status === 200) {
      const c = claims.body;
      granted = c.scopes;
      $('#jti').textContent = c.jti;
      $('#scopes').textContent = c.scopes.join(' ');
      $('#linked').textContent = Object.keys(c.providers).join(', ') || 'none';
      $('#expires').textContent = new Date(c.exp * 1000).toISOString();
      $('#claims .facts').hidden = false;
      setSummary(
        'ok',
        `Token verified: ${c.scopes.length} scope(s), linked: ${Object.keys(c.providers).join(', ') || 'none'}.`,
      );
    } else if (claims.status === 401 && claims.body && claims.body.message === 'Access token expired') {
      $('#heading').textContent = 'Token expired';
      setSummary('error', `Expired token. ${explain(claims)}`);
    } else if (claims.status === 401) {
      $('#heading').textContent = 'Invalid token';
      setSummary('error', `Invalid token. ${explain(claims)}`);
    } else if (claims.status === 403) {
      setSummary('warn', `The token lacks scopes. ${explain(claims)}`);
    } else {
      setSummary('error', explain(claims));
    }

    const profile = await call('/api/auth/@users/verify?view=profile', sampleClientHeaders);
    show('#profile', profile);
    if (profile.status === 200) {
      const { user } = profile.body;
      $('#name').textContent = user.name;
      $('#email').textContent = user.email;
      $('#picture').src = user.picture;
      $('#picture').alt = `Picture of ${user.name}`;
      $('#profile .card').hidden = false;
    }

    for (const [row, url] of [
      ['#route-me', '/api/me'],
      ['#route-admin', '/api/admin'],
    ]) {
      const result = await call(url, { Authorization: `Bearer ${token}`, Accept: 'application/json' });
      const tr = $(row);
      $('.status', tr).textContent = String(result.status);
      $('.status', tr).className = `status ${result.status === 200 ? 'ok' : 'error'}`;
      $('.answer', tr).textContent = result.status === 200 ? `OK · jti ${result.body.jti}` : explain(result);
      tr.dataset.status = String(result.status);
    }
    finish('done');
  } catch (err) {
    setSummary('error', `The demo server could not be reached (${err.message}).`);
    finish('failed');
  }
})();
