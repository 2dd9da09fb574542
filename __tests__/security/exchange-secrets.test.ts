/**
 * Token exchange never shows a token or a secret (docs/exchange.md, SECURITY.md): not the subject token, not the
 * issued token, not the client secret, in any onError error, rejection, diagnostics message, OpenTelemetry span or
 * NODE_DEBUG line, whatever the exchange's fate. The exchanges run in a child process
 * (__tests__/fixtures/exchange-secrets.js) started with NODE_DEBUG=express-verified-user.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

interface Report {
  captured: { onError: string[]; thrown: string[]; diagnostics: string[]; spans: string[] };
  tokens: string[];
  secrets: string[];
}

let stderr = '';
let report: Report;

beforeAll(async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_DEBUG: 'express-verified-user' };
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, '..', 'fixtures', 'exchange-secrets.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => child.kill(), 60_000);
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`exchange-secrets.js exited ${String(code)}: ${stderr}`));
      else {
        report = JSON.parse(out) as Report;
        resolve();
      }
    });
  });
}, 90_000);

/** Every piece of a token or secret long enough to identify it: the whole, and each dot-separated part. */
function fragments(values: string[]): string[] {
  return values.flatMap((value) => [value, ...value.split('.').filter((part) => part.length >= 16)]);
}

describe('token exchange and secrets', () => {
  it('saw what it must check: errors, rejections, fetch events, spans and debug lines of exchanges', () => {
    const { captured } = report;
    expect(captured.onError.some((e) => e.includes("'exchange_refused'"))).toBe(true);
    expect(captured.thrown.some((e) => e.includes("'exchange-answer-invalid'"))).toBe(true);
    expect(captured.thrown.some((e) => e.includes("'exchange-network'"))).toBe(true);
    expect(captured.diagnostics.some((d) => d.startsWith('express-verified-user:fetch:exchange'))).toBe(true);
    expect(captured.spans.some((s) => s.includes('express-verified-user fetch exchange'))).toBe(true);
    expect(stderr).toMatch(/refused 403 exchange_refused reason=invalid_target/);
    expect(stderr).toMatch(/refused 503 verification_unavailable reason=exchange-throttled/);
    expect(report.tokens.length).toBeGreaterThanOrEqual(7);
  });

  it('never shows a token or a secret in any of them', () => {
    const { captured } = report;
    const texts = [...captured.onError, ...captured.thrown, ...captured.diagnostics, ...captured.spans, stderr];
    for (const secret of fragments([...report.tokens, ...report.secrets]))
      for (const text of texts) expect(text.includes(secret) ? `${secret} in ${text}` : undefined).toBeUndefined();
  });
});
