// Drivers of docs/observability.md's code blocks (see __tests__/fixtures/doc-run.ts): each subscriber runs with
// verifications after it (a test issuer's tokens: good, then the same again, then one for another audience).
import type { DocDrivers } from '../fixtures/doc-run';

/** Verifications the subscribers see: a token three times (verified, then cached), one refused. */
const VERIFICATIONS = `
const { createTokenAuth } = require('express-verified-user');
const { createTestIssuer } = require('express-verified-user/testing');
async function verifications() {
  const issuer = await createTestIssuer();
  const auth = createTokenAuth(issuer.options);
  const token = issuer.sign();
  for (let i = 0; i < 3; i++) await auth.verify(token);
  await auth.verify(issuer.sign({ aud: 'another-api' })).catch(() => undefined);
  auth.close();
}
`;

export const drivers: DocDrivers = {
  // The subscriber prints one line per verification: outcome, cached or verified, milliseconds.
  'observability-verify-channel': {
    after: `${VERIFICATIONS}verifications();\n`,
    knownTypeErrors: [
      {
        code: 2339,
        line: 'if (!ctx.async)',
        why: "@types/node types a tracing channel's context as object unless given a type argument, which JavaScript cannot give",
      },
    ],
    async run(t) {
      const { stdout } = await t.script();
      const lines = stdout.trim().split('\n');
      expect(lines).toHaveLength(4);
      expect(lines[0]).toMatch(/^ok verified \d+(\.\d+)?$/);
      expect(lines.slice(1, 3).some((line) => /^ok cached \d+(\.\d+)?$/.test(line))).toBe(true);
      expect(lines[3]).toMatch(/^invalid_token verified \d+(\.\d+)?$/);
    },
  },
  // With the SDK's tracer provider registered first (your SDK), a span per verification; none after disable().
  'observability-otel': {
    before: `const { trace } = require('@opentelemetry/api');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
`,
    after: `${VERIFICATIONS}
const spans = () => exporter.getFinishedSpans().map((s) => [s.name, s.attributes['express_verified_user.outcome']]);
verifications()
  .then(() => console.log(JSON.stringify(spans())))
  .then(() => instrumentation.disable())
  .then(verifications)
  .then(() => console.log(JSON.stringify(spans())));
`,
    async run(t) {
      const { stdout } = await t.script();
      const [enabled, disabled] = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown);
      const verify = 'express-verified-user verify';
      const expected = [
        [verify, 'ok'],
        [verify, 'ok'],
        [verify, 'ok'],
        [verify, 'invalid_token'],
      ];
      expect(enabled).toEqual(expected);
      expect(disabled).toEqual(expected);
    },
  },
};
