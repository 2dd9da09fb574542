// requireMcpAuth's per-tool gate through real Express 4 and 5 apps and real tokens: the tools of a request are
// read from the Mcp-Method/Mcp-Name headers and the JSON-RPC body together; nothing unseen passes.
import request from 'supertest';
import express5 from 'express';
import type { Express, RequestHandler } from 'express';
import { createTokenAuth } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { MAX_BATCH_CALLS } from '../../lib/mcp/tools';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { optionErrorOf } from '../fixtures/option-error';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';

const RESOURCE = 'http://127.0.0.1:9/mcp';
const METADATA = 'http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp';

let as: McpAuthorizationServer;
let tools: string;
let admin: string;
let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;
beforeAll(async () => {
  as = await startMcpAuthorizationServer();
  [tools, admin] = await Promise.all([
    as.serviceToken({ resource: RESOURCE, scope: 'mcp:tools' }),
    as.serviceToken({ resource: RESOURCE, scope: 'mcp:tools mcp:admin' }),
  ]);
  auth = createTokenAuth({ issuerBaseURL: as.issuer, resource: RESOURCE, claims: 'at+jwt' });
});
afterAll(async () => {
  auth.close();
  await as.close();
});

const call = (name: string, id = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });

describe.each(EXPRESS_VERSIONS)('requireMcpAuth tool gate (%s)', (_name, makeApp) => {
  let app: Express;
  const reached: unknown[] = [];
  const json = express5.json() as RequestHandler;

  beforeAll(() => {
    app = makeApp();
    const gate = requireMcpAuth(auth, {
      scopes: ['mcp:tools'],
      tools: { admin: ['mcp:admin'], constructor: ['mcp:admin'] },
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

  it('the Mcp-Method/Mcp-Name headers gate too, and cannot hide the call the body makes', async () => {
    const byHeader = await request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${tools}`)
      .set('Mcp-Method', 'tools/call')
      .set('Mcp-Name', 'admin')
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(byHeader.status).toBe(403);
    const hidden = await request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${tools}`)
      .set('Mcp-Method', 'tools/call')
      .set('Mcp-Name', 'whoami')
      .send(call('admin'));
    expect(hidden.status).toBe(403);
    expect(reached).toEqual([]);
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

  it('a JSON POST that no body parser read is refused (500), never let through unseen; a GET has no calls', async () => {
    const unread = await request(app)
      .post('/raw')
      .set('Authorization', `Bearer ${admin}`)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(call('admin')));
    expect(unread.status).toBe(500);
    expect(reached).toEqual([]);
    expect((await request(app).get('/mcp').set('Authorization', `Bearer ${tools}`)).status).toBe(200);
  });
});

describe('requireMcpAuth options', () => {
  it.each([
    ['options not an object', 'x', /requireMcpAuth options must be an object/],
    ['an unknown option', { scope: ['a'] }, /no option "scope"/],
    ['tools not an object', { tools: ['admin'] }, /option "tools" must be an object/],
    ['a tool whose scopes are not a list', { tools: { admin: 'mcp:admin' } }, /"tools.admin" must be an array/],
    ['a malformed endpoint requirement', { scopes: 'mcp:tools' }, /scopes/],
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
  ])('an OptionError at "%s" for %p', (option, options) => {
    const err = optionErrorOf(() => requireMcpAuth(auth, options as never));
    expect(err.option).toBe(option);
  });
});
