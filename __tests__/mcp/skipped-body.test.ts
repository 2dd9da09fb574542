// requireMcpAuth behind a body parser that skipped the request: Express 4's parsers set `req.body = {}` on every
// request, the ones whose content type they do not parse included, and leave the stream to the MCP SDK's
// createMcpHandler, which reads and runs the call. Such a body is no body read: the call is gated from the MCP
// 2026-07-28 headers, or refused (500) without them; never let through as "a parsed body calling nothing".
import type { Express, RequestHandler } from 'express';
import express4 from 'express4';
import express5 from 'express';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { createTokenAuth } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { listen, type Listening } from '../fixtures/listen';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';

const PATH = '/mcp';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
};
const legacyCall = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });
const modernCall = (name: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name, arguments: {}, _meta: META },
});
const modernHeaders = (name: string) => ({
  'MCP-Protocol-Version': '2026-07-28',
  'Mcp-Method': 'tools/call',
  'Mcp-Name': name,
});

type Parser = [string, () => RequestHandler, () => Express];
const PARSERS: Parser[] = [
  ['express 4, express.urlencoded() for the whole app', () => express4.urlencoded({ extended: false }), express4],
  ['express 4, express.text() for the whole app', () => express4.text(), express4],
  ['express 4, express.raw() for the whole app', () => express4.raw(), express4],
  ['express 5, express.urlencoded() for the whole app', () => express5.urlencoded({ extended: false }), express5],
] as unknown as Parser[];

let as: McpAuthorizationServer;
const paths: string[] = [];
let tools: string;
let admin: string;
let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;
const runs: string[] = [];
const apps: Listening[] = [];

beforeAll(async () => {
  as = await startMcpAuthorizationServer();
  // One resource for every app: the apps listen on ports of their own, so the audience is fixed, not their origin.
  const resource = 'http://127.0.0.1:9/mcp';
  [tools, admin] = await Promise.all([
    as.serviceToken({ resource, scope: 'mcp:tools' }),
    as.serviceToken({ resource, scope: 'mcp:tools mcp:admin' }),
  ]);
  auth = createTokenAuth({ issuerBaseURL: as.issuer, resource, claims: 'at+jwt' });
  const mcp = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'skipped-body', version: '1.0.0' });
      for (const tool of ['whoami', 'admin'])
        server.registerTool(tool, { inputSchema: z.object({}) }, async () => {
          runs.push(tool);
          return { content: [{ type: 'text' as const, text: `${tool} ok` }] };
        });
      return server;
    }),
  );
  for (const [, parser, make] of PARSERS) {
    const app = make();
    app.use(parser());
    app.post(PATH, requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { admin: ['mcp:admin'] } }), (req, res) => {
      void mcp(req as never, res);
    });
    const listening = await listen(app);
    apps.push(listening);
    paths.push(`${listening.origin}${PATH}`);
  }
});
afterAll(async () => {
  auth.close();
  await Promise.all(apps.map((app) => app.close()));
  await as.close();
});
beforeEach(() => {
  runs.length = 0;
});

async function post(url: string, token: string, body: unknown, extra: Record<string, string> = {}) {
  const answer = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...extra,
    },
    body: JSON.stringify(body),
  });
  return { status: answer.status, text: await answer.text() };
}

describe.each(PARSERS.map(([name], index) => [name, index] as const))('%s', (_name, index) => {
  it('a 2025 call of a gated tool, which the parser skipped, is refused (500) and never runs', async () => {
    const answer = await post(paths[index], tools, legacyCall('admin'), { 'MCP-Protocol-Version': '2025-06-18' });
    expect({ status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({
      status: 500,
      body: { status: 'error', message: 'Internal server error' },
    });
    expect(runs).toEqual([]);
  });

  it('a 2026-07-28 call is gated from its headers: 403 without mcp:admin, served with it', async () => {
    const refused = await post(paths[index], tools, modernCall('admin'), modernHeaders('admin'));
    expect(refused.status).toBe(403);
    const served = await post(paths[index], admin, modernCall('admin'), modernHeaders('admin'));
    expect(served.status).toBe(200);
    const open = await post(paths[index], tools, modernCall('whoami'), modernHeaders('whoami'));
    expect(open.status).toBe(200);
    expect(runs).toEqual(['admin', 'whoami']);
  });
});

it('a body express.json() did read (Express 4) is still read: the gated call refused, the open one served', async () => {
  const app = express4() as unknown as Express;
  app.use(express4.urlencoded({ extended: false }) as unknown as RequestHandler);
  app.use(express4.json() as unknown as RequestHandler);
  app.post(PATH, requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { admin: ['mcp:admin'] } }), (_req, res) => {
    res.json({ served: true });
  });
  const listening = await listen(app);
  try {
    expect((await post(`${listening.origin}${PATH}`, tools, legacyCall('admin'))).status).toBe(403);
    expect(await post(`${listening.origin}${PATH}`, tools, legacyCall('whoami'))).toEqual({
      status: 200,
      text: '{"served":true}',
    });
  } finally {
    await listening.close();
  }
});
