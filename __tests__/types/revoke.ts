// A logout route on an issuer found by discovery (`issuerBaseURL`: claims: 'jwt' by default, where `jti` is
// `string | undefined`: a token may have none), as README and docs/fleet.md show it. The `@ts-expect-error` marks the old snippet, which does not
// compile in this mode (see __tests__/types.test.ts).
import express from 'express';
import { createTokenAuth, errorHandler } from '../../lib';
import { createRedisStore } from '../../lib/redis';

declare const redisClient: Parameters<typeof createRedisStore>[0];

const store = createRedisStore(redisClient);
const auth = createTokenAuth({ issuerBaseURL: 'https://issuer.example', audience: 'api', revocation: store });
const app = express();

app.post('/logout', auth.requireVerifiedUser(), (req, res, next) => {
  store.revoke(auth.claims(req)).then(() => res.sendStatus(204), next);
});

app.post('/logout-by-jti', auth.requireVerifiedUser(), (req, res, next) => {
  const claims = auth.claims(req);
  // @ts-expect-error in 'jwt' mode a token may have no `jti`: revoke(claims) checks it at run time instead.
  store.revoke(claims.jti, claims.exp).then(() => res.sendStatus(204), next);
});

app.use(errorHandler());
