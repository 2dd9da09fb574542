// keys/pem-by-kid.ts against a real loopback key server: one fetch per kid (concurrent misses share it), held keys
// answered synchronously and bounded in count, new kids fetched at most MAX_KID_FETCHES times per cooldown, and the
// key server's faults mapped to 401 (a kid it does not know) or 503 (it cannot answer).
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { TokenAuthError } from '../../lib/base/errors';
import type { JwsHeader } from '../../lib/jose/jws';
import {
  MAX_KID_FETCHES,
  MAX_PEM_BYTES,
  MAX_PEM_KIDS,
  pemByKidKeySource,
  UNKNOWN_KID_SECONDS,
} from '../../lib/keys/pem-by-kid';
import type { KeyChoice } from '../../lib/keys/source';
import { hang, startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';

const pem = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
const header = (kid: string): JwsHeader => ({ alg: 'ES256', kid });

let server: LoopbackServer;
let now: number;
const sources: Array<{ close(): void }> = [];

/** A source on the test's key server; the clock is the test's `now`. */
function source(timeout = 5) {
  const made = pemByKidKeySource({
    base: new URL(`${server.origin}/`),
    cooldown: 30,
    timeout,
    algorithms: new Set(['ES256'] as const),
    clock: () => now,
    segments: 'padded',
  });
  sources.push(made);
  return made;
}

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (err) {
    return (err as TokenAuthError).reason;
  }
  return undefined;
}

beforeAll(async () => {
  server = await startLoopbackServer((_req, res) => res.end(pem(ec)));
});
beforeEach(() => {
  now = 1_000;
  server.reset();
  server.handler = (_req, res) => res.end(pem(ec));
});
afterEach(() => {
  for (const made of sources.splice(0)) made.close();
});
afterAll(() => server.close());

describe('pemByKidKeySource', () => {
  it('fetches a kid once, then answers it synchronously; concurrent misses share the fetch', async () => {
    const keys = source();
    const kid = randomUUID();
    const [a, b] = [keys.keyFor(header(kid), {}), keys.keyFor(header(kid), {})];
    expect(a).toBeInstanceOf(Promise);
    expect(b).toBe(a);
    const key = (await a) as KeyObject;
    expect(key.equals(ec)).toBe(true);
    expect(keys.keyFor(header(kid), {})).toBe(key);
    expect(server.seen.map((seen) => seen.url)).toEqual([`/${kid}`]);
    expect(keys.segments).toBe('padded');
  });

  it(`starts at most ${MAX_KID_FETCHES} fetches of new kids per cooldown (503 with Retry-After), then again`, async () => {
    const keys = source();
    for (let i = 0; i < MAX_KID_FETCHES; i++) await keys.keyFor(header(randomUUID()), {});
    now += 10;
    let refusal: TokenAuthError | undefined;
    try {
      keys.keyFor(header(randomUUID()), {});
    } catch (err) {
      refusal = err as TokenAuthError;
    }
    expect(refusal).toMatchObject({ code: 'verification_unavailable', reason: 'pem-cooldown', status: 503 });
    expect(refusal?.headers['Retry-After']).toBe('20');
    expect(server.requests).toBe(MAX_KID_FETCHES);
    now += 20;
    await keys.keyFor(header(randomUUID()), {});
    expect(server.requests).toBe(MAX_KID_FETCHES + 1);
  });

  it(`holds at most ${MAX_PEM_KIDS} kids, dropping the least recently used`, async () => {
    const keys = source();
    const kids = Array.from({ length: MAX_PEM_KIDS + 1 }, () => randomUUID());
    for (const [i, kid] of kids.entries()) {
      if (i % MAX_KID_FETCHES === 0) now += 30; // a new window for each group of fetches
      await keys.keyFor(header(kid), {});
      // The first kid stays in use, so the second is the least recently used when the set overflows.
      if (i > 0) expect(keys.keyFor(header(kids[0]), {})).not.toBeInstanceOf(Promise);
    }
    expect(keys.keyFor(header(kids[0]), {})).not.toBeInstanceOf(Promise);
    expect(keys.keyFor(header(kids[MAX_PEM_KIDS]), {})).not.toBeInstanceOf(Promise);
    now += 30;
    const refetch = keys.keyFor(header(kids[1]), {});
    expect(refetch).toBeInstanceOf(Promise);
    await refetch;
    expect(server.seen.filter((seen) => seen.url === `/${kids[1]}`)).toHaveLength(2);
  });

  it.each([403, 404])(
    `remembers a kid the key server answered %i for: 401 without a fetch for ${UNKNOWN_KID_SECONDS} s, no budget spent`,
    async (status) => {
      const forged = randomUUID();
      server.handler = (req, res) =>
        req.url === `/${forged}` ? res.writeHead(status).end('Forbidden') : res.end(pem(ec));
      const keys = source();
      expect(await rejection(keys.keyFor(header(forged), {}) as Promise<KeyChoice>)).toMatchObject({
        reason: 'kid-unknown',
      });
      for (let i = 0; i < 10; i++) {
        now += 1;
        let refusal: TokenAuthError | undefined;
        try {
          keys.keyFor(header(forged), {});
        } catch (err) {
          refusal = err as TokenAuthError;
        }
        expect(refusal).toMatchObject({ code: 'invalid_token', reason: 'kid-unknown' });
        expect(refusal?.hint).toMatch(/answered 403\/404 for this kid within the last 300 s/);
      }
      expect(server.requests).toBe(1);
      // The window's other slots are still there for new kids: the remembered kid spent none.
      for (let i = 1; i < MAX_KID_FETCHES; i++) await keys.keyFor(header(randomUUID()), {});
      now += UNKNOWN_KID_SECONDS;
      await rejection(keys.keyFor(header(forged), {}) as Promise<KeyChoice>);
      expect(server.seen.filter((seen) => seen.url === `/${forged}`)).toHaveLength(2);
    },
  );

  it('fetches a rotated kid asked every 500 ms within one cooldown of a flood of 20 forged kids a second', async () => {
    const rotated = randomUUID();
    server.handler = (req, res) => (req.url === `/${rotated}` ? res.end(pem(ec)) : res.writeHead(403).end());
    const keys = source();
    const start = now;
    let fetchedAt: number | undefined;
    for (let tick = 0; tick < 40 * 20 && fetchedAt === undefined; tick++) {
      now = start + tick / 20;
      const forged = (() => {
        try {
          return keys.keyFor(header(randomUUID()), {});
        } catch {
          return undefined;
        }
      })();
      if (forged instanceof Promise) await forged.catch(() => undefined);
      if (tick % 10 === 5) {
        try {
          const key = keys.keyFor(header(rotated), {});
          if (key instanceof Promise) await key;
          fetchedAt = now;
        } catch {
          // 503 pem-cooldown: asked again in 500 ms
        }
      }
    }
    expect(fetchedAt).toBeDefined();
    expect((fetchedAt as number) - (start + 0.25)).toBeLessThanOrEqual(30 + 1);
    // The key server saw at most MAX_KID_FETCHES requests per cooldown, the rotated kid's included.
    expect(server.requests).toBeLessThanOrEqual(MAX_KID_FETCHES * 3);
  });

  it('refuses a kid that is not a UUID (or no kid) before any fetch', () => {
    const keys = source();
    for (const kid of ['../x', 'a/b', `${randomUUID()}x`, 'A'.repeat(36)])
      expect(reasonOf(() => keys.keyFor(header(kid), {}))).toBe('kid');
    expect(reasonOf(() => keys.keyFor({ alg: 'ES256' }, {}))).toBe('kid');
    expect(server.requests).toBe(0);
  });

  it.each<[string, string, string, LoopbackServer['handler']]>([
    ['403 (a kid the server does not know)', 'invalid_token', 'kid-unknown', (_q, res) => res.writeHead(403).end()],
    ['404', 'invalid_token', 'kid-unknown', (_q, res) => res.writeHead(404).end()],
    ['500', 'verification_unavailable', 'pem-fetch', (_q, res) => res.writeHead(500).end()],
    ['text that is no PEM', 'verification_unavailable', 'pem-unusable', (_q, res) => res.end('hello')],
    ['an RSA key (ES256 never verifies)', 'verification_unavailable', 'pem-unusable', (_q, res) => res.end(pem(rsa))],
    [
      'a body over the byte cap',
      'verification_unavailable',
      'pem-too-large',
      (_q, res) => res.end('-'.repeat(MAX_PEM_BYTES + 1)),
    ],
  ])('answers %s as %s (%s)', async (_what, code, reason, handler) => {
    server.handler = handler;
    const keys = source();
    expect(await rejection(keys.keyFor(header(randomUUID()), {}) as Promise<KeyChoice>)).toMatchObject({
      code,
      reason,
    });
  });

  it('gives up on a key server that does not answer within the timeout (503 pem-timeout)', async () => {
    server.handler = hang;
    const keys = source(0.2);
    expect(await rejection(keys.keyFor(header(randomUUID()), {}) as Promise<KeyChoice>)).toMatchObject({
      code: 'verification_unavailable',
      reason: 'pem-timeout',
    });
  });

  it('ends a fetch under way when closed, and fetches nothing after', async () => {
    server.handler = hang;
    const keys = source();
    const pending = keys.keyFor(header(randomUUID()), {}) as Promise<KeyChoice>;
    await until(() => server.requests === 1, 'the fetch to reach the key server');
    keys.close();
    expect(await rejection(pending)).toMatchObject({ code: 'verification_unavailable', reason: 'pem-closed' });
    expect(reasonOf(() => keys.keyFor(header(randomUUID()), {}))).toBe('pem-closed');
    expect(server.requests).toBe(1);
  });
});
