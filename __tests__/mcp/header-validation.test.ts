// MCP 2026-07-28 header validation through requireMcpAuth answers what the SDK's own 2026-07-28 server answers
// without it (createMcpHandler: status, JSON-RPC error code and id), for every hostile shape: headers missing,
// disagreeing with the body, duplicated, Base64-encoded or invalid, revisions the gate does not know, batches,
// notifications, bodies without the envelope; and a request without a token gets the 401 challenge first.
import http from 'node:http';
import express from 'express';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import { createTokenAuth } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { listen, type Listening } from '../fixtures/listen';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';

const RESOURCE = 'http://127.0.0.1:9/mcp';
const VERSION = '2026-07-28';
let as: McpAuthorizationServer;
let server: Listening;
let admin: string;
let tools: string;
let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;
const runs: string[] = [];

beforeAll(async () => {
  as = await startMcpAuthorizationServer();
  [admin, tools] = await Promise.all([
    as.serviceToken({ resource: RESOURCE, scope: 'mcp:tools mcp:admin' }),
    as.serviceToken({ resource: RESOURCE, scope: 'mcp:tools' }),
  ]);
  auth = createTokenAuth({ issuerBaseURL: as.issuer, resource: RESOURCE, claims: 'at+jwt' });
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const mcp = new McpServer({ name: 'header-validation', version: '1.0.0' });
      for (const tool of ['whoami', 'admin'])
        mcp.registerTool(tool, { inputSchema: z.object({}) }, async () => {
          runs.push(tool);
          return { content: [{ type: 'text' as const, text: `${tool} ok` }] };
        });
      mcp.registerResource('secret', 'file:///secret', {}, async (uri) => ({
        contents: [{ uri: uri.href, text: 's' }],
      }));
      mcp.registerPrompt('audit', {}, async () => ({
        messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'audit' } }],
      }));
      return mcp;
    }),
  );
  const gate = requireMcpAuth(auth, {
    scopes: ['mcp:tools'],
    tools: { admin: ['mcp:admin'] },
    resources: { 'file:///secret': ['mcp:admin'] },
    prompts: { audit: ['mcp:admin'] },
  });
  const app = express();
  app.all('/bare', (req, res) => void handler(req as never, res));
  app.all('/gated', gate, (req, res) => void handler(req as never, res, req.body));
  app.all('/gated-json', express.json(), gate, (req, res) => void handler(req as never, res, req.body));
  server = await listen(app);
});
afterAll(async () => {
  auth.close();
  await server.close();
  await as.close();
});

const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'hostile', version: '1.0.0' },
};
const rpc = (method: string, params: Record<string, unknown> = {}, meta: object | null = META, id = 7) => ({
  jsonrpc: '2.0',
  id,
  method,
  params: meta === null ? params : { ...params, _meta: meta },
});
const b64 = (text: string) => `=?base64?${Buffer.from(text).toString('base64')}?=`;
type Headers = Record<string, string | string[]>;
const std = (method?: string, name?: string, version = VERSION): Headers => ({
  'MCP-Protocol-Version': version,
  ...(method === undefined ? {} : { 'Mcp-Method': method }),
  ...(name === undefined ? {} : { 'Mcp-Name': name }),
});
const adminCall = rpc('tools/call', { name: 'admin', arguments: {} });

const SHAPES: Array<[string, Headers, unknown]> = [
  ['Mcp-Method missing', std(), rpc('tools/list')],
  ['Mcp-Method another method', std('prompts/list'), rpc('tools/list')],
  ['Mcp-Method in another case', std('Tools/List'), rpc('tools/list')],
  ['Mcp-Method sent twice', { ...std(), 'Mcp-Method': ['tools/list', 'tools/list'] }, rpc('tools/list')],
  ['Mcp-Method padded with spaces', std(' \ttools/list '), rpc('tools/list')],
  ['tools/call without Mcp-Name', std('tools/call'), adminCall],
  ['tools/call, Mcp-Name another tool', std('tools/call', 'whoami'), adminCall],
  ['tools/call, Mcp-Name sent twice', { ...std('tools/call'), 'Mcp-Name': ['admin', 'admin'] }, adminCall],
  ['tools/call, Mcp-Name Base64', std('tools/call', b64('admin')), adminCall],
  ['tools/call, Mcp-Name Base64 after a byte-order mark', std('tools/call', b64('\uFEFFadmin')), adminCall],
  ['tools/call, Mcp-Name Base64 of another tool', std('tools/call', b64('whoami')), adminCall],
  ['tools/call, Mcp-Name Base64 unpadded', std('tools/call', '=?base64?YWRtaW4?='), adminCall],
  ['tools/call, Mcp-Name Base64 not UTF-8', std('tools/call', '=?base64?gA==?='), adminCall],
  ['tools/call, Mcp-Name Base64 URL-safe', std('tools/call', '=?base64?YW-tAW4=?='), adminCall],
  ['tools/call, Mcp-Name padded with spaces', std('tools/call', '  admin\t'), adminCall],
  ['tools/call, the right headers', std('tools/call', 'admin'), adminCall],
  ['tools/call with a string id', std('tools/call', 'whoami'), { ...adminCall, id: 'abc' }],
  ['resources/read without Mcp-Name', std('resources/read'), rpc('resources/read', { uri: 'file:///secret' })],
  ['resources/read, another URI', std('resources/read', 'file:///x'), rpc('resources/read', { uri: 'file:///secret' })],
  ['prompts/get, another prompt', std('prompts/get', 'x'), rpc('prompts/get', { name: 'audit' })],
  [
    'the envelope names another revision',
    std('tools/call', 'admin'),
    rpc('tools/call', { name: 'admin' }, { ...META, 'io.modelcontextprotocol/protocolVersion': '2025-11-25' }),
  ],
  ['no envelope under a 2026-07-28 header', std('tools/call', 'whoami'), rpc('tools/call', { name: 'admin' }, null)],
  [
    'a revision the gate does not know',
    std('tools/call', 'whoami', '2027-01-15'),
    rpc('tools/call', { name: 'admin' }, { ...META, 'io.modelcontextprotocol/protocolVersion': '2027-01-15' }),
  ],
  [
    'a notification whose Mcp-Method disagrees',
    std('tools/list'),
    { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: META } },
  ],
  ['a batch with a 2026-07-28 call', std('tools/call', 'admin'), [adminCall]],
  ['a 2025 call without any header', {}, rpc('tools/call', { name: 'whoami', arguments: {} }, null)],
  [
    'a 2025 call with a 2025-11-25 header and stray ones',
    std('tools/call', 'admin', '2025-11-25'),
    rpc('tools/call', { name: 'whoami', arguments: {} }, null),
  ],
];

interface Seen {
  status: number;
  code?: number;
  id?: unknown;
}

/** POST with node:http (headers sent exactly, repeated ones as separate lines); status, JSON-RPC error code and id. */
function send(path: string, headers: Headers, body: unknown, token?: string): Promise<Seen & { challenge?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.origin}${path}`, { method: 'POST' });
    req.setHeader('Content-Type', 'application/json');
    req.setHeader('Accept', 'application/json, text/event-stream');
    if (token !== undefined) req.setHeader('Authorization', `Bearer ${token}`);
    for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
        let rpcError: { error?: { code?: number }; id?: unknown } = {};
        try {
          rpcError = JSON.parse(data) as typeof rpcError;
        } catch {
          // not JSON: the status says it all
        }
        resolve({
          status: res.statusCode ?? 0,
          ...(rpcError.error === undefined ? {} : { code: rpcError.error.code, id: rpcError.id }),
          challenge: res.headers['www-authenticate'],
        });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('requireMcpAuth answers 2026-07-28 header validation as the SDK server does', () => {
  it.each(SHAPES)(
    '%s: the same answer with the gate (with and without express.json()) as without it',
    async (_name, headers, body) => {
      const { challenge: _c, ...bare } = await send('/bare', headers, body, admin);
      const ranBare = runs.splice(0);
      for (const path of ['/gated', '/gated-json']) {
        const { challenge: _g, ...gated } = await send(path, headers, body, admin);
        expect({ path, ...gated }).toEqual({ path, ...bare });
        expect(runs.splice(0)).toEqual(ranBare);
      }
    },
  );

  it.each(SHAPES)(
    '%s: a token without the call scope: the -32020 the transport answers, not a 403; else the call gated first',
    async (_name, headers, body) => {
      const bare = await send('/bare', headers, body, admin);
      runs.length = 0;
      const { challenge, ...gated } = await send('/gated', headers, body, tools);
      const ran = runs.splice(0);
      if (bare.code === -32020) {
        expect(ran).toEqual([]);
        // Headers that disagree with the body: the transport refuses the request, so no call's scope is asked.
        expect(gated).toEqual({ status: 400, code: -32020, id: bare.id });
        expect(challenge).toBeUndefined();
      } else if (bare.status === 400 && JSON.stringify(body).includes('"admin"')) {
        // Anything else the gate does not judge (a later revision, a batch) is gated by the call in the body first.
        expect(gated.status).toBe(403);
      }
    },
  );

  it.each(SHAPES)('%s: without a token, 401 with the usual challenge first', async (_name, headers, body) => {
    const answer = await send('/gated', headers, body);
    expect(answer.status).toBe(401);
    expect(answer.challenge).toMatch(/^Bearer realm="api", scope="mcp:tools( mcp:admin)?", resource_metadata=/);
    expect(runs).toEqual([]);
  });

  it('the 400 is -32020 with the request id, as MCP 2026-07-28 defines it', async () => {
    expect(await send('/gated', std('tools/call', 'whoami'), { ...adminCall, id: 'abc' }, admin)).toMatchObject({
      status: 400,
      code: -32020,
      id: 'abc',
    });
    expect(await send('/gated', std(), rpc('tools/list'), admin)).toMatchObject({ status: 400, code: -32020, id: 7 });
  });
});
