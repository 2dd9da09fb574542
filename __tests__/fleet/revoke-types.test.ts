import path from 'node:path';
import ts from 'typescript';

// `store.revoke(claims.jti, claims.exp)` did not compile in claims: 'jwt' mode, the default with `issuerBaseURL`
// (issue 20); `store.revoke(auth.claims(req))` does, in every mode.

function diagnostics(file: string, source?: string): string[] {
  const options: ts.CompilerOptions = {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10, esModuleInterop: true, skipLibCheck: true, types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  if (source !== undefined) {
    const original = host.getSourceFile;
    host.getSourceFile = (name, version, ...rest) =>
      path.resolve(name) === path.resolve(file) ? ts.createSourceFile(name, source, version) : original.call(host, name, version, ...rest);
  }
  return ts.getPreEmitDiagnostics(ts.createProgram([file], options, host)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

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
