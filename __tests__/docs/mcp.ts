// Drivers of docs/mcp.md's code blocks (see __tests__/fixtures/doc-run.ts): each server runs against the MCP
// fixture's oidc-provider (discovery and keys), with tokens it signs for the page's resource.
import { randomUUID } from 'node:crypto';
import { call, type Answer, type DocDrivers, type DocRun, type RunOptions } from '../fixtures/doc-run';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';

/** The page's resource and its metadata document's URL. */
export const RESOURCE = 'https://mcp.example.com/mcp';
const METADATA = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';

/** The authorization server, and the page's example host pointed at it. */
export async function authorizationServer(t: DocRun): Promise<{ as: McpAuthorizationServer; run: RunOptions }> {
  const as = t.own(await startMcpAuthorizationServer());
  return { as, run: { replace: { "'https://as.example.com'": `'${as.issuer}'` } } };
}

/** An RFC 9068 access token for the page's resource, signed by the authorization server. */
export function token(as: McpAuthorizationServer, scope: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return as.mint({
    sub: 'alice',
    client_id: 'docs-client',
    aud: RESOURCE,
    scope,
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
  });
}

/** A `tools/call` as the SDK's client sends it; the JSON-RPC answer read from JSON or from its one SSE event. */
export async function callTool(origin: string, name: string, bearer?: string): Promise<Answer & { text?: string }> {
  const answer = await call(`${origin}/mcp`, {
    method: 'POST',
    token: bearer,
    headers: { Accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } },
  });
  const data = typeof answer.body === 'string' ? /^data: (.*)$/m.exec(answer.body)?.[1] : undefined;
  const rpc = (data === undefined ? answer.body : JSON.parse(data)) as {
    result?: { content?: Array<{ text?: string }> };
  };
  return { ...answer, text: rpc?.result?.content?.[0]?.text };
}

/** What every page server answers before any tool runs: its metadata document, and 401 with the way to sign in. */
export async function expectProtectedResource(origin: string, issuer: string): Promise<void> {
  const metadata = await call(`${origin}/.well-known/oauth-protected-resource/mcp`);
  expect(metadata.status).toBe(200);
  expect(metadata.body).toMatchObject({
    resource: RESOURCE,
    authorization_servers: [issuer],
    scopes_supported: ['mcp:tools', 'mcp:admin'],
  });
  const anonymous = await callTool(origin, 'whoami');
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.get('www-authenticate')).toBe(
    `Bearer realm="api", scope="mcp:tools", resource_metadata="${METADATA}"`,
  );
}

/** requireBearerAuth with mcpTokenVerifier: the SDK's 401, the verified AuthInfo, the SDK's 403. */
async function expectBearerAuth(origin: string, as: McpAuthorizationServer): Promise<void> {
  const anonymous = await call(`${origin}/mcp`, { method: 'POST', body: {} });
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.get('www-authenticate')).toContain(`resource_metadata="${METADATA}"`);
  const good = await call(`${origin}/mcp`, { method: 'POST', body: {}, token: await token(as, 'mcp:tools') });
  expect(good.status).toBe(200);
  expect(good.body).toEqual({ clientId: 'docs-client', scopes: ['mcp:tools'], resource: RESOURCE });
  const short = await call(`${origin}/mcp`, { method: 'POST', body: {}, token: await token(as, 'mcp:admin') });
  expect(short.status).toBe(403);
  expect(short.body).toMatchObject({ error: 'insufficient_scope' });
}

export const drivers: DocDrivers = {
  // The 1.x server: metadata, 401 with its challenge, whoami (X-Subject), reindex refused without mcp:admin.
  'mcp-server-sdk1': {
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const server = await t.serve(run);
      await expectProtectedResource(server.origin, as.issuer);
      const whoami = await callTool(server.origin, 'whoami', await token(as, 'mcp:tools'));
      expect(whoami.status).toBe(200);
      expect(whoami.headers.get('x-subject')).toBe('alice');
      expect(whoami.text).toBe('docs-client with mcp:tools');
      const refused = await callTool(server.origin, 'reindex', await token(as, 'mcp:tools'));
      expect(refused.status).toBe(403);
      expect(refused.headers.get('www-authenticate')).toContain(
        'error="insufficient_scope", scope="mcp:tools mcp:admin"',
      );
      const reindex = await callTool(server.origin, 'reindex', await token(as, 'mcp:tools mcp:admin'));
      expect(reindex.status).toBe(200);
      expect(reindex.text).toBe('reindexed');
    },
  },
  // The 2.x server: the same gate; the tool reads ctx.http.authInfo.
  'mcp-server-sdk2': {
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const server = await t.serve(run);
      await expectProtectedResource(server.origin, as.issuer);
      const whoami = await callTool(server.origin, 'whoami', await token(as, 'mcp:tools'));
      expect(whoami.status).toBe(200);
      expect(whoami.text).toBe('docs-client');
    },
  },
  // The SDK's requireBearerAuth over mcpTokenVerifier, 1.x as shown, then 2.x with the import the comment names.
  // This repository installs both SDK lines, so each run says which (`{ sdk }`); an app with one line needs not.
  'mcp-bearer-auth': {
    before: `import express from 'express';
import { createTokenAuth } from 'express-verified-user';
const auth = createTokenAuth({ issuerBaseURL: 'https://as.example.com', resource: '${RESOURCE}', claims: 'at+jwt' });
const app = express();
const mcpHandler: express.RequestHandler = (req, res) => {
  res.json({ clientId: req.auth?.clientId, scopes: req.auth?.scopes, resource: req.auth?.resource?.href });
};
`,
    after: 'app.listen(3000);\n',
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const sdk1 = await t.serve({
        replace: { ...run.replace, 'mcpTokenVerifier(auth)': 'mcpTokenVerifier(auth, { sdk: 1 })' },
      });
      await expectBearerAuth(sdk1.origin, as);
      const sdk2 = await t.serve({
        replace: {
          ...run.replace,
          "'@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js'": "'@modelcontextprotocol/express'",
          'mcpTokenVerifier(auth)': 'mcpTokenVerifier(auth, { sdk: 2 })',
        },
      });
      await expectBearerAuth(sdk2.origin, as);
    },
  },
};
