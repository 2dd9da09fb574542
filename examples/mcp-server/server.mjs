// The MCP server of docs/mcp.md (SDK 1.x), in JavaScript: tools behind express-verified-user/mcp, one of which calls a
// downstream API on the user's behalf through token exchange (docs/exchange.md). Started by run.mjs against a local
// authorization server; `startServer({ issuer, exchange, downstream, log })` answers its origin.
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createTokenAuth } from 'express-verified-user';
import { requireMcpAuth } from 'express-verified-user/mcp';

/** The tools of one request: `builds` trades the token this request carried for one to the downstream API. */
function mcpServer(req, auth, downstream, log) {
  const server = new McpServer({ name: 'example', version: '1.0.0' });
  server.registerTool('builds', { description: 'Recent builds at the CI service, as the user' }, async () => {
    const user = auth.claims(req);
    log.push(`MCP server  tool builds for ${user.sub}: user token (aud ${user.aud}) -> token exchange`);
    const onward = await auth.exchange(req, { resource: downstream, scope: ['builds:read'] });
    log.push(
      `MCP server  token exchange -> ${onward.tokenType} token for ${downstream}, scope ${onward.scope.join(' ')}, ${onward.expiresIn} s`,
    );
    const answer = await fetch(`${downstream}/builds`, { headers: { Authorization: `Bearer ${onward.accessToken}` } });
    if (answer.status !== 200) throw new Error(`the CI service answered ${answer.status}`);
    return { content: [{ type: 'text', text: JSON.stringify(await answer.json()) }] };
  });
  server.registerTool('whoami', { description: 'Who is calling' }, async (extra) => ({
    content: [{ type: 'text', text: `${extra.authInfo?.clientId} with ${extra.authInfo?.scopes.join(' ')}` }],
  }));
  server.registerTool('reindex', { description: 'Rebuild the index (mcp:admin)' }, async () => ({
    content: [{ type: 'text', text: 'reindexed' }],
  }));
  return server;
}

/** Listen on a random loopback port; `resource` needs the port, so routes are mounted once it is known. */
export async function startServer({ issuer, exchange, downstream, log = [] }) {
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
    tokenExchange: { clientId: exchange.clientId, clientSecret: exchange.clientSecret },
  });
  app.use(auth.protectedResourceMetadata());
  app.post(
    '/mcp',
    express.json(),
    requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { reindex: ['mcp:admin'] } }),
    async (req, res) => {
      const server = mcpServer(req, auth, downstream, log);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );

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
