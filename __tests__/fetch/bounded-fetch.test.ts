import { getEventListeners } from 'node:events';
import { fetchBounded, RemoteFetchError } from '../../lib/fetch/bounded-fetch';
import { hang, startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';

let server: LoopbackServer;

beforeEach(async () => {
  server = await startLoopbackServer(hang);
});

afterEach(async () => {
  await server.close();
});

describe('fetchBounded', () => {
  it('adds no listener per call to the long-lived signal of its source (20 calls under way at once)', async () => {
    const closing = new AbortController();
    const calls = Array.from({ length: 20 }, () =>
      fetchBounded(`${server.origin}/slow`, {
        headers: {},
        timeoutMs: 5000,
        maxBytes: 1024,
        signal: closing.signal,
      }).catch((err: unknown) => err),
    );
    await until(() => server.requests === 20, 'twenty calls to reach the server');
    // Before: one abort listener per call under way, and a MaxListenersExceededWarning past 10.
    expect(getEventListeners(closing.signal, 'abort')).toHaveLength(0);
    closing.abort();
    const failures = await Promise.all(calls);
    expect(failures.map((err) => (err as RemoteFetchError).failure)).toEqual(Array(20).fill('closed'));
  });

  it('still ends a call at its timeout', async () => {
    const err = await fetchBounded(`${server.origin}/slow`, {
      headers: {},
      timeoutMs: 100,
      maxBytes: 1024,
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteFetchError);
    expect((err as RemoteFetchError).failure).toBe('timeout');
  });
});
