import { getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
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

  it('ends a call whose body drips, at its timeout, even after a garbage collection during the body', async () => {
    // A collection takes undici's Request once the headers came; its abort signal then no longer reaches the body.
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const responses: ServerResponse[] = [];
    const dripping = await startLoopbackServer((_req, res) => {
      responses.push(res);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(' ');
    });
    try {
      const call = fetchBounded(`${dripping.origin}/keys`, {
        headers: {},
        timeoutMs: 300,
        maxBytes: 1024,
        signal: new AbortController().signal,
      }).catch((e: unknown) => e);
      await until(() => dripping.requests === 1, 'the call to reach the server');
      // A few bytes at a time, each well within the timeout, as a server holding the call would send them.
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        for (const res of responses) res.write(' ');
        collect();
      }
      let settled = false;
      void call.then(() => (settled = true));
      const keepDripping = setInterval(() => responses.forEach((res) => res.write(' ')), 50);
      try {
        // Bounded in count and time: 500 polls 10 ms apart, far past the 300 ms timeout. Before: still pending.
        await until(() => settled, 'the call to end at its timeout', 500);
      } finally {
        clearInterval(keepDripping);
      }
      const err = await call;
      expect(err).toBeInstanceOf(RemoteFetchError);
      expect((err as RemoteFetchError).failure).toBe('timeout');
    } finally {
      await dripping.close();
    }
  });
});
