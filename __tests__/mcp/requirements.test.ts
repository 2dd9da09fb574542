// requireMcpAuth's per-tool requirements (`tools: { name: { scopes, roles, … } }`, docs/authorization.md) with the
// SDK's own client (1.x and 2.x) against oidc-provider: a user with the role reaches the tool after its scope
// step-up, one without is answered 403 `forbidden` with a challenge that starts no second step-up, and the hints
// name the tool; scopeImplies holds for requireMcpAuth as for routes.
import express from 'express';
import request from 'supertest';
import { createTokenAuth, type TokenAuthError } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { listen, type Listening } from '../fixtures/listen';
import {
  accessTokens,
  startMcpAuthorizationServer,
  type McpAuthorizationServer,
} from '../fixtures/mcp-authorization-server';
import { connectMcpClient } from '../fixtures/mcp-client';
import { mcpHandler, responseLog } from '../fixtures/mcp-server';
import { optionErrorOf } from '../fixtures/option-error';

let as: McpAuthorizationServer;
beforeAll(async () => {
  as = await startMcpAuthorizationServer({ roles: { alice: ['ops'] } });
});
afterAll(async () => {
  await as.close();
});

const toolCall = (name: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });

describe.each([1, 2] as const)('per-tool requirements with the SDK %i.x', (line) => {
  let server: Listening;
  let resource: string;
  let metadataUrl: string;
  let serverLog: string[];
  const runs: string[] = [];
  const refusals: TokenAuthError[] = [];
  let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;

  beforeAll(async () => {
    const app = express();
    server = await listen(app);
    resource = `${server.origin}/mcp`;
    metadataUrl = `${server.origin}/.well-known/oauth-protected-resource/mcp`;
    serverLog = responseLog(app);
    auth = createTokenAuth({
      issuerBaseURL: as.issuer,
      resource,
      scopesSupported: ['mcp:tools', 'mcp:admin'],
      claims: 'at+jwt',
      onError: (err) => refusals.push(err),
    });
    app.use(auth.protectedResourceMetadata());
    app.post(
      '/mcp',
      express.json(),
      requireMcpAuth(auth, {
        scopes: ['mcp:tools'],
        tools: {
          admin: { scopes: ['mcp:admin'], roles: ['ops'], allow: (claims) => claims.client_id !== '' },
        },
      }),
      mcpHandler(line, runs),
    );
  });
  afterAll(async () => {
    auth.close();
    await server.close();
  });
  beforeEach(() => {
    runs.length = 0;
    serverLog.length = 0;
    refusals.length = 0;
  });

  it('a user with the role steps up for the tool’s scope and reaches it', async () => {
    const session = await connectMcpClient({ line, url: resource, login: 'alice' });
    await expect(session.call('admin')).resolves.toBe('admin ok');
    await session.close();
    expect(runs).toEqual(['admin']);
    expect(serverLog).toContain(
      `POST /mcp -> 403  WWW-Authenticate: Bearer realm="api", error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="${metadataUrl}"`,
    );
    // The scope refusal's hint names the tool, not requireVerifiedUser.
    const scoped = refusals.find((err) => err.code === 'insufficient_scope');
    expect(scoped?.hint).toMatch(
      /^expected scopes "mcp:tools" and "mcp:admin" of tool "admin" \(requireMcpAuth option "tools"/,
    );
    expect(scoped?.hint).not.toMatch(/requireVerifiedUser/);
  });

  it('a user without it: 403 forbidden, a challenge with no error, no second step-up, and the tool never runs', async () => {
    const session = await connectMcpClient({ line, url: resource, login: 'bob' });
    await expect(session.call('whoami')).resolves.toContain('bob');
    await expect(session.call('admin')).rejects.toThrow();
    await session.close();
    expect(runs).toEqual(['whoami']);
    expect(serverLog).toContain(
      `POST /mcp -> 403  WWW-Authenticate: Bearer realm="api", resource_metadata="${metadataUrl}"`,
    );
    // One authorization for the session, one step-up for mcp:admin; the forbidden answer starts none.
    expect(session.provider.authorizations).toHaveLength(2);
    const forbidden = refusals.filter((err) => err.code === 'forbidden');
    expect(forbidden.length).toBeGreaterThan(0);
    expect(forbidden[0].reason).toBe('role');
    expect(forbidden[0].hint).toMatch(
      /^expected role "ops" of tool "admin" \(requireMcpAuth option "tools"\), read from claim "roles" \(option "roleClaim"\); the token's value is absent$/,
    );
  });
});

describe('requireMcpAuth with requirements and scopeImplies, over plain JSON-RPC', () => {
  let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;
  let app: express.Express;
  const resource = 'http://127.0.0.1:9/mcp';
  const reached: string[] = [];

  beforeAll(() => {
    auth = createTokenAuth({
      issuerBaseURL: as.issuer,
      resource,
      claims: 'at+jwt',
      scopeImplies: { 'mcp:admin': ['mcp:tools'] },
    });
    app = express();
    app.post(
      '/mcp',
      express.json(),
      requireMcpAuth(auth, {
        scopes: ['mcp:tools'],
        tools: { deploy: { roles: ['ops'] }, audit: ['mcp:admin'] },
        prompts: { secrets: { claims: { tier: 'gold' } } },
      }),
      (req, res) => {
        reached.push(String(auth.claims(req).sub));
        res.json({ ok: true });
      },
    );
  });
  afterAll(() => auth.close());
  beforeEach(() => {
    reached.length = 0;
  });

  const token = accessTokens(() => as, resource);
  const send = async (bearer: string, body: unknown) =>
    request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${bearer}`)
      .set('Accept', 'application/json, text/event-stream')
      .send(body as object);

  it('a token holding mcp:admin only passes where mcp:tools is asked (scopeImplies)', async () => {
    const onlyAdmin = await as.serviceToken({ resource, scope: 'mcp:admin' });
    expect((await send(onlyAdmin, toolCall('audit'))).status).toBe(200);
    expect((await send(onlyAdmin, toolCall('whoami'))).status).toBe(200);
    const onlyTools = await as.serviceToken({ resource, scope: 'mcp:tools' });
    expect((await send(onlyTools, toolCall('audit'))).status).toBe(403);
  });

  it('a tool whose requirement the token misses is 403 forbidden; other tools are not held to it', async () => {
    const plain = await token({});
    const refused = await send(plain, toolCall('deploy'));
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ status: 'error', message: 'Forbidden' });
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="api", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"',
    );
    expect((await send(plain, toolCall('whoami'))).status).toBe(200);
    expect((await send(await token({ roles: ['ops'] }), toolCall('deploy'))).status).toBe(200);
  });

  it('a prompt gated by a claim; a batch calling two gated items needs both', async () => {
    const getPrompt = { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'secrets' } };
    expect((await send(await token({ tier: 'gold' }), getPrompt)).status).toBe(200);
    expect((await send(await token({ tier: 'silver' }), getPrompt)).status).toBe(403);
    const batch = [toolCall('deploy'), getPrompt];
    expect((await send(await token({ roles: ['ops'] }), batch)).status).toBe(403);
    expect((await send(await token({ roles: ['ops'], tier: 'gold' }), batch)).status).toBe(200);
  });

  it('malformed per-tool requirements are refused when the middleware is built', () => {
    expect(optionErrorOf(() => requireMcpAuth(auth, { tools: { deploy: { roles: { any: [] } } } })).option).toBe(
      'tools.deploy.roles.any',
    );
  });
});
