/**
 * The shortcuts the hot path takes (bench/ measures them) must not change an answer: the alphabet check left to
 * a cache miss, the memo of the last flat JOSE header, and the cache keyed by the token's SHA-256.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, TokenAuthError, type TokenAuthOptions } from '../../lib';
import { alphabetFault, bearerCredential, extractBearer } from '../../lib/extract/bearer';
import type { JwsHeader } from '../../lib/jose/jws';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, b64, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };
const secretKey = createSecretKey(Buffer.from(SECRET));

describe('bearerCredential and alphabetFault', () => {
  it('together answer exactly as extractBearer does', () => {
    const token = sign(shapeB(NOW));
    const headers = [
      undefined,
      '',
      'Basic abc',
      'Bearer',
      'Bearer ',
      `Bearer ${token}`,
      `bearer   ${token}  `,
      `BEARER ${token}`,
      `Bearerx ${token}`,
      'Bearer a+b.c.d',
      'Bearer a b',
      `Bearer ${'x'.repeat(700)}`,
      'Bearer \u00a0abc',
      ['Bearer a', 'Bearer b'],
    ];
    for (const header of headers) {
      const credential = bearerCredential(header, 600);
      const composed = typeof credential === 'string' ? (alphabetFault(credential, 'jws') ?? credential) : credential;
      const direct = extractBearer(header, 600, 'jws');
      if (direct instanceof TokenAuthError) {
        expect(composed).toBeInstanceOf(TokenAuthError);
        expect((composed as TokenAuthError).reason).toBe(direct.reason);
      } else {
        expect(composed).toBe(direct);
      }
    }
  });
});

describe.each(EXPRESS_VERSIONS)('the alphabet check on a cache miss only, through %s', (_name, express) => {
  function app(options: Partial<TokenAuthOptions> = {}) {
    const auth = createTokenAuth({ ...base, ...options });
    const server = express();
    server.get('/me', auth.requireVerifiedUser(), (req, res) => {
      res.json(req.auth);
    });
    return { auth, server };
  }

  it('still refuses a token with a character outside base64url, before any decoding, with or without a cache', async () => {
    for (const options of [{}, { cache: false as const }]) {
      const { auth, server } = app(options);
      const good = sign(shapeB(NOW));
      // Twice: a success enters the cache on its second sighting.
      for (let i = 0; i < 2; i++) await request(server).get('/me').set('Authorization', `Bearer ${good}`).expect(200);
      for (const bad of [`${good}!`, good.replace('.', '+'), `${good.slice(0, 20)}~${good.slice(21)}`]) {
        const res = await request(server).get('/me').set('Authorization', `Bearer ${bad}`).expect(401);
        expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
      }
      // Faults of syntax are never remembered: only the good token's entry is held.
      expect(auth.stats().size).toBe(options.cache === false ? 0 : 1);
    }
  });

  it('answers a cached token again from the cache (stored on its second sighting)', async () => {
    const { auth, server } = app();
    const good = sign(shapeB(NOW));
    for (let i = 0; i < 4; i++) await request(server).get('/me').set('Authorization', `Bearer ${good}`).expect(200);
    expect(auth.stats()).toMatchObject({ hits: 2, size: 1 });
  });
});

describe('the memo of the last flat header', () => {
  it('gives every token its own header object, so a resolver that changes one changes no other', async () => {
    const seen: JwsHeader[] = [];
    const resolver = (header: JwsHeader): KeyObject => {
      seen.push({ ...header });
      header.kid = 'changed';
      header.extra = 'added';
      return secretKey;
    };
    const auth = createTokenAuth({ ...base, key: resolver, algorithms: ['HS256'], cache: false });
    const token = sign(shapeB(NOW), SECRET, 'HS256', { kid: 'k1' });
    for (let i = 0; i < 3; i++) await auth.verify(token);
    await auth.verify(sign(shapeB(NOW), SECRET, 'HS256', { kid: 'k1' }));
    expect(seen).toEqual(Array(4).fill({ alg: 'HS256', typ: 'JWT', kid: 'k1' }));
  });

  it('decodes a header holding objects afresh for every token', async () => {
    const seen: JwsHeader[] = [];
    const resolver = (header: JwsHeader): KeyObject => {
      seen.push(header);
      (header.x5c as string[]).push('changed');
      return secretKey;
    };
    const auth = createTokenAuth({ ...base, key: resolver, algorithms: ['HS256'], cache: false });
    const token = sign(shapeB(NOW), SECRET, 'HS256', { x5c: ['a'] });
    await auth.verify(token);
    await auth.verify(token);
    expect(seen.map((h) => h.x5c)).toEqual([
      ['a', 'changed'],
      ['a', 'changed'],
    ]);
    expect(seen[0]).not.toBe(seen[1]);
  });

  it('never lets the memo answer for a header that differs, even by one character', async () => {
    const auth = createTokenAuth(base);
    const good = sign(shapeB(NOW));
    await auth.verify(good);
    const [, payload, signature] = good.split('.');
    const relabelled = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`;
    expect((await rejection(auth.verify(relabelled))).code).toBe('invalid_token');
    const noTyp = `${b64({ alg: 'HS256' })}.${payload}.${signature}`;
    expect((await rejection(auth.verify(noTyp))).code).toBe('invalid_token');
  });
});

describe('the cache keyed by SHA-256', () => {
  it('holds one entry per distinct token and answers each with its own claims', async () => {
    const auth = createTokenAuth(base);
    const claims = [shapeB(NOW), shapeB(NOW), shapeB(NOW)];
    const tokens = claims.map((c) => sign(c));
    // Round 1 sights each token, round 2 stores it (second sighting), round 3 is answered from the cache.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < tokens.length; i++) await expect(auth.verify(tokens[i])).resolves.toEqual(claims[i]);
    }
    expect(auth.stats()).toMatchObject({ size: 3, hits: 3, misses: 6 });
  });
});
