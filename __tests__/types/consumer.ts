// A consumer of the public API: this file must type-check under strict mode (see types.test.ts).
import express from 'express';
import { createTokenAuth, TokenAuthError, type ErrorBody, type VerifiedClaims } from '../../lib';

const auth = createTokenAuth({
  key: { secret: process.env.TOKEN_SECRET ?? '' },
  issuer: 'auth.example.com',
  audience: false,
});
const app = express();

app.get('/me', auth.requireVerifiedUser(['email']), (req, res) => {
  // A strict TokenAuth types its own claims as Shape B; the global req.auth only as what every mode guarantees.
  const claims: VerifiedClaims = auth.claims(req);
  const email: string | undefined = claims.providers.google?.email;
  const avatar: string | null | undefined = claims.providers.discord?.avatar;
  const scopes: string[] = claims.scopes;
  const created: string = claims.metadata.createdAt;
  const expires: number | undefined = req.auth?.exp;
  res.json({ email, avatar, scopes, created, expires });
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
