'use strict';
// Every load scenario: how its Express 5 app authenticates `GET /me`. Each peer is set up as its own README
// recommends (PEM or secret string, as the README shows) and, for the two whose README key costs a parse per token
// (express-jwt, passport-jwt: jsonwebtoken), also at its best, with a KeyObject; issuer and audience checks on.
// Every app answers the same route with the same body; failures are 401 (never counted as throughput).

/** The one route and body every scenario serves. */
const ROUTE = '/me';
const BODY = { ok: true };

/** Load shapes: `hot` sends one token again and again; `cold` walks the 20 000-token pool, a new token each request. */
const SCENARIOS = [
  { name: 'bare', label: 'bare Express (no auth)', traffic: 'cold', build: () => [] },
  { name: 'ours-hot', label: 'express-verified-user, hot (cache hits)', traffic: 'hot', build: ours({}) },
  { name: 'ours-cold', label: 'express-verified-user, cold (cache on)', traffic: 'cold', build: ours({}) },
  {
    name: 'ours-nocache',
    label: 'express-verified-user, cold, `cache: false`',
    traffic: 'cold',
    build: ours({ cache: false }),
  },
  { name: 'express-jwt', label: 'express-jwt', traffic: 'cold', build: expressJwt, unsupported: ['EdDSA'] },
  {
    name: 'express-jwt-best',
    label: 'express-jwt at its best (KeyObject)',
    traffic: 'cold',
    build: (ctx) => expressJwt({ ...ctx, parsed: true }),
    unsupported: ['EdDSA'],
  },
  { name: 'oauth2-bearer', label: 'express-oauth2-jwt-bearer', traffic: 'cold', build: oauth2Bearer },
  {
    name: 'passport-jwt',
    label: 'passport + passport-jwt',
    traffic: 'cold',
    build: passportJwt,
    unsupported: ['EdDSA'],
  },
  {
    name: 'passport-jwt-best',
    label: 'passport + passport-jwt at its best (KeyObject)',
    traffic: 'cold',
    build: (ctx) => passportJwt({ ...ctx, parsed: true }),
    unsupported: ['EdDSA'],
  },
  { name: 'fast-jwt', label: 'fast-jwt (cache on) in a thin middleware', traffic: 'cold', build: fastJwt },
  {
    name: 'limit',
    label: 'limit: raw signature check + payload JSON.parse only',
    traffic: 'cold',
    build: physicalLimit,
  },
  { name: 'floor', label: 'floor: one no-op middleware that sets req.auth', traffic: 'hot', build: noopMiddleware },
];

/**
 * The verification key as each README shows it: the secret string, or the public key's PEM; or, for a peer at its
 * best (`ctx.parsed`), the same key parsed once into a KeyObject (jsonwebtoken otherwise parses it per token).
 */
function keyMaterial(ctx) {
  if (ctx.parsed) {
    const crypto = require('node:crypto');
    return ctx.alg === 'HS256'
      ? crypto.createSecretKey(Buffer.from(ctx.keys.HS256.secret))
      : crypto.createPublicKey(ctx.keys[ctx.alg].publicKey);
  }
  return ctx.alg === 'HS256' ? ctx.keys.HS256.secret : ctx.keys[ctx.alg].publicKey;
}

function ours(extra) {
  return (ctx) => {
    const { createTokenAuth } = require(ctx.dist);
    const key = ctx.alg === 'HS256' ? { secret: ctx.keys.HS256.secret } : { publicKey: ctx.keys[ctx.alg].publicKey };
    const auth = createTokenAuth({ key, issuer: ctx.issuer, audience: ctx.audience, ...extra });
    return [auth.requireVerifiedUser(['identify'])];
  };
}

function expressJwt(ctx) {
  const { expressjwt } = require('express-jwt');
  return [expressjwt({ secret: keyMaterial(ctx), algorithms: [ctx.alg], issuer: ctx.issuer, audience: ctx.audience })];
}

function oauth2Bearer(ctx) {
  const { auth } = require('express-oauth2-jwt-bearer');
  const key = ctx.alg === 'HS256' ? { secret: ctx.keys.HS256.secret } : { publicKey: ctx.keys[ctx.alg].publicKey };
  return [auth({ issuer: ctx.issuer, audience: ctx.audience, tokenSigningAlg: ctx.alg, ...key })];
}

function passportJwt(ctx) {
  const passport = require('passport');
  const { Strategy, ExtractJwt } = require('passport-jwt');
  passport.use(
    new Strategy(
      {
        jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
        secretOrKey: keyMaterial(ctx),
        issuer: ctx.issuer,
        audience: ctx.audience,
        algorithms: [ctx.alg],
      },
      (payload, done) => done(null, payload),
    ),
  );
  return [passport.initialize(), passport.authenticate('jwt', { session: false })];
}

function fastJwt(ctx) {
  const { createVerifier } = require('fast-jwt');
  const verify = createVerifier({
    key: keyMaterial(ctx),
    algorithms: [ctx.alg],
    allowedIss: ctx.issuer,
    allowedAud: ctx.audience,
    cache: true,
  });
  // The thinnest middleware: Bearer prefix, synchronous verify, claims on req.auth.
  return [
    function fastJwtAuth(req, res, next) {
      const header = req.headers.authorization;
      if (typeof header !== 'string' || !header.startsWith('Bearer ')) {
        res.status(401).json({ status: 'error', message: 'Missing access token' });
        return;
      }
      try {
        req.auth = verify(header.slice(7));
      } catch {
        res.status(401).json({ status: 'error', message: 'Invalid access token' });
        return;
      }
      next();
    },
  ];
}

/**
 * Not a verifier: the least any verifier must do for a new token, in the thinnest middleware: node:crypto's
 * signature check on the signing input, and JSON.parse of the payload. No header, alphabet, time, issuer,
 * audience or shape checks, no cache. The ceiling for cold traffic on this machine.
 */
function physicalLimit(ctx) {
  const { rawSignatureCheck } = require('./fixtures');
  const good = rawSignatureCheck(ctx.alg, ctx.keys);
  return [
    function rawCheck(req, res, next) {
      const token = (req.headers.authorization ?? '').slice(7);
      const first = token.indexOf('.');
      const second = token.lastIndexOf('.');
      try {
        if (!good(token, second)) throw new Error('signature');
        req.auth = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString());
      } catch {
        res.status(401).json({ status: 'error', message: 'Invalid access token' });
        return;
      }
      next();
    },
  ];
}

/** Not a verifier: the cost of any auth middleware at all (one more Express layer, one more property on req). */
function noopMiddleware() {
  const claims = { sub: 'nobody' };
  return [
    function noop(req, _res, next) {
      req.auth = claims;
      next();
    },
  ];
}

module.exports = { SCENARIOS, ROUTE, BODY };
