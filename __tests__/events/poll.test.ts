import type { SecurityEvents } from '../../lib';
import { until } from '../fixtures/loopback-server';
import { startReceiver, streamCredentials, type Receiver } from '../fixtures/receiver';
import { storeFull, type RecordingStore } from '../fixtures/rule-store';
import { CAEP, keycloakSubjects, RISC, startSsfTransmitter, type SsfTransmitter } from '../fixtures/ssf-transmitter';

describe('securityEvents() by poll (RFC 8936) from a Keycloak-shaped transmitter', () => {
  let transmitter: SsfTransmitter;
  let receiver: Receiver;
  let store: RecordingStore;
  let events: SecurityEvents;

  beforeAll(async () => {
    transmitter = await startSsfTransmitter();
    receiver = startReceiver(transmitter, {
      poll: { interval: 0.05, timeout: 0.5 },
      stream: { ...streamCredentials(transmitter), authMethod: 'client_secret_post' },
    });
    ({ store, events } = receiver);
    await events.ready();
  });

  afterAll(async () => {
    await receiver.close();
    await transmitter.close();
  });

  const polledWithAck = (jti: string) =>
    transmitter.polls.some((poll) => ((poll.ack as string[] | undefined) ?? []).includes(jti));
  const jtiOf = (set: string) => JSON.parse(Buffer.from(set.split('.')[1], 'base64url').toString()).jti as string;

  it('creates a poll stream, polls with returnImmediately and a Bearer token, and verifies it by poll', () => {
    expect(transmitter.stream?.delivery.method).toBe('urn:ietf:rfc:8936');
    expect(transmitter.polls[0]).toMatchObject({ returnImmediately: true, maxEvents: 16 });
    expect(
      transmitter.server.seen.some(
        (seen) => seen.url?.endsWith('/poll') && seen.headers.authorization?.startsWith('Bearer '),
      ),
    ).toBe(true);
    expect(events.stats().transmitters[0].stream).toMatchObject({ verified: true });
  });

  it('stores the rule of a polled SET, then acknowledges it in the next poll', async () => {
    const set = transmitter.set(`${CAEP}credential-change`, keycloakSubjects.user(transmitter.issuer, 'user-9'), {
      change_type: 'revoke',
      credential_type: 'password',
    });
    await transmitter.deliver(set);
    await until(() => polledWithAck(jtiOf(set)), 'the SET acknowledged');
    expect(store.stored).toContainEqual(expect.objectContaining({ rule: 'subject', sub: 'user-9' }));
    expect(transmitter.queue.has(jtiOf(set))).toBe(false);
  });

  it('leaves a SET unacknowledged while the store cannot take its rule, and acknowledges it once stored', async () => {
    const set = transmitter.set(`${RISC}account-purged`, keycloakSubjects.user(transmitter.issuer, 'user-10'));
    store.failure = storeFull();
    await transmitter.deliver(set);
    const polls = transmitter.polls.length;
    await until(() => transmitter.polls.length >= polls + 3, 'three polls while the store is full');
    expect(polledWithAck(jtiOf(set))).toBe(false);
    expect(transmitter.queue.has(jtiOf(set))).toBe(true);
    store.failure = undefined;
    await until(() => polledWithAck(jtiOf(set)), 'the SET acknowledged once stored', 1000);
    expect(store.stored).toContainEqual(expect.objectContaining({ rule: 'subject', sub: 'user-10' }));
  });

  it('returns a refused SET in setErrs with its RFC 8935 code, so that it is not sent again', async () => {
    const set = transmitter.set(
      `${RISC}account-disabled`,
      keycloakSubjects.user(transmitter.issuer, 'user-11'),
      {},
      { aud: 'someone-else' },
    );
    await transmitter.deliver(set);
    await until(() => transmitter.nacked.has(jtiOf(set)), 'the SET in setErrs');
    expect(transmitter.nacked.get(jtiOf(set))).toMatchObject({ err: 'invalid_audience' });
    expect(store.stored.some((rule) => rule.rule === 'subject' && rule.sub === 'user-11')).toBe(false);
  });

  it('returns a refused SET whose jti is "__proto__" in setErrs too (a key like any other)', async () => {
    const set = transmitter.set(
      `${RISC}account-disabled`,
      keycloakSubjects.user(transmitter.issuer, 'user-12'),
      {},
      { aud: 'someone-else', jti: '__proto__' },
    );
    await transmitter.deliver(set);
    await until(() => transmitter.nacked.has('__proto__'), 'the SET in setErrs');
    expect(transmitter.nacked.get('__proto__')).toMatchObject({ err: 'invalid_audience' });
  });
});
