// requireMcpAuth's per-call gates through real Express 4 and 5 apps and real tokens: the tools, resources and
// prompts a request calls are read from the JSON-RPC body the transport runs (parsed by express.json() or read by
// the gate itself); MCP 2026-07-28 headers that disagree with it are refused; nothing unseen passes.
import request from 'supertest';
import express5 from 'express';
import type { Express, RequestHandler } from 'express';
import { requireMcpAuth } from '../../lib/mcp';
import { MAX_BATCH_CALLS } from '../../lib/mcp/calls';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { optionErrorOf } from '../fixtures/option-error';
import { startGatedResource, type GatedResource } from '../fixtures/mcp-authorization-server';

const RESOURCE = 'http://127.0.0.1:9/mcp';
const METADATA = 'http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp';

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
const read = (uri: string) => ({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } });
const prompt = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name } });
/** The MCP 2026-07-28 standard headers of a call. */
const modern = (method: string, name?: string, version = '2026-07-28') => ({
  'MCP-Protocol-Version': version,
  'Mcp-Method': method,
  ...(name === undefined ? {} : { 'Mcp-Name': name }),
});
const base64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

describe.each(EXPRESS_VERSIONS)('requireMcpAuth gates (%s)', (_name, makeApp) => {
  let app: Express;
  const reached: unknown[] = [];
  const json = express5.json() as RequestHandler;

  beforeAll(() => {
    app = makeApp();
    const gate = requireMcpAuth(auth, {
      scopes: ['mcp:tools'],
      tools: { admin: ['mcp:admin'], constructor: ['mcp:admin'] },
      resources: { 'file:///secret': ['mcp:admin'] },
      prompts: { audit: ['mcp:admin'] },
    });
    const answer: RequestHandler = (req, res) => {
      reached.push(req.auth?.scopes);
      res.json({ ok: true, sub: auth.claims(req).sub });
    };
    app.post('/mcp', json, gate, answer);
    app.post('/raw', gate, answer);
    app.get('/mcp', gate, answer);
  });
  beforeEach(() => {
    reached.length = 0;
  });

  it('a tool without its own scopes needs only the endpoint scopes; req.auth is the AuthInfo, claims(req) the claims', async () => {
    const answer = await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(call('whoami'));
    expect(answer.status).toBe(200);
    expect(answer.body.sub).toBe('mcp-service');
    expect(reached).toEqual([['mcp:tools']]);
  });

  it('a gated tool named in the body: 403 insufficient_scope with every scope it needs and resource_metadata', async () => {
    const answer = await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(call('admin'));
    expect(answer.status).toBe(403);
    expect(answer.headers['www-authenticate']).toBe(
      `Bearer realm="api", error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="${METADATA}"`,
    );
    expect(reached).toEqual([]);
    const allowed = await request(app).post('/mcp').set('Authorization', `Bearer ${admin}`).send(call('admin'));
    expect(allowed.status).toBe(200);
  });

  it('a 401 for a gated tool names the scopes that call needs', async () => {
    const answer = await request(app).post('/mcp').send(call('admin'));
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe(
      `Bearer realm="api", scope="mcp:tools mcp:admin", resource_metadata="${METADATA}"`,
    );
  });

  it('the body names the call: headers cannot hide it, and a 2025-era request is never held to 2026 headers', async () => {
    const hidden = await request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${tools}`)
      .set({ 'Mcp-Method': 'tools/call', 'Mcp-Name': 'whoami' })
      .send(call('admin'));
    expect(hidden.status).toBe(403);
    const stray = await request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${tools}`)
      .set({ 'MCP-Protocol-Version': '2025-11-25', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'admin' })
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(stray.status).toBe(200);
    expect(reached).toEqual([['mcp:tools']]);
  });

  it('a batch needs the scopes of every gated call in it; a batch too long to read needs every gated scope', async () => {
    const batch = await request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${tools}`)
      .send([call('whoami', 1), call('admin', 2)]);
    expect(batch.status).toBe(403);
    const long = Array.from({ length: MAX_BATCH_CALLS + 1 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));
    expect((await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(long)).status).toBe(403);
    expect((await request(app).post('/mcp').set('Authorization', `Bearer ${admin}`).send(long)).status).toBe(200);
  });

  it('tool names are own keys only: a call of "toString" is not gated by Object.prototype, "constructor" is gated as configured', async () => {
    expect(
      (await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(call('toString'))).status,
    ).toBe(200);
    expect(
      (await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(call('constructor'))).status,
    ).toBe(403);
  });

  it('a JSON POST that no body parser read is read by the gate and gated as any other; a GET has no calls', async () => {
    const unread = (bearer: string) =>
      request(app)
        .post('/raw')
        .set('Authorization', `Bearer ${bearer}`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(call('admin')));
    expect((await unread(tools)).status).toBe(403);
    expect(reached).toEqual([]);
    expect((await unread(admin)).status).toBe(200);
    expect(reached).toEqual([['mcp:tools', 'mcp:admin']]);
    expect((await request(app).get('/mcp').set('Authorization', `Bearer ${tools}`)).status).toBe(200);
  });

  it('a gated resource (resources/read) or prompt (prompts/get) in the body: 403 with its scopes; allowed with them', async () => {
    for (const body of [read('file:///secret'), prompt('audit')]) {
      const refused = await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(body);
      expect(refused.status).toBe(403);
      expect(refused.headers['www-authenticate']).toContain('error="insufficient_scope", scope="mcp:tools mcp:admin"');
      expect((await request(app).post('/mcp').set('Authorization', `Bearer ${admin}`).send(body)).status).toBe(200);
    }
    for (const body of [read('file:///public'), prompt('hello')]) {
      expect((await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(body)).status).toBe(200);
    }
    expect(reached).toEqual([['mcp:tools', 'mcp:admin'], ['mcp:tools', 'mcp:admin'], ['mcp:tools'], ['mcp:tools']]);
  });

  it('a resource URI is matched as the SDK server looks it up (parsed and serialised again), however it is spelt', async () => {
    for (const uri of ['FILE:///secret', 'file:///./secret', 'file:///x/../secret', 'file:///%2E/secret']) {
      const answer = await request(app).post('/mcp').set('Authorization', `Bearer ${tools}`).send(read(uri));
      expect({ uri, status: answer.status }).toEqual({ uri, status: 403 });
    }
    expect(reached).toEqual([]);
  });

  const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
  };
  const enveloped = (body: { params: object }) => ({ ...body, params: { ...body.params, _meta: META } });
  const send2026 = (path: string, headers: Record<string, string>, bearer: string, body: object) =>
    request(app)
      .post(path)
      .set('Authorization', `Bearer ${bearer}`)
      .set('Content-Type', 'application/json')
      .set(headers)
      .send(JSON.stringify(enveloped(body as { params: object })));

  it('MCP 2026-07-28 requests, read by the gate or by express.json(): tool, resource and prompt gated', async () => {
    for (const path of ['/raw', '/mcp'])
      for (const [method, name, body] of [
        ['tools/call', 'admin', call('admin')],
        ['resources/read', 'file:///secret', read('file:///secret')],
        ['prompts/get', 'audit', prompt('audit')],
        ['tools/call', base64('admin'), call('admin')],
        ['resources/read', base64('FILE:///./secret'), read('FILE:///./secret')],
      ] as const) {
        const refused = await send2026(path, modern(method, name), tools, body);
        expect({ path, method, status: refused.status }).toEqual({ path, method, status: 403 });
        expect(refused.headers['www-authenticate']).toContain('scope="mcp:tools mcp:admin"');
        expect((await send2026(path, modern(method, name), admin, body)).status).toBe(200);
      }
    expect((await send2026('/raw', modern('tools/call', 'whoami'), tools, call('whoami'))).status).toBe(200);
    expect(reached).toHaveLength(11);
  });

  it('2026-07-28 headers that disagree with the body: 400 -32020 with the id after the token, whatever the scopes', async () => {
    for (const name of [
      'whoami',
      '=?base64?YWRtaW4?=',
      '=?base64?YWRt aW4=?=',
      '=?base64?gA==?=',
      '=?base64?YW-tAW4=?=',
    ])
      for (const bearer of [tools, admin]) {
        const answer = await send2026('/raw', modern('tools/call', name), bearer, call('admin', 9));
        expect({ name, status: answer.status, body: answer.body as unknown }).toEqual({
          name,
          status: 400,
          body: {
            jsonrpc: '2.0',
            error: { code: -32020, message: 'Bad Request: the Mcp-Name header and the body disagree' },
            id: 9,
          },
        });
      }
    const missing = await send2026(
      '/raw',
      { 'MCP-Protocol-Version': '2026-07-28' },
      tools,
      call('whoami', 'x' as never),
    );
    expect(missing.body).toMatchObject({ error: { code: -32020 }, id: 'x' });
    const anonymous = await request(app)
      .post('/raw')
      .set('Content-Type', 'application/json')
      .set(modern('tools/call', 'whoami'))
      .send(JSON.stringify(enveloped(call('admin'))));
    expect(anonymous.status).toBe(401);
    expect(reached).toEqual([]);
  });
});

describe('requireMcpAuth options', () => {
  it.each([
    ['options not an object', 'x', /requireMcpAuth options must be an object/],
    ['an unknown option', { scope: ['a'] }, /no option "scope"/],
    ['tools not an object', { tools: ['admin'] }, /option "tools" must be an object/],
    ['a tool whose scopes are not a list', { tools: { admin: 'mcp:admin' } }, /"tools.admin" must be an array/],
    ['a malformed endpoint requirement', { scopes: 'mcp:tools' }, /scopes/],
    ['resources not an object', { resources: 'file:///a' }, /requireMcpAuth option "resources" must be an object/],
    ['a resource key that is no URI', { resources: { secret: ['a'] } }, /"resources" keys must be absolute URIs/],
    ['a prompt whose scopes are not a list', { prompts: { audit: 'a' } }, /"prompts.audit" must be an array/],
    ['an empty acr list', { acr: [] }, /requireMcpAuth option "acr" must be a non-empty array/],
    ['a maxAge that is no duration', { maxAge: 'soon' }, /requireMcpAuth maxAge/],
  ])('%s is a TypeError at set-up', (_name, options, message) => {
    expect(() => requireMcpAuth(auth, options as never)).toThrow(message);
    expect(() => requireMcpAuth(auth, options as never)).toThrow(TypeError);
  });
});

describe('requireMcpAuth option errors name the option', () => {
  it.each([
    ['', 'x'],
    ['scope', { scope: ['a'] }],
    ['tools', { tools: ['admin'] }],
    ['tools.admin', { tools: { admin: 'mcp:admin' } }],
    ['scopes', { scopes: 'mcp:tools' }],
    ['scopes.any', { scopes: { any: 'mcp:tools' } }],
    ['resources', { resources: ['file:///a'] }],
    ['resources.secret', { resources: { secret: ['a'] } }],
    ['prompts.audit', { prompts: { audit: 'a' } }],
    ['acr', { acr: ['two words'] }],
    ['maxAge', { maxAge: -5 }],
  ])('an OptionError at "%s" for %p', (option, options) => {
    const err = optionErrorOf(() => requireMcpAuth(auth, options as never));
    expect(err.option).toBe(option);
  });
});
