// The MCP server of docs/mcp.md, in JavaScript, in each of the page's three shapes (`shape`): the SDK 1.x transport
// ('sdk1', the default), the SDK 2.x Node transport ('sdk2') and the SDK 2.x `createMcpHandler` ('handler'), all
// behind express-verified-user/mcp and mounted with `app.all`, so GET and DELETE reach the transport too. One tool
// calls a downstream API on the user's behalf through token exchange (docs/exchange.md). Started by run.mjs
// against a local authorization server; `startServer({ issuer, exchange, downstream, log, shape })` answers its
// origin. conformance.mjs starts it with `conformance: true` (the suite's fixtures) and `gate: false` (no
// requireMcpAuth: the score the gate must not lower).
import express from 'express';
import { McpServer as McpServer1, ResourceTemplate as Template1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpServer as McpServer2, ResourceTemplate as Template2, createMcpHandler } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { createTokenAuth } from 'express-verified-user';
import { requireMcpAuth } from 'express-verified-user/mcp';
import { registerConformanceFixtures } from './conformance-fixtures.mjs';

/** The tools of one SDK line's server; `builds` trades the token its request carried for one to the downstream API. */
function mcpServer(line, { auth, downstream, log, conformance }) {
  const server = line === 1 ? new McpServer1(INFO) : new McpServer2(INFO);
  // 1.x hands a tool `extra.authInfo`, 2.x `ctx.http.authInfo`: the AuthInfo requireMcpAuth left on req.auth.
  const authInfo = (extra) => (line === 1 ? extra.authInfo : extra.http?.authInfo);
  const tool = (name, description, run) =>
    server.registerTool(name, { description, inputSchema: z.object({}) }, async (_args, extra) => ({
      content: [{ type: 'text', text: await run(authInfo(extra)) }],
    }));
  tool('builds', 'Recent builds at the CI service, as the user', async (info) => {
    log.push(
      `MCP server  tool builds for ${info.extra.claims.sub}: user token (aud ${info.resource}) -> token exchange`,
    );
    const onward = await auth.exchange(info.token, { resource: downstream, scope: ['builds:read'] });
    log.push(
      `MCP server  token exchange -> ${onward.tokenType} token for ${downstream}, scope ${onward.scope.join(' ')}, ${onward.expiresIn} s`,
    );
    const answer = await fetch(`${downstream}/builds`, { headers: { Authorization: `Bearer ${onward.accessToken}` } });
    if (answer.status !== 200) throw new Error(`the CI service answered ${answer.status}`);
    return JSON.stringify(await answer.json());
  });
  tool('whoami', 'Who is calling', async (info) => `${info?.clientId} with ${info?.scopes.join(' ')}`);
  tool('reindex', 'Rebuild the index (mcp:admin)', async () => 'reindexed');
  if (conformance) registerConformanceFixtures(server, line === 1 ? Template1 : Template2);
  return server;
}
const INFO = { name: 'example', version: '1.0.0' };

/** The endpoint's handler for one shape: a server and transport per request (stateless), or the 2.x handler. */
function endpoint(shape, context) {
  if (shape === 'handler') {
    const mcp = toNodeHandler(createMcpHandler(() => mcpServer(2, context)));
    // The gate read the body, so the stream is consumed: the transport takes it from req.body.
    return (req, res) => mcp(req, res, req.body);
  }
  const line = shape === 'sdk1' ? 1 : 2;
  return async (req, res) => {
    const server = mcpServer(line, context);
    const transport =
      line === 1
        ? new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
        : new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
}

/** Listen on a random loopback port; `resource` needs the port, so routes are mounted once it is known. */
export async function startServer({
  issuer,
  exchange,
  downstream,
  log = [],
  shape = 'sdk1',
  gate = true,
  conformance = false,
}) {
  if (!['sdk1', 'sdk2', 'handler'].includes(shape)) throw new TypeError(`unknown shape ${shape}`);
  const app = express();
  app.use((req, res, next) => {
    res.on('finish', () => {
      const challenge = res.getHeader('www-authenticate');
      log.push(
        `MCP server  ${req.method} ${req.path} -> ${res.statusCode}${challenge ? `  WWW-Authenticate: ${challenge}` : ''}`,
      );
    });
    next();
  });
  const listening = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  const origin = `http://127.0.0.1:${listening.address().port}`;

  const auth = createTokenAuth({
    issuerBaseURL: issuer,
    resource: `${origin}/mcp`,
    scopesSupported: ['mcp:tools', 'mcp:admin'],
    claims: 'at+jwt',
    // RFC 8693 at the authorization server's token endpoint, for the `builds` tool's onward call.
    ...(exchange === undefined
      ? {}
      : { tokenExchange: { clientId: exchange.clientId, clientSecret: exchange.clientSecret } }),
  });
  app.use(auth.protectedResourceMetadata());
  const handler = endpoint(shape, { auth, downstream, log, conformance });
  if (gate)
    app.all('/mcp', requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { reindex: ['mcp:admin'] } }), handler);
  else app.all('/mcp', handler);

  return {
    origin,
    log,
    close() {
      auth.close();
      listening.closeAllConnections();
      return new Promise((resolve) => listening.close(resolve));
    },
  };
}
