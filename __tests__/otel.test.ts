import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createTokenAuth, type TokenAuth } from '../lib';
import { instrumentTokenAuth, type TokenAuthInstrumentation } from '../lib/otel';
import { generateKeyPairSync } from 'node:crypto';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from './fixtures/issuer';
import { json, startLoopbackServer } from './fixtures/loopback-server';

let spans: InMemorySpanExporter;
let metricExporter: InMemoryMetricExporter;
let reader: PeriodicExportingMetricReader;
let meterProvider: MeterProvider;
let instrumentation: TokenAuthInstrumentation;
let auth: TokenAuth;

beforeEach(() => {
  spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // The interval is never reached: the test collects with forceFlush.
  reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  meterProvider = new MeterProvider({ readers: [reader] });
  instrumentation = instrumentTokenAuth({ tracerProvider, meterProvider });
  auth = createTokenAuth({ key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW });
});

afterEach(async () => {
  instrumentation.disable();
  auth.close();
  await meterProvider.shutdown();
});

/** The data points of one metric after a collection. */
async function points(name: string): Promise<Array<DataPoint<number | Histogram>>> {
  await reader.forceFlush();
  const found = metricExporter
    .getMetrics()
    .flatMap((rm) => rm.scopeMetrics)
    .flatMap((sm) => sm.metrics)
    .filter((m) => m.descriptor.name === name);
  return (found.at(-1)?.dataPoints ?? []) as Array<DataPoint<number | Histogram>>;
}

describe('express-verified-user/otel', () => {
  it('records a span per verification with its outcome, cached flag, alg and iss', async () => {
    const token = sign(shapeB(NOW));
    await auth.verify(token);
    const [span] = spans.getFinishedSpans();
    expect(span.name).toBe('express-verified-user verify');
    expect(span.attributes).toEqual({
      'express_verified_user.outcome': 'ok',
      'express_verified_user.cached': false,
      'express_verified_user.source': 'local',
      'express_verified_user.token.alg': 'HS256',
      'express_verified_user.token.iss': ISSUER,
    });
  });

  it("marks a refused token's span as an error with its code and reason", async () => {
    const forged = sign(shapeB(NOW), 'another-secret-that-is-long-enough-for-hs256');
    await expect(auth.verify(forged)).rejects.toMatchObject({ code: 'invalid_token' });
    const [span] = spans.getFinishedSpans();
    expect(span.status).toEqual({ code: 2, message: 'invalid_token' });
    expect(span.attributes).toMatchObject({
      'express_verified_user.outcome': 'invalid_token',
      'express_verified_user.reason': 'signature',
    });
  });

  it('counts verifications by outcome and cached, and records their durations', async () => {
    const token = sign(shapeB(NOW));
    for (let i = 0; i < 3; i++) await auth.verify(token); // sighted, stored, then answered from the cache
    await expect(auth.verify('abc.def.ghi')).rejects.toMatchObject({ code: 'invalid_token' });
    const counts = (await points('express_verified_user.verifications')).map((p) => [
      p.attributes['express_verified_user.outcome'],
      p.attributes['express_verified_user.cached'],
      p.value,
    ]);
    expect(counts).toEqual(
      expect.arrayContaining([
        ['ok', false, 2],
        ['ok', true, 1],
        ['invalid_token', false, 1],
      ]),
    );
    const durations = await points('express_verified_user.verify.duration');
    expect(durations.reduce((n, p) => n + (p.value as Histogram).count, 0)).toBe(4);
  });

  it("labels metrics only with bounded values: a refused token's own iss and alg never make a new series", async () => {
    const attacker = 'another-secret-that-is-long-enough-for-hs256';
    for (let i = 0; i < 20; i++) {
      await expect(
        auth.verify(sign(shapeB(NOW, { iss: `https://attacker-${i}.example/${'x'.repeat(400)}` }), attacker)),
      ).rejects.toMatchObject({ code: 'invalid_token' });
    }
    await auth.verify(sign(shapeB(NOW)));
    const series = (await points('express_verified_user.verifications')).map((p) => p.attributes);
    expect(series).toEqual(
      expect.arrayContaining([
        {
          'express_verified_user.outcome': 'invalid_token',
          'express_verified_user.cached': false,
          'express_verified_user.source': 'local',
        },
        expect.objectContaining({ 'express_verified_user.outcome': 'ok', 'express_verified_user.token.iss': ISSUER }),
      ]),
    );
    expect(series).toHaveLength(2);
    // Spans keep the refused token's iss, for diagnosis, cut to a bounded length.
    const refused = spans
      .getFinishedSpans()
      .find((s) => s.attributes['express_verified_user.outcome'] === 'invalid_token');
    expect(String(refused?.attributes['express_verified_user.token.iss'])).toHaveLength(256);
  });

  it('never puts the token, or any part of it, into a span, an attribute or a metric', async () => {
    const tokens = [
      sign(shapeB(NOW)),
      sign(shapeB(NOW), 'another-secret-that-is-long-enough-for-hs256'),
      sign(shapeB(NOW, { exp: NOW - 60 })),
    ];
    for (const token of tokens) {
      await auth.verify(token).catch(() => undefined);
      await auth.verify(token).catch(() => undefined);
    }
    await reader.forceFlush();
    const recorded = JSON.stringify({
      spans: spans
        .getFinishedSpans()
        .map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
      metrics: metricExporter
        .getMetrics()
        .flatMap((rm) => rm.scopeMetrics)
        .flatMap((sm) => sm.metrics)
        .map((m) => m.dataPoints.map((p) => p.attributes)),
    });
    expect(spans.getFinishedSpans()).toHaveLength(6);
    for (const token of tokens) {
      for (const part of token.split('.')) expect(recorded).not.toContain(part);
    }
  });

  it('names a discovery fetch\'s span "fetch discovery" and a JWKS fetch\'s "fetch key", each with its fetch.kind', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const server = await startLoopbackServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration')
        json(res, 200, { issuer: server.origin, jwks_uri: `${server.origin}/jwks` });
      else json(res, 200, { keys: [{ ...ec.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256' }] });
    });
    const discovering = createTokenAuth({ issuerBaseURL: server.origin, audience: AUDIENCE, clock: () => NOW });
    try {
      await discovering.verify(
        sign(shapeB(NOW, { iss: server.origin, sub: 'user-1' }), ec.privateKey, 'ES256', { kid: 'k1' }),
      );
    } finally {
      discovering.close();
      await server.close();
    }
    const fetched = spans.getFinishedSpans().filter((s) => s.name.includes(' fetch '));
    expect(
      fetched.map((s) => [s.name, s.attributes['express_verified_user.fetch.kind'], s.attributes['url.full']]),
    ).toEqual([
      ['express-verified-user fetch discovery', 'discovery', `${server.origin}/.well-known/openid-configuration`],
      ['express-verified-user fetch key', 'key', `${server.origin}/jwks`],
    ]);
    const kinds = (await points('express_verified_user.fetch.duration')).map(
      (p) => p.attributes['express_verified_user.fetch.kind'],
    );
    expect(kinds.sort()).toEqual(['discovery', 'key']);
  });

  it('stops recording once disabled', async () => {
    instrumentation.disable();
    await auth.verify(sign(shapeB(NOW)));
    expect(spans.getFinishedSpans()).toHaveLength(0);
  });
});
