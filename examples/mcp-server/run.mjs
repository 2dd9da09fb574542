// One command (`npm run example:mcp`): a local authorization server (oidc-provider), the MCP server of docs/mcp.md,
// a downstream API, and the SDK's own client. The client signs in, calls a tool, calls one that reaches the downstream
// API through token exchange (docs/exchange.md), steps up for another; every request is printed.
// Exits 0 when all of it worked, 1 otherwise or after 60 s.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.mjs';
import { connect } from './client.mjs';
import { startDownstream } from './downstream.mjs';

const LIMIT_MS = 60_000;
const deadline = setTimeout(() => {
  console.error(`example:mcp: not done within ${LIMIT_MS / 1000} s`);
  process.exit(1);
}, LIMIT_MS);

const as = spawn(process.execPath, [fileURLToPath(new URL('./authorization-server.mjs', import.meta.url))], {
  stdio: ['pipe', 'pipe', 'ignore'],
});
const lines = createInterface({ input: as.stdout })[Symbol.asyncIterator]();
const ask = async (command) => {
  as.stdin.write(`${JSON.stringify(command)}\n`);
  return JSON.parse((await lines.next()).value);
};
let server;
let downstream;
let failed = false;
try {
  const { issuer, exchangeSecret } = JSON.parse((await lines.next()).value);
  const serverLog = [];
  downstream = await startDownstream({ issuer, log: serverLog });
  server = await startServer({
    issuer,
    exchange: { clientId: 'mcp-exchange', clientSecret: exchangeSecret },
    downstream: downstream.resource,
    log: serverLog,
  });
  const url = `${server.origin}/mcp`;
  // The authorization server's policy: this MCP server may trade its users' tokens for builds:read at the CI API.
  await ask({
    command: 'allowExchange',
    clientId: 'mcp-exchange',
    resource: url,
    targets: { [downstream.resource]: ['builds:read'] },
  });
  const log = [];
  console.log(
    `authorization server ${issuer}\nMCP server           ${url}\ndownstream API       ${downstream.resource}\n`,
  );
  const client = await connect(url, 'alice', log);
  const whoami = await client.call('whoami');
  const builds = JSON.parse((await client.call('builds')) ?? '{}');
  const reindex = await client.call('reindex');
  await client.close();
  const exchanges = (await ask({ command: 'log' })).log.filter((line) => line.startsWith('token exchange'));
  console.log(
    `whoami  -> ${whoami}\nbuilds  -> ${JSON.stringify(builds)}\nreindex -> ${reindex}\n\nrequests, in order (client side):\n  ${log.join('\n  ')}\n\nthe MCP server and the downstream API, in order:\n  ${serverLog.join('\n  ')}\n\nthe authorization server's token endpoint:\n  ${exchanges.join('\n  ')}`,
  );
  if (!/mcp:tools/.test(whoami ?? '') || reindex !== 'reindexed') throw new Error('unexpected tool answers');
  if (builds.audience !== downstream.resource || builds.actors?.[0] !== 'mcp-exchange')
    throw new Error('the downstream API did not see a token of its own audience, with the MCP server acting');
  console.log('\nexample:mcp: ok');
} catch (err) {
  failed = true;
  console.error('example:mcp: failed:', err);
} finally {
  await server?.close();
  await downstream?.close();
  as.stdin.end();
  clearTimeout(deadline);
}
process.exitCode = failed ? 1 : 0;
