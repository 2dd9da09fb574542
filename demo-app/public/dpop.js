'use strict';
/* global TextEncoder, btoa, crypto */ // browser globals (the shared ESLint config lists Node's)
// DPoP in the browser (RFC 9449): a non-extractable key, an RFC 7638 thumbprint, and one proof per request.
(function () {
  const encoder = new TextEncoder();
  const b64url = (bytes) =>
    btoa(String.fromCharCode(...new Uint8Array(bytes)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  const b64json = (value) => b64url(encoder.encode(JSON.stringify(value)));
  const sha256 = (text) => crypto.subtle.digest('SHA-256', encoder.encode(text));
  const $ = (id) => document.getElementById(id);

  let keyPair;
  let publicJwk;
  let lastRequest;

  async function proofFor(method, url, token) {
    const payload = {
      jti: crypto.randomUUID(),
      htm: method,
      htu: url,
      iat: Math.floor(Date.now() / 1000),
      ath: b64url(await sha256(token)),
    };
    const input = `${b64json({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk })}.${b64json(payload)}`;
    // WebCrypto's ECDSA signature is already r||s, the JWS form.
    const signature = await crypto.subtle.sign(
      { name: 'ECDSA', hash: 'SHA-256' },
      keyPair.privateKey,
      encoder.encode(input),
    );
    return `${input}.${b64url(signature)}`;
  }

  async function call(headers) {
    const res = await fetch('/dpop/api/me', { headers });
    return { status: res.status, challenge: res.headers.get('WWW-Authenticate'), body: await res.text() };
  }

  async function run() {
    document.body.dataset.state = 'running';
    keyPair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
    const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', keyPair.publicKey);
    publicJwk = { kty, crv, x, y };
    const jkt = b64url(await sha256(JSON.stringify({ crv, kty, x, y })));
    $('extractable').textContent = String(keyPair.privateKey.extractable);
    $('jkt').textContent = jkt;

    const tokenRes = await fetch('/dpop/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jkt }),
    });
    const { access_token: token } = await tokenRes.json();
    const url = `${location.origin}/dpop/api/me`;
    lastRequest = { Authorization: `DPoP ${token}`, DPoP: await proofFor('GET', url, token) };
    const answer = await call(lastRequest);
    $('status').textContent = String(answer.status);
    $('answer').textContent = answer.body;
    $('replay').disabled = false;
    document.body.dataset.state = 'done';
  }

  async function replay() {
    const answer = await call(lastRequest);
    $('replay-status').textContent = String(answer.status);
    $('replay-challenge').textContent = answer.challenge || '';
    $('answer').textContent = answer.body;
    document.body.dataset.state = 'replayed';
  }

  const fail = (err) => {
    $('answer').textContent = `Failed: ${err && err.message}`;
    document.body.dataset.state = 'failed';
  };
  $('run').addEventListener('click', () => run().catch(fail));
  $('replay').addEventListener('click', () => replay().catch(fail));
})();
