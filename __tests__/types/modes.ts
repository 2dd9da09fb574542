// What each claims mode lets a strict consumer write. Every `@ts-expect-error` marks code that would throw at run
// time on a token the mode accepts; the typecheck fails if any of them stops being an error (see types.test.ts).
import express from 'express';
import { createTokenAuth, type AccessTokenClaims, type JwtClaims, type VerifiedClaims } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';

const app = express();
const key = { secret: process.env.TOKEN_SECRET ?? '' };

const jwt = createTokenAuth({ key, issuer: 'https://issuer.example', audience: 'api', claims: 'jwt' });
app.get('/jwt', jwt.requireVerifiedUser(['read']), (req, res) => {
  const claims: JwtClaims = jwt.claims(req);
  const exp: number = claims.exp;
  // RFC 7519 §4.1: each registered claim has its type when present (a token whose claim has another is refused).
  const registered: [string | undefined, string | undefined, string | string[] | undefined, string | undefined] = [
    claims.iss,
    claims.sub,
    claims.aud,
    claims.jti,
  ];
  const times: Array<number | undefined> = [claims.iat, claims.nbf];
  // @ts-expect-error 'jwt' mode does not guarantee a `sub`: RFC 7519 makes it optional.
  const who: string = claims.sub;
  // @ts-expect-error a `sub` is a string, never a number.
  const numbered: number | undefined = claims.sub;
  // @ts-expect-error req.auth is typed by every mode, and Shape B's `sub` may be null.
  const authSub: string | undefined = req.auth!.sub;
  // @ts-expect-error 'jwt' mode does not guarantee Shape B's scopes: a token with `scope` instead has none.
  const count: number = claims.scopes.length;
  // @ts-expect-error nor does the global req.auth, whatever the mode.
  const alsoCount: number = req.auth!.scopes.length;
  // @ts-expect-error 'jwt' mode does not guarantee Shape B's providers.
  const discord = claims.providers.discord;
  res.json({ exp, registered, times, who, numbered, authSub, count, alsoCount, discord });
});

const at = createTokenAuth({ key, issuer: 'https://issuer.example', audience: 'api', claims: 'at+jwt' });
app.get('/at', at.requireVerifiedUser(), (req, res) => {
  const claims: AccessTokenClaims = at.claims(req);
  const who: string = claims.sub;
  const client: string = claims.client_id;
  const id: string = claims.jti;
  // @ts-expect-error RFC 9068 does not require `scope`, so 'at+jwt' does not guarantee it.
  const scope: string = claims.scope;
  res.json({ who, client, id, scope });
});

const strict = createTokenAuth({ key, issuer: 'https://issuer.example', audience: 'api' });
export async function strictVerify(token: string): Promise<number> {
  const claims: VerifiedClaims = await strict.verify(token);
  // @ts-expect-error Shape B keeps its own `sub`: a string or null.
  const sub: string | undefined = claims.sub;
  return claims.scopes.length + (sub?.length ?? 0);
}

export async function jwtVerify(token: string): Promise<unknown> {
  const claims = await jwt.verify(token);
  // @ts-expect-error verify() in 'jwt' mode is typed by that mode too.
  return claims.metadata.createdAt;
}

// Hooks see the claims of their own mode.
createTokenAuth({
  key,
  issuer: false,
  audience: false,
  claims: 'at+jwt',
  validateClaims: (claims) => claims.client_id.startsWith('app-'),
  isRevoked: (claims) => claims.jti === 'revoked',
});
createTokenAuth({
  key,
  issuer: false,
  audience: false,
  claims: 'jwt',
  // @ts-expect-error 'jwt' mode does not guarantee a string `client_id`.
  validateClaims: (claims) => claims.client_id.startsWith('app-'),
});

// A mode known only at run time gives the weakest type of the modes it may be.
const mode = process.env.TOKEN_CLAIMS === 'jwt' ? 'jwt' : 'strict';
const either = createTokenAuth({ key, issuer: false, audience: false, claims: mode });
export async function eitherVerify(token: string): Promise<unknown> {
  const claims = await either.verify(token);
  // @ts-expect-error either mode may be in force, and only 'strict' has Shape B's scopes.
  return claims.scopes.length;
}

// A profile resolver sees the claims of its TokenAuth's mode.
app.use(
  '/strict',
  strict.verifyRouter({
    resolveProfile: (claims) => {
      const google = claims.providers.google;
      return google === undefined
        ? undefined
        : {
            status: 'success',
            user: { id: google.id, name: google.name, email: google.email, picture: google.picture },
          };
    },
  }),
);
app.use(
  '/jwt',
  jwt.verifyRouter({
    resolveProfile: (claims) => ({
      status: 'success',
      // @ts-expect-error 'jwt' mode does not guarantee Shape B's providers.
      user: { id: claims.providers.google.id, name: 'n', email: 'e', picture: 'p' },
    }),
  }),
);

// A route's `allow` sees the claims of its TokenAuth's mode, and so does a tool's in requireMcpAuth.
app.get('/doc/:owner', at.requireVerifiedUser([], { allow: (claims, req) => claims.sub === req.params.owner }));
app.get('/linked', strict.requireVerifiedUser([], { allow: (claims) => claims.providers.discord !== undefined }));
jwt.requireVerifiedUser([], {
  // @ts-expect-error 'jwt' mode does not guarantee a string `client_id`.
  allow: (claims) => claims.client_id.startsWith('app-'),
});
requireMcpAuth(at, { tools: { deploy: { roles: ['ops'], allow: (claims) => claims.client_id.startsWith('app-') } } });
requireMcpAuth(jwt, {
  tools: {
    deploy: {
      // @ts-expect-error nor in a tool's requirement.
      allow: (claims) => claims.client_id.startsWith('app-'),
    },
  },
});
