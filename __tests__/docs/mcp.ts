// Drivers of docs/mcp.md's code blocks (see __tests__/fixtures/doc-run.ts): each server runs against the MCP
// fixture's oidc-provider (discovery and keys), with tokens it signs for the page's resource; the step-up pair (the
// page's own oidc-provider and the SDK's client) runs with the page's SDK 1.x server, a test acting as the user.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readDocs } from '../fixtures/doc-blocks';
import {
  call,
  docRun,
  freePort,
  type Answer,
  type DocDrivers,
  type DocRun,
  type RunOptions,
} from '../fixtures/doc-run';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';
import { signInAtDevInteractions } from '../fixtures/dev-interactions';

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

/**
 * A page server behind requireMcpAuth, no body parser: a 2025-era `tools/call` of `reindex` is refused 403 without
 * mcp:admin and served with it; GET and DELETE reach the transport (not 404) and need a token.
 */
async function expectGatedTools(origin: string, as: McpAuthorizationServer): Promise<void> {
  const refused = await callTool(origin, 'reindex', await token(as, 'mcp:tools'));
  expect(refused.status).toBe(403);
  expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="mcp:tools mcp:admin"');
  const reindex = await callTool(origin, 'reindex', await token(as, 'mcp:tools mcp:admin'));
  expect({ status: reindex.status, text: reindex.text }).toEqual({ status: 200, text: 'reindexed' });
  for (const method of ['GET', 'DELETE']) {
    expect({ method, status: (await call(`${origin}/mcp`, { method })).status }).toEqual({ method, status: 401 });
    const answer = await fetch(`${origin}/mcp`, {
      method,
      headers: { Authorization: `Bearer ${await token(as, 'mcp:tools')}`, Accept: 'text/event-stream' },
    });
    await answer.body?.cancel();
    expect({ method, reached: ![401, 404, 500].includes(answer.status) }).toEqual({ method, reached: true });
  }
}

const SIGNING_JWKS = JSON.stringify({
  keys: [{ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'k1' }],
});

/** The page's own oidc-provider (mcp-step-up-as) on a loopback port, for the MCP server at `resource`. */
async function startStepUpServer(
  t: DocRun,
  resource: string,
  replace: Record<string, string> = {},
): Promise<{ issuer: string }> {
  const block = readDocs().blocks.find((b) => b.id === 'mcp-step-up-as');
  if (block === undefined) throw new Error('docs/mcp.md: the mcp-step-up-as block is gone');
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = t.own(docRun(block, drivers['mcp-step-up-as']));
  await provider.serve({
    port,
    replace: {
      "'https://as.example.com'": `'${issuer}'`,
      "'https://mcp.example.com/mcp'": `'${resource}'`,
      ...replace,
    },
    env: { SIGNING_JWKS },
  });
  return { issuer };
}

/** What `pattern`'s first group matches the `index`-th time in what a block prints, once it has (bounded: 20 s). */
async function printed(stdout: () => string, pattern: RegExp, index = 0): Promise<string> {
  const until = Date.now() + 20_000;
  const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
  for (;;) {
    const found = [...stdout().matchAll(global)][index]?.[1];
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`never printed ${pattern}:\n${stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
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
  // createMcpHandler, no body parser: 2025-era calls and the 2.x client pinned to 2026-07-28, both gated by the body
  // the gate read; headers that disagree with it answered -32020, as the SDK's server answers them.
  'mcp-server-handler': {
    async run(t) {
      const { as, run } = await authorizationServer(t);
      const server = await t.serve(run);
      await expectProtectedResource(server.origin, as.issuer);
      await expectGatedTools(server.origin, as);
      const user = await modernClient(server.origin, await token(as, 'mcp:tools'));
      try {
        await expect(user.callTool({ name: 'reindex', arguments: {} })).rejects.toThrow();
        await expect(user.readResource({ uri: 'file:///audit.log' })).rejects.toThrow();
        await expect(user.callTool({ name: 'whoami', arguments: {} })).resolves.toMatchObject({
          content: [{ text: 'docs-client' }],
        });
      } finally {
        await user.close();
      }
      const mismatch = await call(`${server.origin}/mcp`, {
        method: 'POST',
        token: await token(as, 'mcp:tools mcp:admin'),
        headers: {
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/call',
          'Mcp-Name': 'whoami',
        },
        body: rpc2026('tools/call', { name: 'reindex', arguments: {} }),
      });
      expect({ status: mismatch.status, body: mismatch.body }).toMatchObject({
        status: 400,
        body: { error: { code: -32020 }, id: 1 },
      });
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
      await expectGatedTools(server.origin, as);
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
      await expectGatedTools(server.origin, as);
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
  // The page's authorization server: dynamic registration keeps no `scope` for the client (the validator).
  'mcp-step-up-as': {
    async run(t) {
      const register = (issuer: string) =>
        call(`${issuer}/reg`, {
          method: 'POST',
          body: {
            redirect_uris: ['http://127.0.0.1:9/callback'],
            token_endpoint_auth_method: 'none',
            scope: 'mcp:tools',
          },
        });
      const { issuer } = await startStepUpServer(t, 'http://127.0.0.1:9/mcp');
      const registered = await register(issuer);
      expect(registered.status).toBe(201);
      expect(registered.body).not.toHaveProperty('scope');
      // Without the validator, the registered scope stays the client's ceiling: what a step-up then runs into.
      const plain = await startStepUpServer(t, 'http://127.0.0.1:9/mcp', { 'delete metadata.scope;': '' });
      expect((await register(plain.issuer)).body).toMatchObject({ scope: 'mcp:tools' });
    },
  },
  // The page's client against the page's SDK 1.x server and authorization server, this test acting as the user:
  // it signs in, calls whoami, steps up for reindex and calls it.
  'mcp-step-up-client': {
    async run(t) {
      const mcpPort = await freePort();
      const resource = `http://127.0.0.1:${mcpPort}/mcp`;
      const { issuer } = await startStepUpServer(t, resource);
      const block = readDocs().blocks.find((b) => b.id === 'mcp-server-sdk1');
      if (block === undefined) throw new Error('docs/mcp.md: the mcp-server-sdk1 block is gone');
      const server = t.own(docRun(block, drivers['mcp-server-sdk1']));
      await server.serve({
        port: mcpPort,
        replace: { "'https://as.example.com'": `'${issuer}'`, "'https://mcp.example.com/mcp'": `'${resource}'` },
      });
      const callbackPort = await freePort();
      const client = await t.serve({
        port: callbackPort,
        replace: {
          "'https://mcp.example.com/mcp'": `'${resource}'`,
          'http://127.0.0.1:8090/callback': `http://127.0.0.1:${callbackPort}/callback`,
        },
      });
      const jar = new Map<string, string>();
      const scopes: string[] = [];
      for (let signIn = 0; signIn < 2; signIn += 1) {
        const start = await printed(client.stdout, /^Sign in: (\S+)$/gm, signIn);
        scopes.push(new URL(start).searchParams.get('scope') ?? '');
        const callback = await signInAtDevInteractions(start, 'alice', jar);
        expect(callback.searchParams.get('code')).toEqual(expect.any(String));
        expect((await fetch(callback)).status).toBe(200);
      }
      expect(scopes[0].split(' ')).toContain('mcp:tools');
      expect(scopes[1].split(' ')).toEqual(expect.arrayContaining(['mcp:tools', 'mcp:admin']));
      expect(await printed(client.stdout, /^reindex: (.*)$/m)).toBe('[{"type":"text","text":"reindexed"}]');
      expect(client.stdout()).toContain('whoami: [{"type":"text","text":"');
    },
  },
};
