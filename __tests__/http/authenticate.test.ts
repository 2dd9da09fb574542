// The pipeline of one request: the alphabet check of a token left to a cache miss, and there to the strict reader
// as it decodes each segment (shortcuts the hot path takes, measured in bench/), must never change an answer.
import request from 'supertest';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };

describe.each(EXPRESS_VERSIONS)('the alphabet check on a cache miss only, through %s', (_name, express) => {
  function app(options: Partial<TokenAuthOptions> = {}) {
    const auth = createTokenAuth({ ...base, ...options });
    return { auth, server: appWith(express, auth) };
  }

  it('still refuses a token with a character outside base64url, with or without a cache, and never remembers it', async () => {
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
