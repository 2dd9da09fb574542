// Drivers of docs/exchange.md's code blocks (see __tests__/fixtures/doc-run.ts): the route and the MCP tool run against
// the MCP fixture's oidc-provider with its token-exchange grant, calling a downstream API protected by this package.
import { call, excerpt, type DocDrivers, type DocRun, type RunOptions } from '../fixtures/doc-run';
import { startDownstream, userToken, type Downstream } from '../fixtures/exchange';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';
import { callTool, RESOURCE, token } from './mcp';

/** The authorization server and the downstream API; the page's example hosts and client pointed at them. */
async function servers(
  t: DocRun,
  resource: string,
  clientId: string,
): Promise<{ as: McpAuthorizationServer; downstream: Downstream; run: RunOptions }> {
  const as = t.own(await startMcpAuthorizationServer());
  const downstream = t.own(await startDownstream(as.issuer));
  await as.allowExchange({ clientId: 'mcp-exchange', resource, targets: { [downstream.resource]: ['builds:read'] } });
  const run: RunOptions = {
    replace: {
      "'https://as.example.com'": `'${as.issuer}'`,
      "'https://ci.example.com/api'": `'${downstream.resource}'`,
      "'https://ci.example.com/api/builds'": `'${downstream.resource}/builds'`,
      [`clientId: '${clientId}'`]: "clientId: 'mcp-exchange'",
    },
    env: { EXCHANGE_SECRET: as.exchangeSecret },
  };
  return { as, downstream, run };
}

export const drivers: DocDrivers = {
  // The test issuer's own token exchange: the printed curl line's token gets the answer the page shows; none, a 401.
  'exchange-test-issuer': {
    async run(t) {
      const app = await t.serve();
      const token = /Authorization: Bearer ([\w.-]+)"/.exec(app.stdout())?.[1];
      expect(token).toBeDefined();
      expect((await call(`${app.origin}/builds`)).status).toBe(401);
      const answer = await call(`${app.origin}/builds`, { token });
      expect([answer.status, answer.body]).toEqual([
        200,
        { sub: 'alice', aud: 'ci.example.com', scopes: ['builds:read'], actors: [{ sub: 'test-client' }] },
      ]);
    },
  },
  // The route: the downstream API answers with its own audience and the exchanging client as actor; a refused
  // exchange is a 403 without a challenge.
  'exchange-route': {
    async run(t) {
      const front = 'https://api.example.com';
      const { as, downstream, run } = await servers(t, front, 'api-gateway');
      const app = await t.serve(run);
      const bearer = await userToken(as, { aud: front });
      expect((await call(`${app.origin}/builds`)).status).toBe(401);
      const answer = await call(`${app.origin}/builds`, { token: bearer });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        aud: downstream.resource,
        sub: 'alice',
        client_id: 'mcp-exchange',
        actors: [{ sub: 'mcp-exchange' }],
      });
      expect(downstream.seen).not.toContain(bearer);
      await as.allowExchange({ clientId: 'mcp-exchange', resource: front, targets: {} });
      const refused = await call(`${app.origin}/builds`, { token: await userToken(as, { aud: front, sub: 'bob' }) });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ status: 'error', message: 'Token exchange refused' });
      expect(refused.headers.get('www-authenticate')).toBeNull();
    },
  },
  // The MCP tool: the tool's onward call carries a token for the downstream API, made from the request's token.
  'exchange-mcp-tool': {
    async run(t) {
      const { as, downstream, run } = await servers(t, RESOURCE, 'mcp-server');
      const server = await t.serve(run);
      const bearer = await token(as, 'mcp:tools');
      const builds = await callTool(server.origin, 'builds', bearer);
      expect(builds.status).toBe(200);
      expect(JSON.parse(builds.text ?? '{}')).toMatchObject({ aud: downstream.resource, sub: 'alice' });
      expect(downstream.seen).not.toContain(bearer);
    },
  },
  'exchange-keycloak': excerpt(),
  'exchange-okta': excerpt(),
  'exchange-oidc-provider': excerpt(`declare class Provider {
  constructor(issuer: string, configuration: object);
}
declare function exchangeClaims(ctx: unknown, token: { extra?: object }): object | undefined;
declare function registerTokenExchange(provider: Provider, settings: object): void;
declare const signingKey: object;
declare const policy: Map<string, { resource: string; targets: Record<string, string[]> }>;
`),
};
