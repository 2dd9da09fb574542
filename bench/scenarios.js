'use strict';
// Every load scenario: how its Express 5 app authenticates `GET /me`. Each peer is set up as its own README
// recommends, with the same keys (PEM or secret string, as the README shows), issuer and audience checks on.
// Every app answers the same route with the same body; failures are 401 (never counted as throughput).

/** The one route and body every scenario serves. */
const ROUTE = '/me';
const BODY = { ok: true };

/** Load shapes: `hot` sends one token again and again; `cold` walks the 20 000-token pool, a new token each request. */
const SCENARIOS = [
  { name: 'bare', label: 'bare Express (no auth)', traffic: 'cold', build: () => [] },
  { name: 'ours-hot', label: 'express-verified-user, hot (cache hits)', traffic: 'hot', build: ours({}) },
  { name: 'ours-cold', label: 'express-verified-user, cold (cache on)', traffic: 'cold', build: ours({}) },
  { name: 'ours-nocache', label: 'express-verified-user, cold, `cache: false`', traffic: 'cold', build: ours({ cache: false }) },
  { name: 'express-jwt', label: 'express-jwt', traffic: 'cold', build: expressJwt },
  { name: 'oauth2-bearer', label: 'express-oauth2-jwt-bearer', traffic: 'cold', build: oauth2Bearer },
  { name: 'passport-jwt', label: 'passport + passport-jwt', traffic: 'cold', build: passportJwt },
  { name: 'fast-jwt', label: 'fast-jwt (cache on) in a thin middleware', traffic: 'cold', build: fastJwt },
];

/** The verification key as each README shows it: the secret string, or the public key's PEM. */
function keyMaterial(ctx) {
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
  passport.use(new Strategy({
    jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
    secretOrKey: keyMaterial(ctx),
    issuer: ctx.issuer,
    audience: ctx.audience,
    algorithms: [ctx.alg],
  }, (payload, done) => done(null, payload)));
  return [passport.initialize(), passport.authenticate('jwt', { session: false })];
}

function fastJwt(ctx) {
  const { createVerifier } = require('fast-jwt');
  const verify = createVerifier({ key: keyMaterial(ctx), algorithms: [ctx.alg], allowedIss: ctx.issuer, allowedAud: ctx.audience, cache: true });
  // The thinnest middleware: Bearer prefix, synchronous verify, claims on req.auth.
  return [function fastJwtAuth(req, res, next) {
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
  }];
}

module.exports = { SCENARIOS, ROUTE, BODY };
