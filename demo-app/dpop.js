'use strict';
// The demo's DPoP page (RFC 9449): the browser holds a non-extractable WebCrypto key, gets a token bound to its
// thumbprint from a dev token endpoint, and calls a route that accepts only DPoP with a fresh proof each time.
// Mounted from server.js with one line; uses the package only through its public entry.
const path = require('node:path');
const { generateKeyPairSync, randomUUID, sign } = require('node:crypto');
const express = require('express');
const { createTokenAuth } = require('express-verified-user');

const ISSUER = 'https://auth.demo.localhost';
const AUDIENCE = 'express-verified-user-demo-dpop';
const LIFETIME = 600;
const JKT = /^[A-Za-z0-9_-]{43}$/;

const base64url = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Mount `GET /dpop` (the page), `POST /dpop/token` (dev token endpoint) and `GET /dpop/api/me` (DPoP only). */
function mountDpop(app) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const kid = randomUUID();
  const auth = createTokenAuth({
    key: { publicKey },
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['ES256'],
    dpop: { required: true },
  });

  /** A Shape B token bound to the key whose RFC 7638 thumbprint is `jkt` (dev stand-in for a DPoP token request). */
  function mint(jkt) {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      iss: ISSUER,
      aud: AUDIENCE,
      iat: now,
      exp: now + LIFETIME,
      jti: randomUUID(),
      scopes: ['identify'],
      providers: {},
      metadata: { createdAt: new Date(now * 1000).toISOString(), authorizer: 'express-verified-user demo' },
      sub: null,
      cnf: { jkt },
    };
    const input = `${base64url({ alg: 'ES256', typ: 'JWT', kid })}.${base64url(payload)}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  }

  app.get('/dpop', (_req, res) => res.sendFile(path.join(__dirname, 'public', 'dpop.html')));
  app.post('/dpop/token', express.json({ limit: '1kb' }), (req, res) => {
    const jkt = req.body && req.body.jkt;
    if (typeof jkt !== 'string' || !JKT.test(jkt))
      return res.status(400).json({ status: 'error', message: 'jkt must be a JWK SHA-256 thumbprint' });
    res.set('Cache-Control', 'no-store').json({ access_token: mint(jkt), token_type: 'DPoP', expires_in: LIFETIME });
  });
  app.get('/dpop/api/me', auth.requireVerifiedUser(['identify']), (req, res) => {
    res.json({ status: 'success', route: '/dpop/api/me', jti: req.auth.jti, boundTo: req.auth.cnf.jkt });
  });
  return auth;
}

module.exports = { mountDpop };
