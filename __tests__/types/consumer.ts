// A consumer of the public API: this file must type-check under strict mode (see types.test.ts).
import express from 'express';
import { createTokenAuth, TokenAuthError, type ErrorBody, type VerifiedClaims } from '../../lib';

const auth = createTokenAuth({ key: { secret: process.env.TOKEN_SECRET ?? '' }, issuer: 'auth.example.com', audience: false });
const app = express();

app.get('/me', auth.requireVerifiedUser(['email']), (req, res) => {
  const claims: VerifiedClaims | undefined = req.auth;
  const email: string | undefined = req.auth?.providers.google?.email;
  const avatar: string | null | undefined = req.auth?.providers.discord?.avatar;
  const scopes: string[] | undefined = claims?.scopes;
  const created: string | undefined = req.auth?.metadata.createdAt;
  res.json({ email, avatar, scopes, created });
});

app.get('/maybe', auth.optionalVerifiedUser(), (req, res) => {
  res.json({ signedIn: req.auth !== undefined });
});

export async function check(token: string): Promise<ErrorBody | VerifiedClaims> {
  try {
    return await auth.verify(token);
  } catch (err) {
    if (err instanceof TokenAuthError) return err.toJSON();
    throw err;
  }
}
