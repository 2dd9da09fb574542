/**
 * Hostile input, part 5: the verify endpoint (verifyRouter). The same forged tokens as the middleware suites,
 * answered 401 with the exact body, challenge and `Cache-Control: no-store`; the token is judged before any
 * other part of the request (RFC 6750 §3.1); query-string and method tricks change nothing.
 */
import type { Server } from 'node:http';
import request from 'supertest';
import { createTokenAuth } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { b64, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { answerOf, closeServer, HS256_OPTIONS, listen, rawRequest, rawToken, refusal, withSegment } from './harness';

const PATH = '/api/auth/@users/verify';
const claims = shapeB(NOW);
const genuine = sign(claims);
const [h, p, s] = genuine.split('.');

const FORGED: Array<[string, string]> = [
  ['alg none', `${b64({ alg: 'none' })}.${p}.`],
  ['alg None with the genuine signature', `${b64({ alg: 'None' })}.${p}.${s}`],
  ['a stripped signature', `${h}.${p}.`],
  ['a tampered payload', withSegment(genuine, 1, b64(shapeB(NOW, { scopes: ['identify', 'admin'] })))],
  ['a spliced signature', withSegment(sign(shapeB(NOW, { sub: 'admin' })), 2, s)],
  ['a relabelled alg', withSegment(genuine, 0, b64({ alg: 'HS512', typ: 'JWT' }))],
  ['a guessed secret', rawToken('{"alg":"HS256"}', JSON.stringify(claims), 'secret')],
  ['crit', sign(claims, SECRET, 'HS256', { crit: ['x'], x: 1 })],
  ['a payload that is an array', rawToken('{"alg":"HS256"}', JSON.stringify([claims]))],
  ['a 2-part token', `${h}.${p}`],
  ['a padded segment', `${h}.${p}.${s}=`],
];

describe.each(EXPRESS_VERSIONS)('verifyRouter under attack through %s', (_name, express) => {
  let server: Server;
  let profileAsked = 0;
  beforeAll(async () => {
    const auth = createTokenAuth({ ...HS256_OPTIONS, claims: 'strict' });
    const app = express();
    app.use(
      '/api',
      auth.verifyRouter({
        resolveProfile: (c) => {
          profileAsked++;
          const google = c.providers.google ?? { id: '', name: '', email: '', picture: '' };
          return {
            status: 'success',
            user: { id: google.id, name: google.name, email: google.email, picture: google.picture },
          };
        },
      }),
    );
    server = await listen(app);
  });
  afterAll(() => closeServer(server));

  it('answers the genuine token with its claims (control)', async () => {
    const res = await request(server).get(PATH).set('Authorization', `Bearer ${genuine}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(claims);
  });

  it.each(FORGED)('answers 401 invalid_token, no-store, for %s on GET and POST', async (_case, token) => {
    for (const req of [request(server).get(PATH), request(server).post(PATH).send({})]) {
      const res = await req.set('Authorization', `Bearer ${token}`);
      expect(answerOf(res)).toEqual(refusal('invalid'));
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('judges the token before the view: a forged token with view=bogus or view=profile is 401, and no profile is built', async () => {
    const before = profileAsked;
    for (const query of ['view=bogus', 'view=profile', 'view=claims&view=profile', 'view[]=claims', 'view=__proto__']) {
      const res = await request(server).get(`${PATH}?${query}`).set('Authorization', `Bearer ${FORGED[0][1]}`);
      expect(answerOf(res)).toEqual(refusal('invalid'));
    }
    expect(profileAsked).toBe(before);
  });

  it.each([
    ['a repeated view', 'view=claims&view=claims'],
    ['conflicting views', 'view=claims&view=profile'],
    ['a prototype name', 'view=__proto__'],
    ['a view with a NUL', 'view=claims%00'],
    ['an upper-case view', 'view=CLAIMS'],
  ])('answers 400 for %s with a genuine token (query parsers cannot be steered)', async (_case, query) => {
    const res = await request(server).get(`${PATH}?${query}`).set('Authorization', `Bearer ${genuine}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 'error', message: 'Invalid view: use view=claims or view=profile' });
  });

  it.each([
    ['array syntax', 'view[]=profile'],
    ['object syntax', 'view[a]=profile'],
    ['a nested key', 'view.x=profile'],
  ])(
    'does not read view=profile from %s (Express 4 qs would): the default claims view answers',
    async (_case, query) => {
      const before = profileAsked;
      const res = await request(server).get(`${PATH}?${query}`).set('Authorization', `Bearer ${genuine}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(claims);
      expect(profileAsked).toBe(before);
    },
  );

  it('does not read a token from the query string or body (access_token), nor honour method-override headers', async () => {
    const query = await request(server).get(`${PATH}?access_token=${genuine}`);
    expect(answerOf(query)).toEqual(refusal('missing'));
    const body = await request(server).post(PATH).type('form').send({ access_token: genuine });
    expect(answerOf(body)).toEqual(refusal('missing'));
    const overridden = await request(server)
      .delete(PATH)
      .set('X-HTTP-Method-Override', 'GET')
      .set('Authorization', `Bearer ${genuine}`);
    expect(overridden.status).toBe(405);
    expect(overridden.headers.allow).toBe('GET, HEAD, POST');
  });

  it('refuses two Authorization fields at the endpoint too', async () => {
    const res = await rawRequest(
      server,
      `GET ${PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${genuine}\r\nAuthorization: Bearer ${FORGED[0][1]}\r\nConnection: close\r\n\r\n`,
    );
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toEqual(refusal('invalid').body);
  });

  it('answers path variants the same way, and never with HTML', async () => {
    for (const path of ['/api/auth/%40users/verify', '/api/AUTH/@users/verify/', '/api/auth/@users/verify?']) {
      const res = await request(server).get(path).set('Authorization', `Bearer ${FORGED[0][1]}`);
      expect(answerOf(res)).toEqual(refusal('invalid'));
    }
  });
});
