// Verified claims are deep-frozen at run time, so their types are read-only: each `@ts-expect-error` marks a write
// that would throw a TypeError (see __tests__/http/frozen-claims.test.ts).
import express from 'express';
import { createTokenAuth, type VerifiedClaims } from '../../lib';

const auth = createTokenAuth({
  key: { secret: process.env.TOKEN_SECRET ?? '' },
  issuer: 'https://issuer.example',
  audience: 'api',
});
const app = express();

app.get('/me', auth.requireVerifiedUser(), (req, res) => {
  // @ts-expect-error req.auth is read-only: keep your own data on res.locals.
  req.auth!.tenant = 'acme';
  const claims = auth.claims(req);
  // @ts-expect-error so is what auth.claims(req) returns.
  claims.jti = 'other';
  const copy: VerifiedClaims = { ...claims, scopes: [...claims.scopes, 'mine'] }; // a copy of your own is yours
  res.locals.user = copy;
  res.json(req.auth);
});

export async function check(token: string): Promise<string[]> {
  const claims = await auth.verify(token);
  // @ts-expect-error and what verify() resolves with.
  claims.scopes = [];
  return claims.scopes;
}
