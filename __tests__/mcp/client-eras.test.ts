// The SDK's own clients of both eras against each server shape of docs/mcp.md behind requireMcpAuth, with no body
// parser and no option changed: the 1.x client, and the 2.x client in its default `legacy` mode, in `auto` and
// pinned to 2026-07-28 (which only createMcpHandler serves). Each signs in through oidc-provider (discovery from
// the 401, dynamic registration, PKCE with `resource`), calls a tool, and steps up for a gated one.
import express from 'express';
import { createTokenAuth } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { listen, type Listening } from '../fixtures/listen';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';
import { connectMcpClient, type NegotiationMode, type SdkLine } from '../fixtures/mcp-client';
import { mcpEntryHandler, mcpHandler, type SeenAuthInfo } from '../fixtures/mcp-server';

type Shape = 'SDK 1.x transport' | 'SDK 2.x Node transport' | 'SDK 2.x createMcpHandler';
const CLIENTS: Array<[string, SdkLine, NegotiationMode]> = [
  ['the 1.x client', 1, 'legacy'],
  ['the 2.x client (legacy, its default)', 2, 'legacy'],
  ['the 2.x client (auto)', 2, 'auto'],
  ['the 2.x client pinned to 2026-07-28', 2, '2026-07-28'],
];
const CASES: Array<[Shape, string, SdkLine, NegotiationMode]> = [];
for (const shape of ['SDK 1.x transport', 'SDK 2.x Node transport', 'SDK 2.x createMcpHandler'] as const)
  for (const [client, line, mode] of CLIENTS)
    if (mode !== '2026-07-28' || shape === 'SDK 2.x createMcpHandler') CASES.push([shape, client, line, mode]);

let as: McpAuthorizationServer;
const servers: Listening[] = [];
const auths: Array<{ close(): void }> = [];
const urls = new Map<Shape, string>();
const runs: string[] = [];

beforeAll(async () => {
  as = await startMcpAuthorizationServer();
  const handlers: Record<Shape, express.RequestHandler> = {
    'SDK 1.x transport': mcpHandler(1, runs),
    'SDK 2.x Node transport': mcpHandler(2, runs),
    'SDK 2.x createMcpHandler': mcpEntryHandler(runs),
  };
  for (const [shape, handler] of Object.entries(handlers) as Array<[Shape, express.RequestHandler]>) {
    const app = express();
    const server = await listen(app);
    servers.push(server);
    const resource = `${server.origin}/mcp`;
    const auth = createTokenAuth({
      issuerBaseURL: as.issuer,
      resource,
      scopesSupported: ['mcp:tools', 'mcp:admin'],
      claims: 'at+jwt',
    });
    auths.push(auth);
    app.use(auth.protectedResourceMetadata());
    app.all('/mcp', requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { admin: ['mcp:admin'] } }), handler);
    urls.set(shape, resource);
  }
}, 60_000);
afterAll(async () => {
  for (const auth of auths) auth.close();
  await Promise.all(servers.map((server) => server.close()));
  await as.close();
});
beforeEach(() => {
  runs.length = 0;
});

describe.each(CASES)('%s, %s', (shape, _client, line, mode) => {
  it('signs in from the 401, calls a tool with the AuthInfo, steps up for the gated one and calls it', async () => {
    const url = urls.get(shape) as string;
    const session = await connectMcpClient({ line, url, login: 'alice', mode });
    try {
      const info = JSON.parse(await session.call('whoami')) as SeenAuthInfo;
      expect({ scopes: info.scopes, resource: info.resource, sub: info.sub }).toEqual({
        scopes: ['mcp:tools'],
        resource: url,
        sub: 'alice',
      });
      await expect(session.call('admin')).resolves.toBe('admin ok');
    } finally {
      await session.close();
    }
    expect(runs).toEqual(['whoami', 'admin']);
    const [first, stepUp] = session.provider.authorizations;
    expect(first.searchParams.get('resource')).toBe(url);
    expect(stepUp.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['mcp:tools', 'mcp:admin']));
    expect(session.log).toContain('POST /mcp -> 403');
  }, 60_000);
});
