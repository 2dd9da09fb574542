/**
 * Hostile input to `events.router()`: SETs (RFC 8417, SSF 1.0 §4.1) and logout tokens (Back-Channel Logout 1.0 §2.6)
 * that must be refused, each with the RFC 8935 / §2.8 answer that names its rule and no rule stored; through Express
 * 4 and 5. Nothing a sender sent (a SET, the push authorization) appears in an answer, a report or a channel message.
 */
import * as diagnostics from 'node:diagnostics_channel';
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  createTokenAuth,
  SECURITY_EVENT_CHANNEL,
  type SecurityEvents,
  type TokenAuth,
  type TokenAuthError,
} from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { sign } from '../fixtures/issuer';
import { recordingStore, type RecordingStore } from '../fixtures/rule-store';
import { keycloakSubjects, RISC, startSsfTransmitter, type SsfTransmitter } from '../fixtures/ssf-transmitter';

const AUTHORIZATION = `Bearer ${randomBytes(24).toString('base64url')}`;
const AUDIENCE = 'https://api.example.test';
const OP = 'https://op.example.test';
const CLIENT = 'orders-api';
const op = generateKeyPairSync('rsa', { modulusLength: 2048 });
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

function logoutClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: OP,
    aud: CLIENT,
    iat: now(),
    exp: now() + 120,
    jti: randomBytes(12).toString('hex'),
    sub: 'user-7',
    sid: 'sid-7',
    events: { [LOGOUT_EVENT]: {} },
    ...overrides,
  };
}
const logoutToken = (claims: Record<string, unknown>, header: Record<string, unknown> = { typ: 'logout+jwt' }) =>
  sign(claims, op.privateKey, 'RS256', header);

describe.each(EXPRESS_VERSIONS)('events.router() under attack through %s', (_name, express) => {
  let transmitter: SsfTransmitter;
  let store: RecordingStore;
  let auth: TokenAuth;
  let events: SecurityEvents;
  let app: ReturnType<typeof express>;
  const reports: TokenAuthError[] = [];
  const messages: unknown[] = [];
  const listener = (message: unknown) => messages.push(message);

  beforeAll(async () => {
    transmitter = await startSsfTransmitter({ criticalSubjectMembers: ['tenant'] });
    store = recordingStore();
    auth = createTokenAuth({
      key: { publicKey: op.publicKey },
      issuer: OP,
      audience: 'api',
      revocation: store as never,
      maxLifetime: '1h',
      onError: (err) => reports.push(err),
    });
    events = auth.securityEvents({
      transmitters: [{ issuer: transmitter.issuer, audience: AUDIENCE, push: { authorization: AUTHORIZATION } }],
      backchannelLogout: { issuer: OP, clientId: CLIENT },
    });
    app = express();
    app.use('/events', events.router());
    diagnostics.subscribe(SECURITY_EVENT_CHANNEL, listener);
  });

  afterAll(async () => {
    diagnostics.unsubscribe(SECURITY_EVENT_CHANNEL, listener);
    await events.close();
    auth.close();
    await transmitter.close();
  });

  const push = (body: string, headers: Record<string, string> = {}) =>
    request(app)
      .post('/events')
      .set({ 'Content-Type': 'application/secevent+jwt', Authorization: AUTHORIZATION, ...headers })
      .send(body);
  const claims = (overrides: Record<string, unknown> = {}) => ({
    jti: randomBytes(12).toString('hex'),
    iss: transmitter.issuer,
    iat: now(),
    aud: AUDIENCE,
    sub_id: keycloakSubjects.user(OP, 'victim'),
    events: { [`${RISC}account-disabled`]: {} },
    ...overrides,
  });
  const storedFor = (sub: string) => store.stored.some((rule) => 'sub' in rule && rule.sub === sub);

  it('takes a genuine SET (the control: every refusal below differs from it in one rule)', async () => {
    // The user's tokens come from the OP, not from the transmitter: the rule names the OP's issuer.
    const answer = await push(transmitter.sign(claims({ sub_id: keycloakSubjects.user(OP, 'genuine') })));
    expect(answer.status).toBe(202);
    expect(storedFor('genuine')).toBe(true);
  });

  const refusals: Array<[string, () => string, string, number?]> = [
    [
      'from an issuer that is no configured transmitter',
      () => transmitter.sign(claims({ iss: 'https://other.example.test' })),
      'invalid_issuer',
    ],
    [
      'addressed to another audience',
      () => transmitter.sign(claims({ aud: 'https://other-api.example.test' })),
      'invalid_audience',
    ],
    ['with alg none', () => `${b64({ alg: 'none', typ: 'secevent+jwt' })}.${b64(claims())}.`, 'invalid_request'],
    [
      'signed with a secret (HS256)',
      () => {
        const input = `${b64({ alg: 'HS256', typ: 'secevent+jwt' })}.${b64(claims())}`;
        return `${input}.${createHmac('sha256', 'a-secret-that-is-long-enough-for-hs256!!').update(input).digest('base64url')}`;
      },
      'invalid_request',
    ],
    [
      'signed by a key the transmitter does not publish',
      () => transmitter.sign(claims(), { key: op.privateKey }),
      'invalid_key',
    ],
    ['with typ JWT', () => transmitter.sign(claims(), { header: { typ: 'JWT' } }), 'invalid_request'],
    ['with a sub claim', () => transmitter.sign(claims({ sub: 'victim' })), 'invalid_request'],
    ['with an exp claim', () => transmitter.sign(claims({ exp: now() + 600 })), 'invalid_request'],
    ['issued more than maxAge ago', () => transmitter.sign(claims({ iat: now() - 8 * 24 * 3600 })), 'invalid_request'],
    [
      'with an events claim that is no object',
      () => transmitter.sign(claims({ events: [`${RISC}account-disabled`] })),
      'invalid_request',
    ],
    ['with no event', () => transmitter.sign(claims({ events: {} })), 'invalid_request'],
    ['that is not a JWS', () => 'this is not a security event token', 'invalid_request'],
    ['larger than 64 KiB', () => transmitter.sign(claims({ padding: 'x'.repeat(70_000) })), 'invalid_request', 413],
    [
      'with a critical subject member it cannot process (SSF 1.0 §3.6)',
      () =>
        transmitter.sign(
          claims({
            sub_id: {
              format: 'complex',
              user: keycloakSubjects.user(OP, 'victim'),
              tenant: { format: 'opaque', id: 't1' },
            },
          }),
        ),
      'invalid_request',
    ],
  ];

  it.each(refusals)('refuses a SET %s, storing nothing', async (_what, make, err, status = 400) => {
    const count = store.stored.length;
    const answer = await push(make());
    expect(answer.status).toBe(status);
    expect(answer.headers['content-language']).toBe('en');
    expect(answer.body.err).toBe(err);
    expect(store.stored.length).toBe(count);
  });

  it('refuses a SET without the push Authorization value, or with another one: 400 authentication_failed', async () => {
    const set = transmitter.sign(claims({ sub_id: keycloakSubjects.user(OP, 'unauthorized') }));
    const missing = await request(app).post('/events').set('Content-Type', 'application/secevent+jwt').send(set);
    const wrong = await push(set, { Authorization: `${AUTHORIZATION}x` });
    expect([missing.status, missing.body.err]).toEqual([400, 'authentication_failed']);
    expect([wrong.status, wrong.body.err]).toEqual([400, 'authentication_failed']);
    expect(storedFor('unauthorized')).toBe(false);
  });

  it('refuses a body of another content type: 415', async () => {
    const answer = await push(transmitter.sign(claims()), { 'Content-Type': 'application/json' });
    expect([answer.status, answer.body.err]).toEqual([415, 'invalid_request']);
  });

  it('acknowledges an event whose subject no rule can name (an email with no claim mapped, a phone number)', async () => {
    const count = store.stored.length;
    const email = await push(transmitter.sign(claims({ sub_id: { format: 'email', email: 'victim@example.test' } })));
    const phone = await push(
      transmitter.sign(claims({ sub_id: { format: 'phone_number', phone_number: '+12065550100' } })),
    );
    expect([email.status, phone.status]).toEqual([202, 202]);
    expect(store.stored.length).toBe(count);
    expect(reports.filter((err) => err.reason === 'subject-unmapped').length).toBeGreaterThanOrEqual(2);
  });

  it('stores a rule for a flood of forged SETs interleaved with one genuine SET: the genuine one applies', async () => {
    const forged = Array.from({ length: 300 }, (_, i) =>
      i % 2 === 0
        ? push(transmitter.sign(claims(), { key: op.privateKey }))
        : push(transmitter.sign(claims()), { Authorization: 'Bearer guessed' }),
    );
    const genuine = push(transmitter.sign(claims({ sub_id: keycloakSubjects.user(OP, 'during-flood') })));
    const answers = await Promise.all([...forged, genuine]);
    expect(answers.at(-1)?.status).toBe(202);
    expect(answers.slice(0, -1).every((answer) => answer.status === 400)).toBe(true);
    expect(storedFor('during-flood')).toBe(true);
  });

  it("takes a SET and a logout token whose bodies the app's own parsers read first", async () => {
    const parsed = express();
    // The factory is the version's module itself, with its body parsers.
    const own = express as unknown as typeof import('express');
    parsed.use(own.json(), own.urlencoded({ extended: false }), own.text({ type: 'application/secevent+jwt' }));
    parsed.use('/events', events.router());
    const set = transmitter.sign(claims({ sub_id: keycloakSubjects.user(OP, 'parsed-set') }));
    const pushed = await request(parsed)
      .post('/events')
      .set({ 'Content-Type': 'application/secevent+jwt', Authorization: AUTHORIZATION })
      .send(set);
    const logout = await request(parsed)
      .post('/events')
      .type('form')
      .send({ logout_token: logoutToken(logoutClaims({ sid: 'sid-parsed' })) });
    expect([pushed.status, logout.status]).toEqual([202, 200]);
    expect(storedFor('parsed-set')).toBe(true);
    expect(store.stored).toContainEqual(expect.objectContaining({ rule: 'session', sid: 'sid-parsed' }));
  });

  describe('Back-Channel Logout on the same router', () => {
    const post = (token: string) => request(app).post('/events').type('form').send({ logout_token: token });

    it('stores a session rule for a logout token with sid and sub, answering 200 with no-store', async () => {
      const answer = await post(logoutToken(logoutClaims({ sid: 'sid-ok', sub: 'user-ok' })));
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(store.stored).toContainEqual(
        expect.objectContaining({ rule: 'session', iss: OP, sid: 'sid-ok', sub: 'user-ok' }),
      );
    });

    it('takes typ JWT (as Keycloak sends) and no typ, and a sub alone as a subject rule', async () => {
      expect((await post(logoutToken(logoutClaims({ sid: 'sid-jwt' }), { typ: 'JWT' }))).status).toBe(200);
      expect((await post(logoutToken(logoutClaims({ sid: undefined, sub: 'user-sub-only' }), {}))).status).toBe(200);
      expect(store.stored).toContainEqual(expect.objectContaining({ rule: 'subject', iss: OP, sub: 'user-sub-only' }));
    });

    const bad: Array<[string, () => string, string]> = [
      ['with a nonce', () => logoutToken(logoutClaims({ nonce: 'n-0S6_WzA2Mj' })), 'logout-nonce'],
      ['without exp', () => logoutToken(logoutClaims({ exp: undefined })), 'logout-exp-missing'],
      [
        'without the back-channel logout event',
        () => logoutToken(logoutClaims({ events: { 'urn:other': {} } })),
        'logout-event',
      ],
      [
        'without sid and sub',
        () => logoutToken(logoutClaims({ sid: undefined, sub: undefined })),
        'logout-no-sid-or-sub',
      ],
      ['with typ at+jwt', () => logoutToken(logoutClaims(), { typ: 'at+jwt' }), 'logout-typ'],
      [
        "from an issuer that is not this TokenAuth's",
        () => logoutToken(logoutClaims({ iss: 'https://other-op.example.test' })),
        'logout-issuer',
      ],
      ['for another client', () => logoutToken(logoutClaims({ aud: 'another-client' })), 'logout-audience'],
      [
        'signed by another key',
        () =>
          sign(logoutClaims(), generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, 'RS256', {
            typ: 'logout+jwt',
          }),
        'logout-signature',
      ],
      ['that is a SET', () => transmitter.sign(claims()), 'logout-typ'],
    ];

    it.each(bad)('refuses a logout token %s: 400 invalid_request, no rule', async (_what, make, reason) => {
      const count = store.stored.length;
      const answer = await post(make());
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        error: 'invalid_request',
        error_description: `The logout token was refused (${reason})`,
      });
      expect(store.stored.length).toBe(count);
    });

    it('acknowledges a replayed logout token without storing it again', async () => {
      const token = logoutToken(logoutClaims({ sid: 'sid-replayed' }));
      expect((await post(token)).status).toBe(200);
      const count = store.stored.length;
      expect((await post(token)).status).toBe(200);
      expect(store.stored.length).toBe(count);
    });
  });

  it('puts no SET, token or push authorization into an answer, a report or a channel message', async () => {
    const secretClaims = claims({ sub_id: keycloakSubjects.user(transmitter.issuer, 'leak-check') });
    const set = transmitter.sign(secretClaims, { key: op.privateKey });
    const answer = await push(set);
    const seen = JSON.stringify([answer.body, messages, reports.map((err) => [err.message, err.reason, err.hint])]);
    for (const part of [...set.split('.'), AUTHORIZATION.split(' ')[1]]) expect(seen).not.toContain(part);
    expect(messages.length).toBeGreaterThan(0);
  });
});

describe('events.router() on other methods and paths', () => {
  it('answers 405 with Allow: POST at its path, and leaves other paths to the app', async () => {
    const transmitter = await startSsfTransmitter();
    const auth = createTokenAuth({
      key: { publicKey: op.publicKey },
      issuer: OP,
      audience: 'api',
      revocation: recordingStore() as never,
      maxLifetime: '1h',
    });
    const events = auth.securityEvents({
      transmitters: [{ issuer: transmitter.issuer, audience: AUDIENCE, push: { authorization: AUTHORIZATION } }],
    });
    const app = EXPRESS_VERSIONS[0][1]();
    app.use('/events', events.router());
    app.get('/events/other', (_req, res) => {
      res.send('app');
    });
    try {
      const get = await request(app).get('/events');
      expect([get.status, get.headers.allow]).toEqual([405, 'POST']);
      expect((await request(app).get('/events/other')).text).toBe('app');
    } finally {
      await events.close();
      auth.close();
      await transmitter.close();
    }
  });
});
