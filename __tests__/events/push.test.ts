import express from 'express';
import request from 'supertest';
import { errorHandler, type SecurityEvents } from '../../lib';
import { shapeB, sign } from '../fixtures/issuer';
import { listen, type Listening } from '../fixtures/listen';
import { startReceiver, streamCredentials, type Receiver } from '../fixtures/receiver';
import { storeFull, type RecordingStore } from '../fixtures/rule-store';
import { CAEP, keycloakSubjects, RISC, startSsfTransmitter, type SsfTransmitter } from '../fixtures/ssf-transmitter';

const PUSH_AUTHORIZATION = 'Bearer push-secret-of-the-receiver';

describe('securityEvents() by push (RFC 8935) from a Keycloak-shaped transmitter', () => {
  let transmitter: SsfTransmitter;
  let receiver: Receiver;
  let store: RecordingStore;
  let events: SecurityEvents;
  let app: Listening;

  beforeAll(async () => {
    transmitter = await startSsfTransmitter();
    const server = express();
    // The router's URL is only known once it listens: the stream is created with it.
    let router: express.RequestHandler = (_req, _res, next) => next();
    server.use('/security-events', (req, res, next) => router(req, res, next));
    app = await listen(server);
    receiver = startReceiver(transmitter, {
      push: { authorization: PUSH_AUTHORIZATION },
      stream: { ...streamCredentials(transmitter), endpointUrl: `${app.origin}/security-events` },
    });
    ({ store, events } = receiver);
    router = events.router();
    await events.ready();
  });

  afterAll(async () => {
    await receiver.close();
    await app.close();
    await transmitter.close();
  });

  it('creates the stream with its endpoint and Authorization value, and ready() waits for the verification', () => {
    expect(transmitter.stream?.delivery).toEqual({
      method: 'urn:ietf:rfc:8935',
      endpoint_url: `${app.origin}/security-events`,
      authorization_header: PUSH_AUTHORIZATION,
    });
    expect(events.stats().transmitters[0].stream).toMatchObject({ verified: true });
  });

  it('stores a session rule for a session-revoked SET and answers 202', async () => {
    const set = transmitter.set(
      `${CAEP}session-revoked`,
      keycloakSubjects.session(transmitter.issuer, 'user-1', 'sid-1'),
      {
        initiating_entity: 'user',
        reason_admin: { en: 'User logout' },
      },
    );
    const answer = await transmitter.deliver(set);
    expect(answer?.status).toBe(202);
    expect(store.stored.at(-1)).toMatchObject({
      rule: 'session',
      iss: transmitter.issuer,
      sid: 'sid-1',
      sub: 'user-1',
    });
  });

  it("makes the TokenAuth refuse the revoked session's tokens at once, and only those", async () => {
    const api = express();
    api.get('/me', receiver.auth.requireVerifiedUser(), (_req, res) => res.json({ ok: true }));
    api.use(errorHandler());
    const token = (sid: string) =>
      sign(shapeB(Math.floor(Date.now() / 1000) - 60, { iss: transmitter.issuer, aud: 'api', sub: 'user-9', sid }));
    const [revoked, other] = [token('sid-9'), token('sid-10')];
    expect((await request(api).get('/me').set('Authorization', `Bearer ${revoked}`)).status).toBe(200);
    const set = transmitter.set(
      `${CAEP}session-revoked`,
      keycloakSubjects.session(transmitter.issuer, 'user-9', 'sid-9'),
    );
    expect((await transmitter.deliver(set))?.status).toBe(202);
    // The 202 came once the rule was stored: no wait, no retry.
    expect((await request(api).get('/me').set('Authorization', `Bearer ${revoked}`)).status).toBe(401);
    expect((await request(api).get('/me').set('Authorization', `Bearer ${other}`)).status).toBe(200);
  });

  it('acknowledges a subject whose legacy subject_type names an Object.prototype member, storing nothing', async () => {
    // "constructor" once read Object.prototype's function as a format: a TypeError, answered 503 for ever.
    for (const type of ['constructor', '__proto__', 'toString']) {
      const count = store.stored.length;
      const set = transmitter.set(`${RISC}account-disabled`, { subject_type: type, sub: 'user-x' });
      expect((await transmitter.deliver(set))?.status).toBe(202);
      expect(store.stored.length).toBe(count);
    }
  });

  it('acknowledges a replayed jti without storing anything again', async () => {
    const set = transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, 'user-2'));
    expect((await transmitter.deliver(set))?.status).toBe(202);
    const count = store.stored.length;
    expect((await transmitter.deliver(set))?.status).toBe(202);
    expect(store.stored.length).toBe(count);
    expect(events.stats().transmitters[0].replayed).toBe(1);
  });

  it('answers 503 with Retry-After when the store is full, and stores it when sent again', async () => {
    const set = transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, 'user-3'));
    store.failure = storeFull();
    const refused = await transmitter.deliver(set);
    store.failure = undefined;
    expect(refused?.status).toBe(503);
    expect(store.stored.some((rule) => rule.rule === 'subject' && rule.sub === 'user-3')).toBe(false);
    expect((await transmitter.deliver(set))?.status).toBe(202);
    expect(store.stored.some((rule) => rule.rule === 'subject' && rule.sub === 'user-3')).toBe(true);
  });
});
