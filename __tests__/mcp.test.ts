// The MCP servers of docs/mcp.md, in TypeScript, compile under --strict with skipLibCheck off, with the SDK's
// declarations (1.x and 2.x) loaded and no cast; without the mcp entry's req.auth switch they do not (TS2345/TS2430).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '..');
const SWITCH = path.join(root, 'types', 'mcp-request.d.ts');
const docs = fs.readFileSync(path.join(root, 'docs', 'mcp.md'), 'utf8');
const [server1, server2] = [...docs.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) =>
  m[1]
    .replace("from 'express-verified-user/mcp'", `from '${path.join(root, 'lib', 'mcp')}'`)
    .replace("from 'express-verified-user'", `from '${path.join(root, 'lib')}'`),
);

const BEARER_1 = `import express from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createTokenAuth } from '${path.join(root, 'lib')}';
import { mcpTokenVerifier } from '${path.join(root, 'lib', 'mcp')}';
const auth = createTokenAuth({ issuerBaseURL: 'https://as.example.com', resource: 'https://mcp.example.com/mcp', claims: 'at+jwt' });
const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
express().post('/mcp', express.json(), requireBearerAuth({ verifier: mcpTokenVerifier(auth), requiredScopes: ['mcp:tools'] }), async (req, res) => {
  const scopes: string[] | undefined = req.auth?.scopes;
  res.setHeader('X-Scopes', String(scopes));
  await transport.handleRequest(req, res, req.body);
});
`;
const BEARER_2 = BEARER_1.replace(
  "import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';",
  "import { requireBearerAuth } from '@modelcontextprotocol/express';",
).replace(
  "import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';",
  "import { NodeStreamableHTTPServerTransport as StreamableHTTPServerTransport } from '@modelcontextprotocol/node';",
);
const REST = `import express from 'express';
import { createTokenAuth } from '${path.join(root, 'lib')}';
import '${path.join(root, 'lib', 'mcp')}';
const auth = createTokenAuth({ issuerBaseURL: 'https://as.example.com', audience: 'api', claims: 'at+jwt' });
express().get('/me', auth.requireVerifiedUser(), (req, res) => { res.json({ sub: req.auth?.sub }); });
`;

// Each program reuses the files of the one before (a full check with skipLibCheck off is slow on a shared machine).
let previous: ts.Program | undefined;

/** Diagnostics of a program made of these sources (name → text), with or without the mcp entry's switch. */
function diagnostics(sources: Record<string, string>, withSwitch: boolean): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    types: ['node'],
  };
  const files = Object.fromEntries(
    Object.entries(sources).map(([name, text]) => [path.join(root, '__tests__', 'mcp', name), text]),
  );
  const host = ts.createCompilerHost(options);
  const original = host.getSourceFile;
  host.getSourceFile = (name, version, ...rest) =>
    files[name] !== undefined
      ? ts.createSourceFile(name, files[name], version)
      : original.call(host, name, version, ...rest);
  const original2 = host.fileExists;
  host.fileExists = (name) => files[name] !== undefined || original2.call(host, name);
  const program = ts.createProgram([...Object.keys(files), ...(withSwitch ? [SWITCH] : [])], options, host, previous);
  previous = program;
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('docs/mcp.md in TypeScript (strict, skipLibCheck off)', () => {
  jest.setTimeout(120_000);

  it('both servers compile together, with the SDK 2.x Express declarations loaded and no cast; claims are not read from req.auth', () => {
    expect(server1).toContain('transport.handleRequest(req, res, req.body)');
    expect(server2).toContain('transport.handleRequest(req, res, req.body)');
    expect(`${server1}${server2}`).not.toMatch(/ as (?!const)/);
    // The one error: a program that loads the mcp entry reads claims through auth.claims(req), not req.auth.
    const errors = diagnostics(
      { 'server1.ts': server1, 'server2.ts': server2, 'bearer2.ts': BEARER_2, 'rest.ts': REST },
      true,
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/rest\.ts: TS2339 Property 'sub' does not exist/);
  });

  it("the 1.x server with the 1.x SDK's requireBearerAuth and mcpTokenVerifier (its req.auth declaration loaded)", () => {
    expect(diagnostics({ 'server1.ts': server1, 'bearer1.ts': BEARER_1 }, true)).toEqual([]);
  });

  it('without the switch, the two req.auth declarations clash: the bug of the issue', () => {
    expect(diagnostics({ 'server1.ts': server1 }, false).join('\n')).toMatch(/server1.ts: TS2345/);
    expect(diagnostics({ 'server1.ts': server1, 'bearer2.ts': BEARER_2 }, false).join('\n')).toMatch(/TS2430/);
  });
});
