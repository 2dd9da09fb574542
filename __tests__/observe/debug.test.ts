import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runReportingChild } from '../fixtures/child';

interface ChildRun {
  stderr: string;
  report: { tokens: Record<string, string>; hints: string[]; status: number };
}

/** Run the refusing child, with NODE_DEBUG as given (and nothing else of the parent's NODE_DEBUG). */
const run = (nodeDebug: string | undefined): Promise<ChildRun> =>
  runReportingChild<ChildRun['report']>('debug-refusals.js', nodeDebug);

const STRICT =
  "claims: 'strict' (the default with option \"key\") accepts only the identity service's Shape B; tokens of other authorization servers (OpenID Connect, RFC 9068) need claims: 'jwt' or 'at+jwt'";
const SHAPE = (claim: string) => `(Shape B's ${claim} is missing or malformed; ${STRICT})`;
const SIGNATURE =
  '(the signature does not verify with option "key.secret": the token was signed with another key (check that issuer and app read the same secret))';

describe('NODE_DEBUG=express-verified-user', () => {
  let debug: ChildRun;
  beforeAll(async () => {
    debug = await run('express-verified-user');
  }, 30_000);

  const lines = () =>
    debug.stderr
      .trim()
      .split('\n')
      .map((line) => line.replace(/^EXPRESS-VERIFIED-USER \d+: /, ''));

  it('prints one line per refusal: status, code, reason, iss, aud, kid, alg, and the hint: what was expected, from which option', () => {
    expect(lines()).toEqual([
      `refused 401 invalid_token reason=shape:providers iss="https://tenant.example/" aud="api" kid="k1" alg="HS256" ${SHAPE('providers')}`,
      `refused 401 invalid_token reason=shape:scopes iss="https://tenant.example/" aud="api" kid="k1" alg="HS256" ${SHAPE('scopes')}`,
      `refused 401 invalid_token reason=shape:scopes iss="evil\\nrefused 401 fake" aud="api" kid="k2" alg="HS256" ${SHAPE('scopes')}`,
      `refused 401 invalid_token reason=signature iss="https://tenant.example/" aud="api" kid="k1" alg="HS256" ${SIGNATURE}`,
      `refused 401 invalid_token reason=shape:scopes iss="${'i'.repeat(128)}…" aud="api" kid="${'k'.repeat(128)}…" alg="HS256" ${SHAPE('scopes')}`,
      // A wrong aud shows as iss does: quoted, escaped, cut, and of an array its first four items.
      `refused 401 invalid_token reason=aud iss="https://tenant.example/" aud=["other-api", "x\\u2028refused 401 fake", "c", "d", …] kid="k1" alg="HS256" (expected aud "api", from option "audience"; the authorization server must issue the token for this API (its identifier, or an RFC 8707 resource indicator))`,
      'refused 401 invalid_token reason=iss iss="https://tenant.example/" aud="api" kid="k1" alg="HS256" (expected iss "https://a.example" or "https://b.example", from option "issuer")',
      `refused 401 invalid_token reason=shape:scopes iss="https://tenant.example/" aud="api" kid="k1" alg="HS256" ${SHAPE('scopes')}`,
    ]);
    expect(debug.report.status).toBe(401);
  });

  it('docs/observability.md shows the wrong-aud line as printed', () => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'observability.md'), 'utf8');
    const shown = /## `NODE_DEBUG` lines[\s\S]*?```text\n(.*)\n```/.exec(page)?.[1];
    expect(shown?.replace(/^EXPRESS-VERIFIED-USER \d+: /, '')).toBe(lines()[5]);
  });

  it("ends each refusal's line with the same hint onError gets as err.hint", () => {
    expect(debug.report.hints).toHaveLength(8);
    expect(lines().map((line) => /\((.*)\)$/.exec(line)?.[1])).toEqual(debug.report.hints);
  });

  it('never prints a token or any part of one', () => {
    for (const token of Object.values(debug.report.tokens)) {
      for (const part of token.split('.')) {
        for (let at = 0; at + 12 <= part.length; at += 6) expect(debug.stderr).not.toContain(part.slice(at, at + 12));
      }
    }
  });

  it('prints nothing without NODE_DEBUG, or with another section', async () => {
    expect((await run(undefined)).stderr).toBe('');
    expect((await run('http')).stderr).not.toContain('EXPRESS-VERIFIED-USER');
  }, 30_000);
});
