// Drivers of docs/mcp.md's code blocks (see __tests__/fixtures/doc-run.ts): each server runs against the MCP
// fixture's oidc-provider (discovery and keys), with tokens it signs for the page's resource.
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
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

/** An RFC 9068 access token for the page's resource, signed by the authorization server (`extra` claims added). */
export function token(as: McpAuthorizationServer, scope: string, extra: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return as.mint({
    sub: 'alice',
    client_id: 'docs-client',
    aud: RESOURCE,
    scope,
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
    ...extra,
  });
}

/** The SDK's 2.x client pinned to MCP 2026-07-28 (its requests carry the standard headers), with a bearer token. */
async function modernClient(origin: string, bearer: string): Promise<Client> {
  const client = new Client(
    { name: 'docs', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    }),
  );
  return client;
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

/** A JSON-RPC request of MCP 2026-07-28: its envelope in `params._meta`. */
function rpc2026(method: string, params: object): object {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'docs', version: '1.0.0' },
  };
  return { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta } };
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
  // Resources, prompts and step-up: each gate refuses without mcp:admin, the step-up without a recent MFA sign-in.
  'mcp-gates': {
    before: `import express from 'express';
import { createTokenAuth } from 'express-verified-user';
import { requireMcpAuth } from 'express-verified-user/mcp';
const auth = createTokenAuth({ issuerBaseURL: 'https://as.example.com', resource: '${RESOURCE}', claims: 'at+jwt' });
const app = express();
const handler: express.RequestHandler = (req, res) => {
  res.json({ scopes: req.auth?.scopes });
};
`,
    after: 'app.listen(3000);\n',
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const server = await t.serve(run);
      const rpc = (method: string, params: object) => ({ jsonrpc: '2.0', id: 1, method, params });
      const post = async (body: object, scope: string, extra: Record<string, unknown>) =>
        call(`${server.origin}/mcp`, { method: 'POST', body, token: await token(as, scope, extra) });
      const mfa = { acr: 'urn:example:mfa', auth_time: Math.floor(Date.now() / 1000) - 60 };
      for (const body of [
        rpc('tools/call', { name: 'reindex' }),
        rpc('resources/read', { uri: 'FILE:///x/../audit.log' }),
        rpc('prompts/get', { name: 'incident' }),
      ]) {
        const short = await post(body, 'mcp:tools', mfa);
        expect(short.status).toBe(403);
        expect(short.headers.get('www-authenticate')).toContain('scope="mcp:tools mcp:admin"');
        expect((await post(body, 'mcp:tools mcp:admin', mfa)).status).toBe(200);
      }
      const noMfa = await post(rpc('tools/list', {}), 'mcp:tools', {});
      expect(noMfa.status).toBe(401);
      expect(noMfa.headers.get('www-authenticate')).toContain(
        'error="insufficient_user_authentication", error_description="Insufficient user authentication", acr_values="urn:example:mfa", max_age="3600"',
      );
      const old = { ...mfa, auth_time: mfa.auth_time - 7200 };
      expect((await post(rpc('tools/list', {}), 'mcp:tools', old)).status).toBe(401);
      expect((await post(rpc('tools/list', {}), 'mcp:tools', mfa)).body).toEqual({ scopes: ['mcp:tools'] });
    },
  },
  // No body parser: the SDK 2.x client's 2026-07-28 requests are gated from their headers alone.
  'mcp-headers-only': {
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const server = await t.serve(run);
      const anonymous = await call(`${server.origin}/mcp`, {
        method: 'POST',
        headers: { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'reindex' },
        body: rpc2026('tools/call', { name: 'reindex', arguments: {} }),
      });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe(
        `Bearer realm="api", scope="mcp:tools mcp:admin", resource_metadata="${METADATA}"`,
      );
      const user = await modernClient(server.origin, await token(as, 'mcp:tools'));
      try {
        await expect(user.callTool({ name: 'reindex', arguments: {} })).rejects.toThrow();
        await expect(user.readResource({ uri: 'file:///audit.log' })).rejects.toThrow();
      } finally {
        await user.close();
      }
      // Base64-encoded, the name is still the gated tool's.
      const encoded = await call(`${server.origin}/mcp`, {
        method: 'POST',
        token: await token(as, 'mcp:tools'),
        headers: {
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/call',
          'Mcp-Name': '=?base64?cmVpbmRleA==?=',
        },
        body: rpc2026('tools/call', { name: 'reindex', arguments: {} }),
      });
      expect(encoded.status).toBe(403);
      const admin = await modernClient(server.origin, await token(as, 'mcp:tools mcp:admin'));
      try {
        await expect(admin.callTool({ name: 'reindex', arguments: {} })).resolves.toMatchObject({
          content: [{ text: 'reindexed' }],
        });
        await expect(admin.readResource({ uri: 'file:///audit.log' })).resolves.toMatchObject({
          contents: [{ text: 'no incidents' }],
        });
      } finally {
        await admin.close();
      }
    },
  },
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
