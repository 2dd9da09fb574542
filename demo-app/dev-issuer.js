'use strict';
// The demo's development issuer: a signing key made at start, and tokens in the service's Shape B. It stands in
// for the identity service's OAuth flow so the demo runs offline; it is demo code, not part of the package.
const { generateKeyPairSync, randomUUID, sign } = require('node:crypto');

/** Scope values the service grants (seed §2.2). */
const SCOPES = ['identify', 'email', 'profile', 'google', 'roblox', 'discord'];
/** Provider accounts a demo user can link. */
const PROVIDERS = ['google', 'discord', 'roblox'];

const ISSUER = 'https://auth.demo.localhost';
const AUDIENCE = 'express-verified-user-demo';
const LIFETIME = 3600;

/** The demo user's linked accounts; `picture` points at the demo's own avatar so the page works offline. */
function accountsFor(origin) {
  return {
    google: {
      id: '109876543210987654321',
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      picture: `${origin}/avatar.svg`,
    },
    discord: { id: '80351110224678912', username: 'ada', avatar: '8342729096ea3675442027381ff50dfe' },
    roblox: { id: '1815', username: 'AdaBuilds' },
  };
}

const base64url = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A fresh ES256 issuer. `options` plug into createTokenAuth; `mint()` signs a Shape B token. */
function createDevIssuer({ lifetime = LIFETIME } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  // A key nobody trusts, for the demo's "forged token" case: a well-formed token whose signature cannot verify.
  const stranger = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const kid = randomUUID();

  /**
   * A Shape B token. `lifetime` (seconds) overrides the issuer's; a negative one gives an already expired token
   * (its `iat` set before its `exp`). `forged` signs with a key the app does not trust.
   */
  function mint({
    scopes = SCOPES,
    providers = PROVIDERS,
    origin = 'http://localhost',
    lifetime: tokenLifetime = lifetime,
    forged = false,
  } = {}) {
    const now = Math.floor(Date.now() / 1000);
    const iat = tokenLifetime > 0 ? now : now + tokenLifetime - 60;
    const accounts = accountsFor(origin);
    const payload = {
      iss: ISSUER,
      aud: AUDIENCE,
      iat,
      exp: now + tokenLifetime,
      jti: randomUUID(),
      scopes: [...scopes],
      providers: Object.fromEntries(providers.map((name) => [name, accounts[name]])),
      metadata: { createdAt: new Date(iat * 1000).toISOString(), authorizer: 'express-verified-user demo' },
      sub: null,
    };
    const signingInput = `${base64url({ alg: 'ES256', typ: 'JWT', kid })}.${base64url(payload)}`;
    // JWS wants the raw r||s signature (IEEE P1363), not Node's default DER encoding.
    const signature = sign('sha256', Buffer.from(signingInput), {
      key: forged ? stranger : privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    return `${signingInput}.${signature.toString('base64url')}`;
  }

  return {
    mint,
    lifetime,
    /** The private signing key as PKCS#8 PEM, for the package's command (`express-verified-user token --key`). */
    privateKeyPem: () => privateKey.export({ type: 'pkcs8', format: 'pem' }),
    options: { key: { publicKey }, issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'] },
  };
}

module.exports = { createDevIssuer, SCOPES, PROVIDERS, ISSUER, AUDIENCE, LIFETIME };
