/**
 * Hostile text in logs: a forged token's kid, iss, alg, typ, aud and Shape B provider names, and a key address's
 * content type, carrying every character a log reader may take as a line break or a terminal or bidi control,
 * reach no NODE_DEBUG line and no err.hint raw (base/printable.ts). The refusals run in a child process started
 * with NODE_DEBUG=express-verified-user (__tests__/fixtures/hostile-text.js).
 */
import { runReportingChild } from '../fixtures/child';

interface Report {
  refusals: Array<{ reason: string; hint: string }>;
  status: number;
  hostile: string;
}

/* eslint-disable no-control-regex -- these patterns match control characters on purpose */
/** Every line terminator a reader may split on: LF, CR, VT, FF, FS, GS, RS (Python), NEL, LS, PS (Java's \R). */
const LINE_BREAKS = /\r\n|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/;
/** Every character base/printable.ts escapes: C0, DEL, C1, separators, bidi controls, lone surrogates. */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/* eslint-enable no-control-regex */

describe('hostile text from a token or a key address', () => {
  let stderr: string;
  let report: Report;
  beforeAll(async () => {
    ({ stderr, report } = await runReportingChild<Report>('hostile-text.js', 'express-verified-user'));
  }, 30_000);

  it('refuses each token and the key address, one refusal each', () => {
    expect(report.refusals.map((refusal) => refusal.reason)).toEqual([
      'signature',
      'iss',
      'alg',
      'typ',
      'aud',
      'shape:providers[1].id',
      'jwks-fetch',
    ]);
    expect(report.status).toBe(401);
    // The fixture's own text really carries each class (the check below would pass vacuously otherwise).
    expect(report.hostile).toMatch(/\u2028/);
    expect(report.hostile).toMatch(/\u009b/);
    expect(report.hostile).toMatch(/\ud800/);
  });

  it('prints one NODE_DEBUG line per refusal, whatever splits lines, and none holds a control raw', () => {
    const text = stderr.trimEnd();
    expect(text.split(LINE_BREAKS)).toHaveLength(7);
    for (const line of text.split('\n')) {
      expect(line).toMatch(/^EXPRESS-VERIFIED-USER \d+: refused /);
      expect(line).not.toMatch(UNSAFE);
    }
  });

  it('shows the hostile values escaped: kid, iss, alg and aud quoted, the content type quoted', () => {
    const escaped = '"a\\nb\\rc\\u000bd\\fe\\u001bf\\u001cg\\u007fh\\u0080i\\u0085j\\u009bk\\u009fl\\u2028m\\u2029n';
    const lines = stderr.trimEnd().split('\n');
    expect(lines[0]).toContain(`kid=${escaped}`);
    expect(lines[1]).toContain(`iss=${escaped}`);
    expect(lines[2]).toContain(`alg="HS256${escaped.slice(1)}`);
    expect(lines[4]).toContain(`aud=[${escaped}`);
    expect(lines[4]).toContain('\\u202ao\\u202ep\\u2066q\\u2069r\\u200es\\u200ft\\u061cu\\ud800v\\udfffw"');
    expect(lines[6]).toMatch(/content-type "text\/html.?\\u0085x.?\\u009b2J"/);
  });

  it('gives onError each hint on one line, no control raw (the same text the debug line ends with)', () => {
    for (const { hint } of report.refusals) {
      expect(hint.split(LINE_BREAKS)).toHaveLength(1);
      expect(hint).not.toMatch(UNSAFE);
    }
    const lines = stderr.trimEnd().split('\n');
    expect(lines.map((line) => /\((.*)\)$/.exec(line)?.[1])).toEqual(report.refusals.map((r) => r.hint));
  });

  it('names an unknown Shape B provider by its position: the reason carries none of the token text', () => {
    const shape = report.refusals[5];
    expect(shape.reason).toBe('shape:providers[1].id');
    expect(shape.hint).toMatch(/^Shape B's providers\[1\]\.id is missing or malformed \(a provider or field/);
  });
});
