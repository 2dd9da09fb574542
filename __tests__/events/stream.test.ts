/**
 * SSF 1.0 §7–8 against the Keycloak-shaped transmitter: where the metadata is found (§7.2, and Keycloak's path form),
 * a stream that exists brought in line with PATCH, private_key_jwt at the token endpoint, a verification asked again
 * after a 429, one that never comes (ready() rejects after stream.timeout), a verification with a state never
 * requested (invalid_state), and a stream-updated event in stats().
 */
import express from 'express';
import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, TokenAuthError, type SecurityEvents, type TokenAuth } from '../../lib';
import { SECRET } from '../fixtures/issuer';
import { listen, type Listening } from '../fixtures/listen';
import { recordingStore } from '../fixtures/rule-store';
import { SSF, startSsfTransmitter, type SsfTransmitter, type SsfTransmitterOptions } from '../fixtures/ssf-transmitter';

const AUTHORIZATION = 'Bearer stream-test-push-value';
const AUDIENCE = 'https://api.example.test';

interface Setup {
  transmitter: SsfTransmitter;
  /** What the TokenAuth's onError got. */
  reports: TokenAuthError[];
  auth: TokenAuth;
  events: SecurityEvents;
  app: Listening;
  close(): Promise<void>;
}

/** A transmitter, an app with the router, and a receiver pushing with a stream (`stream` options merged in). */
async function setUp(
  options: SsfTransmitterOptions = {},
  stream: Record<string, unknown> = {},
  before?: (t: SsfTransmitter) => void,
): Promise<Setup> {
  const transmitter = await startSsfTransmitter(options);
  before?.(transmitter);
  const server = express();
  let router: express.RequestHandler = (_req, _res, next) => next();
  server.use('/security-events', (req, res, next) => router(req, res, next));
  const app = await listen(server);
  const reports: TokenAuthError[] = [];
  const auth = createTokenAuth({
    onError: (err) => reports.push(err),
    key: { secret: SECRET },
    issuer: transmitter.issuer,
    audience: 'api',
    revocation: recordingStore() as never,
    maxLifetime: '1h',
  });
  const events = auth.securityEvents({
    transmitters: [
      {
        issuer: transmitter.issuer,
        audience: AUDIENCE,
        push: { authorization: AUTHORIZATION },
        stream: {
          clientId: transmitter.clientId,
          clientSecret: transmitter.clientSecret,
          endpointUrl: `${app.origin}/security-events`,
          ...stream,
        },
      },
    ],
  });
  router = events.router();
  return {
    transmitter,
    reports,
    auth,
    events,
    app,
    async close() {
      await events.close();
      auth.close();
      await app.close();
      await transmitter.close();
    },
  };
}

const metadataRequests = (t: SsfTransmitter) =>
  t.server.seen.filter((seen) => seen.url?.includes('ssf-configuration')).map((seen) => seen.url);

describe('stream management', () => {
  it('reads the metadata where SSF 1.0 §7.2 puts it, and at {issuer}/.well-known/ssf-configuration where Keycloak serves it', async () => {
    const rooted = await setUp({ hostRooted: true });
    const realm = await setUp();
    try {
      await Promise.all([rooted.events.ready(), realm.events.ready()]);
      expect(metadataRequests(rooted.transmitter)[0]).toBe('/.well-known/ssf-configuration/realms/acme');
      expect(metadataRequests(realm.transmitter).slice(0, 2)).toEqual([
        '/.well-known/ssf-configuration/realms/acme',
        '/realms/acme/.well-known/ssf-configuration',
      ]);
    } finally {
      await rooted.close();
      await realm.close();
    }
  });

  it('brings a stream that delivers elsewhere in line (PATCH) instead of creating a second one', async () => {
    const setup = await setUp({}, {}, (t) => {
      t.stream = {
        stream_id: 'existing',
        iss: t.issuer,
        aud: AUDIENCE,
        events_supported: [],
        events_requested: [],
        events_delivered: [],
        delivery: { method: 'urn:ietf:rfc:8936' },
        min_verification_interval: 0,
        kc_status: 'enabled',
      };
    });
    try {
      await setup.events.ready();
      expect(setup.transmitter.stream).toMatchObject({
        stream_id: 'existing',
        delivery: {
          method: 'urn:ietf:rfc:8935',
          endpoint_url: `${setup.app.origin}/security-events`,
          authorization_header: AUTHORIZATION,
        },
      });
      expect(
        setup.transmitter.server.seen.filter((seen) => seen.method === 'POST' && seen.url?.endsWith('/streams')),
      ).toHaveLength(0);
    } finally {
      await setup.close();
    }
  });

  it('authenticates at the token endpoint with private_key_jwt (RFC 7523)', async () => {
    const client = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const setup = await setUp(
      { clientPublicKey: client.publicKey },
      { clientSecret: undefined, privateKey: client.privateKey },
    );
    try {
      await setup.events.ready();
      expect(setup.transmitter.tokenRequests).toBeGreaterThan(0);
    } finally {
      await setup.close();
    }
  });

  it('asks for the verification again after a 429, once its Retry-After has passed', async () => {
    const setup = await setUp({ verifyBusyOnce: true, autoVerify: false });
    try {
      await setup.events.ready();
      expect(setup.transmitter.server.seen.filter((seen) => seen.url?.endsWith('/verify'))).toHaveLength(2);
    } finally {
      await setup.close();
    }
  });

  it('rejects ready() with ssf-stream-unverified after stream.timeout when the verification never comes', async () => {
    const setup = await setUp({ dropVerification: true, autoVerify: false }, { timeout: 0.5 });
    try {
      const failure = await setup.events.ready().catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(TokenAuthError);
      expect(failure).toMatchObject({ code: 'verification_unavailable', reason: 'ssf-stream-unverified' });
      expect(setup.events.stats().transmitters[0].stream).toMatchObject({ verified: false });
    } finally {
      await setup.close();
    }
  });

  it('answers invalid_state to a verification whose state it did not request, and records stream-updated', async () => {
    const setup = await setUp();
    try {
      await setup.events.ready();
      const { transmitter } = setup;
      const streamSubject = { format: 'opaque', id: transmitter.stream?.stream_id };
      const wrong = await transmitter.deliver(
        transmitter.set(`${SSF}verification`, streamSubject, { state: 'not-requested' }),
      );
      expect(wrong?.status).toBe(400);
      expect(JSON.parse(wrong?.body ?? '{}')).toMatchObject({ err: 'invalid_state' });
      const updated = await transmitter.deliver(
        transmitter.set(`${SSF}stream-updated`, streamSubject, { status: 'paused', reason: 'maintenance' }),
      );
      expect(updated?.status).toBe(202);
      expect(setup.events.stats().transmitters[0].stream).toMatchObject({ status: 'paused', verified: true });
      expect(setup.reports.map((err) => err.reason)).toContain('ssf-stream-paused');
    } finally {
      await setup.close();
    }
  });
});
