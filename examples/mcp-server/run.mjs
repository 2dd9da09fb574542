// One command (`npm run example:mcp`): a local authorization server (oidc-provider), the MCP server of docs/mcp.md
// and the SDK's own client. The client signs in, calls a tool, steps up for another; every request is printed.
// Exits 0 when all of it worked, 1 otherwise or after 60 s.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.mjs';
import { connect } from './client.mjs';

const LIMIT_MS = 60_000;
const deadline = setTimeout(() => {
  console.error(`example:mcp: not done within ${LIMIT_MS / 1000} s`);
  process.exit(1);
}, LIMIT_MS);

const as = spawn(process.execPath, [fileURLToPath(new URL('./authorization-server.mjs', import.meta.url))], {
  stdio: ['pipe', 'pipe', 'ignore'],
});
const lines = createInterface({ input: as.stdout })[Symbol.asyncIterator]();
let server;
let failed = false;
try {
  const { issuer } = JSON.parse((await lines.next()).value);
  server = await startServer({ issuer });
  const url = `${server.origin}/mcp`;
  const log = [];
  console.log(`authorization server ${issuer}\nMCP server           ${url}\n`);
  const client = await connect(url, 'alice', log);
  const whoami = await client.call('whoami');
  const reindex = await client.call('reindex');
  await client.close();
  console.log(
    `whoami  -> ${whoami}\nreindex -> ${reindex}\n\nrequests, in order (client side):\n  ${log.join('\n  ')}\n\nanswers of the MCP server:\n  ${server.log.join('\n  ')}`,
  );
  if (!/mcp:tools/.test(whoami ?? '') || reindex !== 'reindexed') throw new Error('unexpected tool answers');
  console.log('\nexample:mcp: ok');
} catch (err) {
  failed = true;
  console.error('example:mcp: failed:', err);
} finally {
  await server?.close();
  as.stdin.end();
  clearTimeout(deadline);
}
process.exitCode = failed ? 1 : 0;
