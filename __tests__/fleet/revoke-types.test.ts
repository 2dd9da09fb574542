import path from 'node:path';
import ts from 'typescript';
import { diagnostics } from '../fixtures/type-check';

// `store.revoke(claims.jti, claims.exp)` did not compile in claims: 'jwt' mode, the default with `issuerBaseURL`
// (issue 20); `store.revoke(auth.claims(req))` does, in every mode.

describe('revoke() in a logout route, claims: jwt (issuerBaseURL)', () => {
  const file = path.join(__dirname, '..', 'types', 'revoke.ts');

  it('revoke(auth.claims(req)) type-checks, and the old revoke(claims.jti, claims.exp) is still marked as an error', () => {
    expect(diagnostics(file)).toEqual([]);
  });

  it('without the marker, revoke(claims.jti, claims.exp) is an error: jti is unknown in this mode', () => {
    const unmarked = (ts.sys.readFile(file) ?? '').replace(/^\s*\/\/ @ts-expect-error.*$/gm, '//');
    const errors = diagnostics(file, unmarked);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/'unknown' is not assignable to parameter of type 'string'/);
  });
});
