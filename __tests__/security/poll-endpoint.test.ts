/**
 * A hostile or broken poll endpoint (RFC 8936) costs the receiver nothing: one that hangs is cut at `poll.timeout`,
 * a redirect is not followed, garbage and an endless body are refused within the byte bound; the loop backs off and
 * goes on, and a genuine SET queued meanwhile is stored once the endpoint answers again.
 */
import type { ServerResponse } from 'node:http';
import { hang, json, until } from '../fixtures/loopback-server';
import { startReceiver, streamCredentials, type Receiver } from '../fixtures/receiver';
import { keycloakSubjects, RISC, startSsfTransmitter, type SsfTransmitter } from '../fixtures/ssf-transmitter';

/** Writes JSON-looking bytes without end, a megabyte at a time, until the client lets go (bounded: 64 MiB). */
function endless(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.write('{"sets":{"a":"');
  const chunk = 'a'.repeat(1024 * 1024);
  let written = 0;
  const more = () => {
    while (!res.destroyed && written < 64) {
      written++;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    res.end();
  };
  more();
}

describe('a poll endpoint that misbehaves', () => {
  let transmitter: SsfTransmitter;
  let receiver: Receiver;

  beforeAll(async () => {
    transmitter = await startSsfTransmitter();
    receiver = startReceiver(transmitter, {
      poll: { interval: 0.02, timeout: 0.3 },
      stream: streamCredentials(transmitter),
    });
    await receiver.events.ready();
  });

  afterAll(async () => {
    await receiver.close();
    await transmitter.close();
  });

  const poll = () => receiver.events.stats().transmitters[0].poll;

  it.each([
    ['hangs', hang, 'ssf-poll-timeout'],
    [
      'redirects elsewhere',
      (_req: unknown, res: ServerResponse) => void res.writeHead(302, { Location: 'http://127.0.0.1:9/steal' }).end(),
      'ssf-poll-network',
    ],
    [
      'answers garbage',
      (_req: unknown, res: ServerResponse) => json(res, 200, '<html>not json</html>'),
      'ssf-poll-answer',
    ],
    ['answers endless bytes', (_req: unknown, res: ServerResponse) => endless(res), 'ssf-poll-too-large'],
    [
      'answers 500',
      (_req: unknown, res: ServerResponse) => json(res, 500, { error: 'server_error' }),
      'ssf-poll-status-500',
    ],
  ])(
    'survives an endpoint that %s, and stores the SET queued meanwhile once it answers again',
    async (_what, handler, reason) => {
      const set = transmitter.set(
        `${RISC}account-disabled`,
        keycloakSubjects.user(transmitter.issuer, `after-${reason}`),
      );
      transmitter.pollHandler = handler as never;
      await transmitter.deliver(set);
      await until(() => poll()?.lastError === reason, `a poll failing with ${reason}`, 1000);
      expect(poll()?.failures).toBeGreaterThan(0);
      transmitter.pollHandler = undefined;
      await until(
        () => receiver.store.stored.some((rule) => rule.rule === 'subject' && rule.sub === `after-${reason}`),
        'the SET stored after recovery',
        3000,
      );
      expect(poll()?.failures).toBe(0);
    },
  );
});
