// A consumer compiled without strictNullChecks (TypeScript without `strict`, JavaScript with checkJs): each mode's
// claims are typed as under `strict`, never `unknown` (see __tests__/types.test.ts). The `@ts-expect-error` lines
// prove the types are not `any` either.
import express from 'express';
import { createTokenAuth } from '../../lib';
import { createRedisStore } from '../../lib/redis';
import type { AccessTokenClaims, JwtClaims, VerifiedClaims } from '../../lib';

declare const req: express.Request;
declare const redisClient: Parameters<typeof createRedisStore>[0];
const store = createRedisStore(redisClient);

// No `claims` and a key: 'strict', Shape B.
const shapeB = createTokenAuth({ key: { secret: 's' }, issuer: false, audience: false });
export const strictClaims: Readonly<VerifiedClaims> = shapeB.claims(req);
export const jti: string = shapeB.claims(req).jti;
export const revoked: Promise<void> = store.revoke(shapeB.claims(req));

// No `claims` and issuerBaseURL: 'jwt'.
const discovered = createTokenAuth({ issuerBaseURL: 'https://issuer.example', audience: 'api' });
export const jwtClaims: Readonly<JwtClaims> = discovered.claims(req);
export const jwtSub: string | undefined = discovered.claims(req).sub;
// @ts-expect-error in 'jwt' mode `client_id` is unknown, not any
export const unknownClientId: string = discovered.claims(req).client_id;
export const revokedToo: Promise<void> = store.revoke(discovered.claims(req));

// claims: 'at+jwt' given.
const rfc9068 = createTokenAuth({ key: { secret: 's' }, issuer: false, audience: false, claims: 'at+jwt' });
export const accessClaims: Readonly<AccessTokenClaims> = rfc9068.claims(req);
export const clientId: string = rfc9068.claims(req).client_id;
export const verified: Promise<Readonly<VerifiedClaims>> = shapeB.verify('token');
