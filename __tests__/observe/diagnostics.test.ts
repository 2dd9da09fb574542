import { generateKeyPairSync } from 'node:crypto';
import * as diagnostics from 'node:diagnostics_channel';
import { createTokenAuth, type TokenAuth } from '../../lib';
import { VERIFY_CHANNEL, type FetchEvent, type VerifyTrace } from '../../lib/observe/diagnostics';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';

type Event = [string, VerifyTrace];

/** Subscribe to the verify TracingChannel for one test; each event is recorded with a copy of its context. */
function recordVerifications(): { events: Event[]; stop: () => void } {
  const events: Event[] = [];
  const channel = diagnostics.tracingChannel<unknown, VerifyTrace>(VERIFY_CHANNEL);
  const record = (name: string) => (ctx: VerifyTrace) => events.push([name, { ...ctx }]);
  const handlers = {
    start: record('start'),
    end: record('end'),
    asyncStart: record('asyncStart'),
    asyncEnd: record('asyncEnd'),
    error: record('error'),
  };
  channel.subscribe(handlers);
  return { events, stop: () => channel.unsubscribe(handlers) };
}

const opened: TokenAuth[] = [];
const servers: LoopbackServer[] = [];
let stops: Array<() => void> = [];
afterEach(async () => {
  for (const stop of stops) stop();
  stops = [];
  for (const auth of opened.splice(0)) auth.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function hs256Auth(): TokenAuth {
  const auth = createTokenAuth({ key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW });
  opened.push(auth);
  return auth;
}

function listen() {
  const recorder = recordVerifications();
  stops.push(recorder.stop);
  return recorder.events;
}

describe('the express-verified-user:verify tracing channel', () => {
  it('publishes start and end of a synchronous verification, with alg, iss, source and cached, never the token', async () => {
    const events = listen();
    const auth = hs256Auth();
    const token = sign(shapeB(NOW));
    await auth.verify(token);
    expect(events.map(([name]) => name)).toEqual(['start', 'end']);
    expect(events[1][1]).toEqual({ source: 'local', async: false, cached: false, alg: 'HS256', iss: ISSUER });
    expect(JSON.stringify(events)).not.toContain(token.split('.')[2]);
  });

  it('marks an answer from the cache as cached', async () => {
    const auth = hs256Auth();
    const token = sign(shapeB(NOW));
    await auth.verify(token);
    await auth.verify(token);
    const events = listen();
    await auth.verify(token);
    expect(events[1][1]).toMatchObject({ cached: true, alg: 'HS256', iss: ISSUER });
  });

  it('publishes error with the code, reason, alg and iss of a refused token', async () => {
    const events = listen();
    const auth = hs256Auth();
    const forged = sign(shapeB(NOW), 'another-secret-that-is-long-enough-for-hs256');
    await expect(auth.verify(forged)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(events.map(([name]) => name)).toEqual(['start', 'error', 'end']);
    expect(events[1][1]).toMatchObject({
      code: 'invalid_token',
      reason: 'signature',
      alg: 'HS256',
      iss: ISSUER,
      cached: false,
    });
    expect(JSON.stringify(events.map(([, ctx]) => ({ ...ctx, error: undefined })))).not.toContain(forged.split('.')[2]);
  });

  it('publishes asyncStart and asyncEnd when the answer waits on a key fetch, and the key fetch on its own channel', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const server = await startLoopbackServer((_req, res) =>
      json(res, 200, { keys: [{ ...rsa.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256' }] }),
    );
    servers.push(server);
    const fetches: FetchEvent[] = [];
    const onFetch = (message: unknown) => fetches.push(message as FetchEvent);
    diagnostics.subscribe('express-verified-user:fetch:key', onFetch);
    stops.push(() => diagnostics.unsubscribe('express-verified-user:fetch:key', onFetch));
    const events = listen();
    const auth = createTokenAuth({
      key: { jwksUri: `${server.origin}/jwks?secret=x` },
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
    });
    opened.push(auth);
    await auth.verify(sign(shapeB(NOW), rsa.privateKey, 'RS256', { kid: 'k1' }));
    expect(events.map(([name]) => name)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(events[3][1]).toMatchObject({ async: true, cached: false, alg: 'RS256', iss: ISSUER });
    expect(fetches).toHaveLength(1);
    expect(fetches[0]).toMatchObject({ kind: 'key', url: `${server.origin}/jwks`, status: 200, outcome: 'ok' });
    expect(fetches[0].duration).toBeGreaterThanOrEqual(0);
  });

  it('publishes a failed key fetch with its outcome', async () => {
    const server = await startLoopbackServer((_req, res) => json(res, 500, {}));
    servers.push(server);
    const fetches: FetchEvent[] = [];
    const onFetch = (message: unknown) => fetches.push(message as FetchEvent);
    diagnostics.subscribe('express-verified-user:fetch:key', onFetch);
    stops.push(() => diagnostics.unsubscribe('express-verified-user:fetch:key', onFetch));
    const auth = createTokenAuth({
      key: { jwksUri: `${server.origin}/jwks` },
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
    });
    opened.push(auth);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await expect(auth.verify(sign(shapeB(NOW), rsa.privateKey, 'RS256', { kid: 'k1' }))).rejects.toMatchObject({
      code: 'verification_unavailable',
    });
    expect(fetches[0]).toMatchObject({ kind: 'key', status: 500, outcome: 'http-error' });
  });

  it('publishes the metadata fetch of issuerBaseURL on the discovery channel and the JWKS fetch on the key channel', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const server = await startLoopbackServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration')
        json(res, 200, { issuer: server.origin, jwks_uri: `${server.origin}/jwks` });
      else if (req.url === '/jwks')
        json(res, 200, { keys: [{ ...ec.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' }] });
      else json(res, 404, {});
    });
    servers.push(server);
    const fetches: FetchEvent[] = [];
    const onFetch = (message: unknown) => fetches.push(message as FetchEvent);
    for (const kind of ['key', 'discovery']) {
      diagnostics.subscribe(`express-verified-user:fetch:${kind}`, onFetch);
      stops.push(() => diagnostics.unsubscribe(`express-verified-user:fetch:${kind}`, onFetch));
    }
    const auth = createTokenAuth({ issuerBaseURL: server.origin, audience: AUDIENCE, clock: () => NOW });
    opened.push(auth);
    await auth.verify(sign(shapeB(NOW, { iss: server.origin, sub: 'user-1' }), ec.privateKey, 'ES256', { kid: 'k1' }));
    expect(fetches).toEqual([
      expect.objectContaining({
        kind: 'discovery',
        url: `${server.origin}/.well-known/openid-configuration`,
        status: 200,
        outcome: 'ok',
      }),
      expect.objectContaining({ kind: 'key', url: `${server.origin}/jwks`, status: 200, outcome: 'ok' }),
    ]);
  });

  it('publishes nothing to a subscriber that has left', async () => {
    const recorder = recordVerifications();
    recorder.stop();
    await hs256Auth().verify(sign(shapeB(NOW)));
    expect(recorder.events).toEqual([]);
  });
});
