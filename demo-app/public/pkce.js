'use strict';
/* global sessionStorage, TextEncoder */ // browser globals (the shared ESLint config lists Node's)
// PKCE (RFC 7636, S256) and `state` for the demo's public client, kept in sessionStorage between the link builder
// and the callback: one pending authorization per tab, used once.
window.demoPkce = (function pkce() {
  const KEY = 'express-verified-user-demo:pending-authorization';

  /** 32 random bytes as base64url: 43 characters, as RFC 7636 §4.1 recommends for a code_verifier. */
  function randomValue() {
    const bytes = window.crypto.getRandomValues(new Uint8Array(32));
    return base64url(bytes);
  }

  function base64url(bytes) {
    let binary = '';
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return window.btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  /** A new state and verifier, stored for the callback; resolves with the state and the S256 code_challenge. */
  async function begin() {
    if (!window.crypto.subtle) {
      throw new Error('PKCE needs a secure context: open the demo at http://localhost or http://127.0.0.1');
    }
    const state = randomValue();
    const verifier = randomValue();
    const digest = await window.crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
    sessionStorage.setItem(KEY, JSON.stringify({ state, verifier }));
    return { state, challenge: base64url(new Uint8Array(digest)) };
  }

  /** The pending authorization, removed as it is read: a state and verifier serve one callback only. */
  function take() {
    const stored = sessionStorage.getItem(KEY);
    sessionStorage.removeItem(KEY);
    try {
      const pending = JSON.parse(stored ?? 'null');
      return pending && typeof pending.state === 'string' && typeof pending.verifier === 'string' ? pending : null;
    } catch {
      return null;
    }
  }

  return { begin, take };
})();
