// requireMcpAuth with the SDK's own client (1.x and 2.x) against oidc-provider: discovery from the 401, dynamic
// registration, PKCE with `resource`, the AuthInfo a tool sees, per-tool step-up, and tokens that never reach a tool.
import express from 'express';
import request from 'supertest';
import { createTokenAuth } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { listen, type Listening } from '../fixtures/listen';
import {
  accessTokens,
  startMcpAuthorizationServer,
  type McpAuthorizationServer,
} from '../fixtures/mcp-authorization-server';
import { connectMcpClient } from '../fixtures/mcp-client';
import { mcpHandler, responseLog, type SeenAuthInfo } from '../fixtures/mcp-server';

let as: McpAuthorizationServer;
let other: McpAuthorizationServer;
beforeAll(async () => {
  [as, other] = await Promise.all([startMcpAuthorizationServer(), startMcpAuthorizationServer()]);
});
afterAll(async () => {
  await Promise.all([as.close(), other.close()]);
});

const toolCall = (name: string) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } });

describe.each([1, 2] as const)('requireMcpAuth with the SDK %i.x', (line) => {
  let server: Listening;
  let resource: string;
  let metadataUrl: string;
  let serverLog: string[];
  const runs: string[] = [];
  const subjects: unknown[] = [];
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
    });
    app.use(auth.protectedResourceMetadata());
    app.post(
      '/mcp',
      express.json(),
      requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { admin: ['mcp:admin'] } }),
      (req, _res, next) => {
        subjects.push(auth.claims(req).sub);
        next();
      },
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
  });

  it('the client finds the authorization server from the 401, registers, authorizes with PKCE and resource, and calls a tool', async () => {
    const session = await connectMcpClient({ line, url: resource, login: 'alice' });
    const info = JSON.parse(await session.call('whoami')) as SeenAuthInfo;
    await session.close();

    const [authorization] = session.provider.authorizations;
    expect(authorization.searchParams.get('resource')).toBe(resource);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('scope')?.split(' ')).toContain('mcp:tools');
    expect(serverLog[0]).toBe(
      `POST /mcp -> 401  WWW-Authenticate: Bearer realm="api", scope="mcp:tools", resource_metadata="${metadataUrl}"`,
    );
    const steps = session.log.map((entry) =>
      entry.replace(/\/interaction\/[^/ ]+/, '/interaction/…').replace(/\/auth\/[^/ ]+/, '/auth/…'),
    );
    const order = [
      'POST /mcp -> 401',
      'GET /.well-known/oauth-protected-resource/mcp -> 200',
      'POST /reg -> 201',
      'GET /auth -> 303',
      'POST /token -> 200',
      'POST /mcp -> 200',
    ];
    const at = order.map((step) => steps.indexOf(step));
    expect(at).not.toContain(-1);
    expect([...at].sort((a, b) => a - b)).toEqual(at);

    expect(info.token).toBe(session.provider.tokens()?.access_token);
    expect(info.clientId).toBe(session.provider.clientInformation()?.client_id);
    expect(info.scopes).toEqual(['mcp:tools']);
    expect(info.expiresAt).toBeGreaterThan(Date.now() / 1000);
    expect(info.resource).toBe(resource);
    expect(info.sub).toBe('alice');
    expect(subjects).toContain('alice');
  });

  it('a tool that needs more scope: 403 with its scopes and resource_metadata; the client steps up and succeeds', async () => {
    const session = await connectMcpClient({ line, url: resource, login: 'alice' });
    await expect(session.call('admin')).resolves.toBe('admin ok');
    await session.close();
    expect(serverLog).toContain(
      `POST /mcp -> 403  WWW-Authenticate: Bearer realm="api", error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="${metadataUrl}"`,
    );
    const stepUp = session.provider.authorizations[1];
    expect(stepUp.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['mcp:tools', 'mcp:admin']));
    expect(runs).toEqual(['admin']);
  });

  it('a user the authorization server will not grant the scope never reaches the tool', async () => {
    const session = await connectMcpClient({ line, url: resource, login: 'mallory' });
    await expect(session.call('whoami')).resolves.toContain('mallory');
    // 1.x gives up on the second 403 with the same challenge; 2.x asks again, and is refused again.
    await expect(session.call('admin')).rejects.toThrow();
    await session.close();
    expect(runs).toEqual(['whoami']);
  });

  it.each([
    ['a token for another resource', () => as.serviceToken({ resource: 'http://127.0.0.1:9/other' })],
    [
      'an expired token',
      () =>
        as.mint({
          sub: 'alice',
          aud: resource,
          client_id: 'c',
          scope: 'mcp:tools',
          iat: 1_600_000_000,
          exp: 1_600_000_600,
          jti: 'j1',
        }),
    ],
    ['a token of another issuer', () => other.serviceToken({ resource })],
  ])('%s: 401 invalid_token with resource_metadata, and the tool never runs', async (_name, token) => {
    const answer = await fetch(resource, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await token()}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: toolCall('whoami'),
    });
    expect(answer.status).toBe(401);
    const challenge = answer.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/^Bearer realm="api", error="invalid_token"/);
    expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
    expect(runs).toEqual([]);
  });
});

describe('requireMcpAuth step-up (acr, maxAge; RFC 9470)', () => {
  const resource = 'http://127.0.0.1:9/mcp';
  const metadata = 'http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp';
  let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;
  let app: express.Express;
  const reached: string[] = [];

  beforeAll(() => {
    auth = createTokenAuth({ issuerBaseURL: as.issuer, resource, claims: 'at+jwt' });
    app = express();
    app.post(
      '/mcp',
      express.json(),
      requireMcpAuth(auth, {
        scopes: ['mcp:tools'],
        tools: { admin: ['mcp:admin'] },
        acr: ['urn:example:mfa'],
        maxAge: '10m',
      }),
      (req, res) => {
        reached.push(String(auth.claims(req).acr));
        res.json({ ok: true });
      },
    );
  });
  afterAll(() => auth.close());
  beforeEach(() => {
    reached.length = 0;
  });

  const now = () => Math.floor(Date.now() / 1000);
  const token = accessTokens(() => as, resource);
  const send = async (bearer: string, tool = 'whoami') =>
    request(app)
      .post('/mcp')
      .set('Authorization', `Bearer ${bearer}`)
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {} } });

  it('a token whose acr is listed and whose auth_time is recent reaches the endpoint', async () => {
    const answer = await send(await token({ acr: 'urn:example:mfa', auth_time: now() - 60 }));
    expect(answer.status).toBe(200);
    expect(reached).toEqual(['urn:example:mfa']);
  });

  it.each([
    ['another acr', { acr: 'urn:example:pwd', auth_time: 0 }],
    ['no acr', { auth_time: 0 }],
    ['an authentication older than maxAge', { acr: 'urn:example:mfa', auth_time: -3600 }],
    ['no auth_time', { acr: 'urn:example:mfa' }],
  ])('%s: 401 insufficient_user_authentication with acr_values and max_age', async (_name, claims) => {
    const fresh = { ...claims } as Record<string, unknown>;
    if (typeof fresh.auth_time === 'number') fresh.auth_time = now() - 60 + (fresh.auth_time as number);
    const answer = await send(await token(fresh));
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe(
      `Bearer realm="api", error="insufficient_user_authentication", error_description="Insufficient user authentication", acr_values="urn:example:mfa", max_age="600", scope="mcp:tools", resource_metadata="${metadata}"`,
    );
    expect(reached).toEqual([]);
  });

  it('a gated tool demands both its scopes and the step-up', async () => {
    const mfa = { acr: 'urn:example:mfa', auth_time: now() - 60 };
    expect((await send(await token(mfa), 'admin')).status).toBe(403);
    expect((await send(await token({ scope: 'mcp:tools mcp:admin' }), 'admin')).status).toBe(401);
    expect((await send(await token({ ...mfa, scope: 'mcp:tools mcp:admin' }), 'admin')).status).toBe(200);
  });
});
