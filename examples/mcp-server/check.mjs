// `npx express-verified-user check` against the MCP server of this example (docs/mcp.md, "Checking a deployment"):
// a local authorization server (oidc-provider), the server of server.mjs, then the package's own command run
// against it, with a token issued for another audience that the server must refuse. Prints the command's lines;
// exits with its exit code (0: no FAIL), or 1 after 60 s.
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { startServer } from './server.mjs';

const LIMIT_MS = 60_000;
const deadline = setTimeout(() => {
  console.error(`example:mcp check: not done within ${LIMIT_MS / 1000} s`);
  process.exit(1);
}, LIMIT_MS);

// The command as `npx express-verified-user` runs it: the package's "bin".
const packageJson = fileURLToPath(import.meta.resolve('express-verified-user/package.json'));
const bin = fileURLToPath(
  new URL(JSON.parse(readFileSync(packageJson, 'utf8')).bin['express-verified-user'], `file://${packageJson}`),
);

const as = spawn(process.execPath, [fileURLToPath(new URL('./authorization-server.mjs', import.meta.url))], {
  stdio: ['pipe', 'pipe', 'ignore'],
});
const lines = createInterface({ input: as.stdout })[Symbol.asyncIterator]();
let server;
let code = 1;
try {
  const { issuer, serviceClient } = JSON.parse((await lines.next()).value);
  server = await startServer({ issuer });
  const url = `${server.origin}/mcp`;
  // A real token of the same authorization server, for another resource: RFC 8707 says this server must refuse it.
  const answer = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${serviceClient.client_id}:${serviceClient.client_secret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'mcp:tools',
      resource: 'http://127.0.0.1:9/other',
    }),
  });
  const { access_token: otherAudience } = await answer.json();
  console.log(`$ npx express-verified-user check ${url} --token <a token for another audience>\n`);
  code = await new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, 'check', url, '--token', otherAudience, '--timeout', '30s'], {
      timeout: 45_000,
      encoding: 'utf8',
    });
    child.stdout.pipe(process.stdout);
    child.stderr.pipe(process.stderr);
    child.on('exit', (exit) => resolve(exit ?? 1));
  });
  console.log(`\nexample:mcp check: ${code === 0 ? 'ok' : `failed (exit code ${code})`}`);
} catch (err) {
  console.error('example:mcp check: failed:', err);
} finally {
  await server?.close();
  as.stdin.end();
  clearTimeout(deadline);
}
process.exitCode = code;
