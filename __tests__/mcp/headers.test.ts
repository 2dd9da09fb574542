// The MCP 2026-07-28 standard headers as requireMcpAuth reads them (whitespace, Base64 names, revisions), and
// gating with the MCP SDK's own 2.x server (createMcpHandler, no body parser) and 2.x client: gated tools,
// resources and prompts refused without their scope, served with it, and no hostile spelling reaching them.
import type { Request } from 'express';
import express from 'express';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer as McpServer1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport as Transport1 } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createTokenAuth } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { checksHeaders, decodeMcpName, mcpHeaders } from '../../lib/mcp/headers';
import { listen, type Listening } from '../fixtures/listen';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';

const base64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

describe('decodeMcpName', () => {
  it.each([
    ['a plain name', 'admin', 'admin'],
    ['a Base64 name', base64('admin'), 'admin'],
    ['a Base64 URI', base64('file:///secret'), 'file:///secret'],
    ['non-ASCII text', base64('café'), 'café'],
    ['a leading byte-order mark, dropped as the SDK drops it', base64('\uFEFFadmin'), 'admin'],
    ['the overlapping sentinel "=?base64?="', '=?base64?=', ''],
    ['a value that only starts like the sentinel', '=?base64?YWRtaW4=', '=?base64?YWRtaW4='],
  ])('%s', (_name, value, decoded) => {
    expect(decodeMcpName(value)).toBe(decoded);
  });

  it.each([
    ['padding missing', '=?base64?YWRtaW4?='],
    ['a space inside', '=?base64?YWRt aW4=?='],
    ['the URL-safe alphabet', '=?base64?YW-tAW4=?='],
    ['bytes that are not UTF-8', '=?base64?gA==?='],
  ])('refuses %s (null)', (_name, value) => {
    expect(decodeMcpName(value)).toBeNull();
  });
});

describe('mcpHeaders and checksHeaders', () => {
  const req = (headers: Record<string, string | string[]>) => ({ headers }) as unknown as Request;

  it('removes spaces and tabs around each value, as the SDK does, and decodes Mcp-Name', () => {
    expect(
      mcpHeaders(
        req({ 'mcp-protocol-version': ' 2026-07-28\t', 'mcp-method': '\ttools/call ', 'mcp-name': ` ${base64('x')} ` }),
      ),
    ).toEqual({ version: '2026-07-28', method: 'tools/call', name: 'x' });
    expect(mcpHeaders(req({}))).toEqual({ version: undefined, method: undefined, name: undefined });
  });

  it.each([
    ['2026-07-28', true],
    // A later revision is not the gate's to judge: the transport answers it.
    ['2027-03-01', false],
    ['2025-11-25', false],
    ['2026-07-27', false],
    ['9999', false],
    ['2026-07-28x', false],
    ['z', false],
  ])('checksHeaders(%p) is %p', (version, expected) => {
    expect(checksHeaders(version)).toBe(expected);
  });
});

const RESOURCE_PATH = '/mcp';

/** Registers the same tools, resources and prompts on either SDK line's McpServer; each run is recorded. */
function register(server: McpServer | McpServer1, runs: string[]): void {
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  const target = server as McpServer;
  for (const tool of ['whoami', 'admin'])
    target.registerTool(tool, { inputSchema: z.object({}) }, async () => {
      runs.push(`tool:${tool}`);
      return text(`${tool} ok`);
    });
  for (const [name, uri] of [
    ['public', 'file:///public'],
    ['secret', 'file:///secret'],
  ])
    target.registerResource(name, uri, {}, async (url: URL) => {
      runs.push(`resource:${name}`);
      return { contents: [{ uri: url.href, text: name }] };
    });
  for (const name of ['hello', 'audit'])
    target.registerPrompt(name, {}, async () => {
      runs.push(`prompt:${name}`);
      return { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: name } }] };
    });
}

describe('gating with the MCP SDK 2.x server and client, no body parser', () => {
  let as: McpAuthorizationServer;
  let server: Listening;
  let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;
  let tools: string;
  let admin: string;
  const runs: string[] = [];
  const seen: string[] = [];

  beforeAll(async () => {
    as = await startMcpAuthorizationServer();
    const app = express();
    server = await listen(app);
    const resource = `${server.origin}${RESOURCE_PATH}`;
    [tools, admin] = await Promise.all([
      as.serviceToken({ resource, scope: 'mcp:tools' }),
      as.serviceToken({ resource, scope: 'mcp:tools mcp:admin' }),
    ]);
    auth = createTokenAuth({ issuerBaseURL: as.issuer, resource, claims: 'at+jwt' });
    const gate = requireMcpAuth(auth, {
      scopes: ['mcp:tools'],
      tools: { admin: ['mcp:admin'] },
      resources: { 'file:///secret': ['mcp:admin'] },
      prompts: { audit: ['mcp:admin'] },
    });
    app.use((req, res, next) => {
      res.on('finish', () => {
        seen.push(`${req.path} ${String(req.headers['mcp-method'])} -> ${res.statusCode}`);
      });
      next();
    });
    const modern = toNodeHandler(
      createMcpHandler(() => {
        const mcp = new McpServer({ name: 'headers-only', version: '1.0.0' });
        register(mcp, runs);
        return mcp;
      }),
    );
    app.all(RESOURCE_PATH, gate, (req, res) => void modern(req as never, res, req.body));
    // The SDK's 2025 transports, 2.x and 1.x, behind the same gate with no body parser either.
    app.post('/legacy2', gate, async (req, res) => {
      const mcp = new McpServer({ name: 'legacy2', version: '1.0.0' });
      register(mcp, runs);
      const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await mcp.connect(transport);
      res.on('close', () => void mcp.close());
      await transport.handleRequest(req as never, res, req.body);
    });
    app.post('/legacy1', gate, async (req, res) => {
      const mcp = new McpServer1({ name: 'legacy1', version: '1.0.0' });
      register(mcp, runs);
      const transport = new Transport1({ sessionIdGenerator: undefined });
      await mcp.connect(transport);
      res.on('close', () => void mcp.close());
      await transport.handleRequest(req as never, res, req.body);
    });
  });
  afterAll(async () => {
    auth.close();
    await server.close();
    await as.close();
  });
  beforeEach(() => {
    runs.length = 0;
    seen.length = 0;
  });

  /** The SDK's 2.x client, pinned to 2026-07-28 (its requests carry the standard headers), with a bearer token. */
  async function client(token: string): Promise<Client> {
    const mcp = new Client({ name: 'test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.origin}${RESOURCE_PATH}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await mcp.connect(transport);
    return mcp;
  }

  it('a token without mcp:admin: the gated tool, resource and prompt are refused 403; the others are served', async () => {
    const mcp = await client(tools);
    try {
      await expect(mcp.callTool({ name: 'whoami', arguments: {} })).resolves.toMatchObject({
        content: [{ text: 'whoami ok' }],
      });
      await expect(mcp.readResource({ uri: 'file:///public' })).resolves.toMatchObject({
        contents: [{ text: 'public' }],
      });
      await expect(mcp.getPrompt({ name: 'hello' })).resolves.toMatchObject({ messages: [{ role: 'user' }] });
      await expect(mcp.callTool({ name: 'admin', arguments: {} })).rejects.toThrow();
      await expect(mcp.readResource({ uri: 'file:///secret' })).rejects.toThrow();
      await expect(mcp.getPrompt({ name: 'audit' })).rejects.toThrow();
    } finally {
      await mcp.close();
    }
    expect(runs).toEqual(['tool:whoami', 'resource:public', 'prompt:hello']);
    expect(seen).toEqual([
      '/mcp server/discover -> 200',
      '/mcp tools/call -> 200',
      '/mcp resources/read -> 200',
      '/mcp prompts/get -> 200',
      '/mcp tools/call -> 403',
      '/mcp resources/read -> 403',
      '/mcp prompts/get -> 403',
    ]);
  });

  it('a token with mcp:admin: the gated tool, resource and prompt are served', async () => {
    const mcp = await client(admin);
    try {
      await expect(mcp.callTool({ name: 'admin', arguments: {} })).resolves.toMatchObject({
        content: [{ text: 'admin ok' }],
      });
      await expect(mcp.readResource({ uri: 'file:///secret' })).resolves.toMatchObject({
        contents: [{ text: 'secret' }],
      });
      await expect(mcp.getPrompt({ name: 'audit' })).resolves.toMatchObject({ messages: [{ role: 'user' }] });
    } finally {
      await mcp.close();
    }
    expect(runs).toEqual(['tool:admin', 'resource:secret', 'prompt:audit']);
  });

  const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'hostile', version: '1.0.0' },
  };
  const rpc = (method: string, params: Record<string, unknown>, meta: object | null = META) => ({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: meta === null ? params : { ...params, _meta: meta },
  });
  const headers = (method: string, name?: string, version = '2026-07-28') => ({
    'MCP-Protocol-Version': version,
    'Mcp-Method': method,
    ...(name === undefined ? {} : { 'Mcp-Name': name }),
  });
  const adminCall = rpc('tools/call', { name: 'admin', arguments: {} });
  const secretRead = rpc('resources/read', { uri: 'FILE:///./secret' });
  const auditGet = rpc('prompts/get', { name: 'audit' });
  const HOSTILE: Array<[string, Record<string, string>, unknown]> = [
    ['the name Base64-encoded', headers('tools/call', base64('admin')), adminCall],
    ['the name Base64-encoded after a byte-order mark', headers('tools/call', base64('\uFEFFadmin')), adminCall],
    ['another name in the header', headers('tools/call', 'whoami'), adminCall],
    ['no Mcp-Name', headers('tools/call'), adminCall],
    ['another method in the header', headers('tools/list'), adminCall],
    ['a legacy body under modern headers', headers('tools/call', 'whoami'), rpc('tools/call', { name: 'admin' }, {})],
    ['a batch', headers('tools/call', 'whoami'), [rpc('tools/call', { name: 'admin', arguments: {} }, null)]],
    ['a later revision', headers('tools/call', 'whoami', '2027-01-15'), adminCall],
    ['the URI spelt otherwise', headers('resources/read', 'FILE:///./secret'), secretRead],
    ['the URI Base64-encoded', headers('resources/read', base64('FILE:///./secret')), secretRead],
    ['another URI in the header', headers('resources/read', 'file:///public'), secretRead],
    ['the prompt Base64-encoded', headers('prompts/get', base64('audit')), auditGet],
    ['another prompt in the header', headers('prompts/get', 'hello'), auditGet],
  ];

  it.each(['/mcp', '/legacy2', '/legacy1'])(
    '%s: no spelling of a gated call reaches it without mcp:admin',
    async (path) => {
      const statuses: Array<[string, number]> = [];
      for (const [name, extra, body] of HOSTILE) {
        const answer = await fetch(`${server.origin}${path}`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${tools}`,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...extra,
          },
          body: JSON.stringify(body),
        });
        await answer.arrayBuffer();
        statuses.push([name, answer.status]);
      }
      expect(runs.filter((run) => /admin|secret|audit/.test(run))).toEqual([]);
      for (const [name, status] of statuses) expect({ name, refused: status >= 400 }).toEqual({ name, refused: true });
    },
  );

  it('a 2025-era request whose body no parser read is read and served (never 500)', async () => {
    for (const extra of [{}, { 'MCP-Protocol-Version': '2025-11-25' }] as Array<Record<string, string>>) {
      const answer = await fetch(`${server.origin}${RESOURCE_PATH}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${tools}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...extra,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'whoami', arguments: {} },
        }),
      });
      expect({ extra, status: answer.status, text: await answer.text() }).toEqual({
        extra,
        status: 200,
        text: expect.stringContaining('whoami ok'),
      });
    }
    expect(runs).toEqual(['tool:whoami', 'tool:whoami']);
  });
});
