// requireMcpAuth settles the body the transport runs: read when no parser read it (bounded, 413 over the limit),
// parsed when express.raw()/express.text() left a Buffer or a string, kept when express.json() read it, and still
// readable by a body parser mounted after it. Real Express 4 and 5 apps, the SDK 1.x transport and real tokens: a
// gated tool never runs for a token without its scope, whatever parser (or none) stands before the gate.
import http from 'node:http';
import type { Express, RequestHandler } from 'express';
import express4 from 'express4';
import express5 from 'express';
import { requireMcpAuth } from '../../lib/mcp';
import { DEFAULT_BODY_LIMIT } from '../../lib/mcp/body';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { listen, type Listening } from '../fixtures/listen';
import { startGatedResource, type GatedResource } from '../fixtures/mcp-authorization-server';
import { mcpHandler } from '../fixtures/mcp-server';
import { optionErrorOf } from '../fixtures/option-error';

const RESOURCE = 'http://127.0.0.1:9/mcp';
let gated: GatedResource;
let tools: string;
let admin: string;
let auth: GatedResource['auth'];
beforeAll(async () => {
  gated = await startGatedResource(RESOURCE);
  ({ tools, admin, auth } = gated);
});
afterAll(() => gated.close());

const call = (name: string, id = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A raw POST (node:http, so a chunked body and exact headers are possible); `token` undefined sends none. */
function post(
  url: string,
  body: string | Buffer,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
        ...headers,
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The tool's text of an answer of the SDK's transport (JSON or one SSE event). */
function toolText(answer: Answer): string | undefined {
  const data = /^data: (.*)$/m.exec(answer.text)?.[1] ?? answer.text;
  return (JSON.parse(data) as { result?: { content?: Array<{ text?: string }> } }).result?.content?.[0]?.text;
}

/** An app that parses what express.raw()/express.text() left itself, as apps behind them do. */
const parseLeftovers: RequestHandler = (req, _res, next) => {
  if (Buffer.isBuffer(req.body) || typeof req.body === 'string') req.body = JSON.parse(String(req.body));
  next();
};

type Shape = [string, (e: typeof express5) => RequestHandler[]];
const BEFORE: Shape[] = [
  ['no body parser', () => []],
  ["express.raw({ type: 'application/json' })", (e) => [e.raw({ type: 'application/json' })]],
  ["express.text({ type: 'application/json' })", (e) => [e.text({ type: 'application/json' })]],
  ['express.urlencoded() (skips JSON; Express 4 leaves {})', (e) => [e.urlencoded({ extended: false })]],
  ['express.json()', (e) => [e.json()]],
];

describe.each(EXPRESS_VERSIONS)('%s', (_version, makeApp) => {
  const e = (makeApp === (express4 as unknown) ? express4 : express5) as typeof express5;
  const runs: string[] = [];
  const servers: Listening[] = [];
  const urls: Record<string, string> = {};

  beforeAll(async () => {
    const gate = () => requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { admin: ['mcp:admin'] }, limit: '1kb' });
    const mount = async (name: string, shape: (app: Express) => void) => {
      const app = makeApp();
      shape(app);
      const listening = await listen(app);
      servers.push(listening);
      urls[name] = `${listening.origin}/mcp`;
    };
    for (const [name, parsers] of BEFORE)
      await mount(name, (app) => app.all('/mcp', ...parsers(e), gate(), parseLeftovers, mcpHandler(1, runs)));
    await mount('express.json() after the gate', (app) =>
      app.all('/mcp', gate(), e.json(), e.text({ type: 'application/json' }), mcpHandler(1, runs)),
    );
    await mount('the default limit', (app) =>
      app.post('/mcp', requireMcpAuth(auth, { scopes: ['mcp:tools'] }), (req, res) => {
        res.json({ bytes: JSON.stringify(req.body).length });
      }),
    );
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  beforeEach(() => {
    runs.length = 0;
  });

  it.each([...BEFORE.map(([name]) => name), 'express.json() after the gate'])(
    '%s: a gated tool is refused 403 without its scope and runs with it; an open one runs',
    async (name) => {
      const refused = await post(urls[name], JSON.stringify(call('admin')), tools);
      expect(refused.status).toBe(403);
      expect(refused.headers['www-authenticate']).toContain('error="insufficient_scope", scope="mcp:tools mcp:admin"');
      const served = await post(urls[name], JSON.stringify(call('admin')), admin);
      expect({ status: served.status, text: toolText(served) }).toEqual({ status: 200, text: 'admin ok' });
      const open = await post(urls[name], JSON.stringify(call('whoami')), tools);
      expect(open.status).toBe(200);
      expect(runs).toEqual(['admin', 'whoami']);
    },
  );

  it('a 2025-era request (no MCP headers, or 2025-11-25) of a body no parser read is read, never answered 500', async () => {
    for (const headers of [{}, { 'MCP-Protocol-Version': '2025-11-25' }] as Array<Record<string, string>>) {
      const answer = await post(urls['no body parser'], JSON.stringify(call('whoami')), tools, headers);
      expect(answer.status).toBe(200);
    }
    expect(runs).toEqual(['whoami', 'whoami']);
  });

  it('a chunked body (no Content-Length) is read the same way', async () => {
    const chunked = { 'Transfer-Encoding': 'chunked' };
    expect((await post(urls['no body parser'], JSON.stringify(call('admin')), tools, chunked)).status).toBe(403);
    expect((await post(urls['no body parser'], JSON.stringify(call('admin')), admin, chunked)).status).toBe(200);
    expect(runs).toEqual(['admin']);
  });

  it('a body after a UTF-8 byte-order mark is read as the transports decode it (the mark dropped)', async () => {
    const bom = (name: string) =>
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(call(name)))]);
    for (const name of ['no body parser', "express.raw({ type: 'application/json' })"]) {
      expect((await post(urls[name], bom('admin'), tools)).status).toBe(403);
      expect((await post(urls[name], bom('admin'), admin)).status).toBe(200);
    }
    expect(runs).toEqual(['admin', 'admin']);
  });

  it('a batch needs the scopes of every call in it; each call of an allowed batch runs', async () => {
    const batch = JSON.stringify([call('whoami', 1), call('admin', 2)]);
    for (const name of ['no body parser', "express.raw({ type: 'application/json' })"]) {
      expect((await post(urls[name], batch, tools)).status).toBe(403);
      expect(runs).toEqual([]);
      expect((await post(urls[name], batch, admin)).status).toBe(200);
      expect(runs.sort()).toEqual(['admin', 'whoami']);
      runs.length = 0;
    }
  });

  it('a body over the limit: 413 with a JSON-RPC error as the SDK transports answer, after the token', async () => {
    const big = JSON.stringify({ ...call('admin'), padding: 'x'.repeat(2048) });
    for (const headers of [{}, { 'Transfer-Encoding': 'chunked' }] as Array<Record<string, string>>) {
      const answer = await post(urls['no body parser'], big, admin, headers);
      expect({ status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({
        status: 413,
        body: {
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Payload Too Large: Request body must not exceed 1024 bytes' },
          id: null,
        },
      });
      expect(answer.headers.connection).toBe('close');
      const anonymous = await post(urls['no body parser'], big, undefined, headers);
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers['www-authenticate']).toMatch(/^Bearer realm="api", scope="mcp:tools"/);
    }
    expect(runs).toEqual([]);
  });

  it("the default limit is express.json()'s, 100 kB", async () => {
    const body = (size: number) => {
      const shell = JSON.stringify({ ...call('whoami'), padding: '' });
      return JSON.stringify({ ...call('whoami'), padding: 'x'.repeat(size - shell.length) });
    };
    expect(body(DEFAULT_BODY_LIMIT).length).toBe(102_400);
    const at = await post(urls['the default limit'], body(DEFAULT_BODY_LIMIT), tools);
    expect({ status: at.status, text: at.text }).toEqual({ status: 200, text: '{"bytes":102400}' });
    expect((await post(urls['the default limit'], body(DEFAULT_BODY_LIMIT + 1), tools)).status).toBe(413);
  });

  it('a body that is not JSON: 400 -32700 as the transports answer it, after the token; nothing runs', async () => {
    for (const name of [
      'no body parser',
      "express.raw({ type: 'application/json' })",
      "express.text({ type: 'application/json' })",
    ]) {
      const answer = await post(urls[name], '{"jsonrpc":"2.0","id":1,"method":"tools/call",', admin);
      expect({ name, status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({
        name,
        status: 400,
        body: { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null },
      });
      expect((await post(urls[name], '{', undefined)).status).toBe(401);
    }
    expect(runs).toEqual([]);
  });

  it('another content type, an empty body, a GET and a DELETE reach the transport, which answers them (never 500)', async () => {
    const url = urls['no body parser'];
    const text = await post(url, JSON.stringify(call('admin')), tools, { 'Content-Type': 'text/plain' });
    expect(text.status).toBe(403);
    const plain = await post(url, 'hello', admin, { 'Content-Type': 'text/plain' });
    expect(plain.status).toBe(415);
    const empty = await post(url, '', admin);
    expect(empty.status).toBe(400);
    // The stateless 1.x transport opens its standalone SSE stream for GET and answers DELETE itself.
    for (const [method, status] of [
      ['GET', 200],
      ['DELETE', 200],
    ] as const) {
      const answer = await fetch(url, {
        method,
        headers: { Authorization: `Bearer ${tools}`, Accept: 'text/event-stream' },
      });
      await answer.body?.cancel();
      expect({ method, status: answer.status }).toEqual({ method, status });
      const anonymous = await fetch(url, { method });
      expect({ method, status: anonymous.status }).toEqual({ method, status: 401 });
    }
    expect(runs).toEqual([]);
  });
});

describe('requireMcpAuth limit and offline_access options', () => {
  it.each([
    ['limit', { limit: 0 }],
    ['limit', { limit: -1 }],
    ['limit', { limit: '100 apples' }],
    ['limit', { limit: {} }],
    ['scopes', { scopes: ['mcp:tools', 'offline_access'] }],
    ['scopes', { scopes: { any: ['offline_access'] } }],
    ['tools.admin', { tools: { admin: ['offline_access'] } }],
    ['resources.file:///a', { resources: { 'file:///a': ['offline_access'] } }],
    ['prompts.p', { prompts: { p: ['offline_access'] } }],
  ])('an OptionError at "%s" for %p', (option, options) => {
    expect(optionErrorOf(() => requireMcpAuth(auth, options as never)).option).toBe(option);
  });

  it('accepts a number of bytes and the sizes express.json() takes', () => {
    for (const limit of [1, 4096, '100kb', '1mb', '1.5MB', '512 b', '2048'])
      expect(() => requireMcpAuth(auth, { limit })).not.toThrow();
  });
});
