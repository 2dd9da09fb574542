// The MCP server of docs/mcp.md (SDK 1.x), in JavaScript: tools behind express-verified-user/mcp. Started by run.mjs
// against a local authorization server; `startServer({ issuer })` answers its origin and request log.
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createTokenAuth } from 'express-verified-user';
import { requireMcpAuth } from 'express-verified-user/mcp';

function mcpServer() {
  const server = new McpServer({ name: 'example', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Who is calling' }, async (extra) => ({
    content: [{ type: 'text', text: `${extra.authInfo?.clientId} with ${extra.authInfo?.scopes.join(' ')}` }],
  }));
  server.registerTool('reindex', { description: 'Rebuild the index (mcp:admin)' }, async () => ({
    content: [{ type: 'text', text: 'reindexed' }],
  }));
  return server;
}

/** Listen on a random loopback port; `resource` needs the port, so routes are mounted once it is known. */
export async function startServer({ issuer }) {
  const app = express();
  const log = [];
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
  });
  app.use(auth.protectedResourceMetadata());
  app.post(
    '/mcp',
    express.json(),
    requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { reindex: ['mcp:admin'] } }),
    async (req, res) => {
      const server = mcpServer();
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
