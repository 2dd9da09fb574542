/**
 * What the receiver tells operators: one NODE_DEBUG line per SET (outcome, event type, subject format, reason),
 * hostile text quoted and cut, never a SET or the push authorization; OpenTelemetry spans for each poll and each call
 * to the transmitter, without its tokens; stats() per transmitter.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { instrumentTokenAuth } from '../../lib/otel';
import { until } from '../fixtures/loopback-server';
import { startReceiver, streamCredentials } from '../fixtures/receiver';
import { startSsfTransmitter } from '../fixtures/ssf-transmitter';

describe('NODE_DEBUG=express-verified-user', () => {
  it('writes one line per SET with its outcome, quoting hostile text, and never a SET or the push authorization', async () => {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        process.execPath,
        [join(__dirname, '..', 'fixtures', 'debug-events.js')],
        { env: { ...process.env, NODE_DEBUG: 'express-verified-user' }, timeout: 60_000 },
        (err, out, errOut) =>
          err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve({ stdout: out, stderr: errOut }),
      );
    });
    const { sets, authorization } = JSON.parse(stdout) as { sets: string[]; authorization: string };
    const lines = stderr.split('\n').filter((line) => line.includes('security-event'));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /security-event applied via=push transmitter="http:\/\/127\.0\.0\.1:\d+\/realms\/acme" type="https:\/\/schemas\.openid\.net\/secevent\/risc\/event-type\/account-disabled" subject="iss_sub" reason=- rules=1$/,
    );
    expect(lines[1]).toMatch(/security-event refused via=push .* type=- subject=- reason=set-signature rules=0$/);
    // The line break is escaped inside the quotes, the tail cut: the fake line never starts a line of its own.
    expect(lines[2]).toContain('type="urn:evil\\nsecurity-event applied via=push fake xxx');
    expect(lines[2]).toMatch(/x…" subject="iss_sub" reason=- rules=0$/);
    for (const part of [...sets.flatMap((set) => set.split('.')), authorization.split(' ')[1]])
      expect(stderr).not.toContain(part);
  }, 90_000);
});

describe('OpenTelemetry spans of a polling receiver', () => {
  it('records a span per poll and per call to the transmitter, with no token in any attribute', async () => {
    const spans = new InMemorySpanExporter();
    const instrumentation = instrumentTokenAuth({
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
    });
    const transmitter = await startSsfTransmitter();
    const { events, close } = startReceiver(transmitter, {
      poll: { interval: 0.05 },
      stream: streamCredentials(transmitter),
    });
    try {
      await events.ready();
      await until(
        () => spans.getFinishedSpans().filter((s) => s.name === 'express-verified-user fetch ssf-poll').length >= 3,
        'three poll spans',
      );
      const names = new Set(spans.getFinishedSpans().map((s) => s.name));
      // Metadata, token and stream calls; polls; the key set; the token endpoint found by discovery.
      expect(names).toEqual(
        new Set([
          'express-verified-user fetch ssf',
          'express-verified-user fetch ssf-poll',
          'express-verified-user fetch key',
          'express-verified-user fetch discovery',
        ]),
      );
      const poll = spans.getFinishedSpans().find((s) => s.name === 'express-verified-user fetch ssf-poll');
      expect(poll?.attributes).toMatchObject({
        'express_verified_user.fetch.kind': 'ssf-poll',
        'express_verified_user.fetch.outcome': 'ok',
        'url.full': `${transmitter.issuer}/ssf/transmitter/receivers/${transmitter.clientId}/streams/${transmitter.stream?.stream_id}/poll`,
      });
      const attributes = JSON.stringify(spans.getFinishedSpans().map((s) => s.attributes));
      expect(attributes).not.toMatch(/Bearer|client_secret/);
      expect(attributes).not.toContain(transmitter.clientSecret);
      expect(events.stats().transmitters[0]).toMatchObject({
        issuer: transmitter.issuer,
        delivery: 'poll',
        poll: { polling: true },
      });
    } finally {
      instrumentation.disable();
      await close();
      await transmitter.close();
    }
  });
});
