'use strict';
/* global URLSearchParams, history */ // browser globals (the shared ESLint config lists Node's)
// Reads ?token=, then calls the verify endpoint exactly as the service's sample client does (GET, an empty query
// string, Authorization, Content-Type and Accept), then the profile view and two protected routes.
(async function callback() {
  const $ = (selector, root = document) => root.querySelector(selector);
  const params = new URLSearchParams(location.search);
  const token = params.get('token');
  // Keep the token out of the address bar, the history and any bookmark.
  if (params.has('token')) history.replaceState(null, '', location.pathname);

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
    if (status === 401 && message === 'Missing access token') return 'Missing access token: the request carried no token.';
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

  const sampleClientHeaders = {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
    Accept: 'application/json',
  };

  function show(section, result) {
    const root = $(section);
    const line = $('.result', root);
    line.textContent = `HTTP ${result.status} · ${explain(result)}`;
    line.className = `result ${result.status === 200 ? 'ok' : 'error'}`;
    $('.body', root).textContent = JSON.stringify(result.body, null, 2);
    root.dataset.status = String(result.status);
  }

  if (!token) {
    setSummary('error', 'Missing token: this page expects ?token= in its address. Start from the link builder and press “Authorize”.');
    for (const id of ['#claims', '#profile']) $('.result', $(id)).textContent = 'Not called: there is no token.';
    for (const id of ['#route-me', '#route-admin']) $('.status', $(id)).textContent = '—';
    finish('done');
    return;
  }

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
      setSummary('ok', `Token verified: ${c.scopes.length} scope(s), linked: ${Object.keys(c.providers).join(', ') || 'none'}.`);
    } else if (claims.status === 401) {
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

    for (const [row, url] of [['#route-me', '/api/me'], ['#route-admin', '/api/admin']]) {
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
