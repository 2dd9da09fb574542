// Drivers of docs/exchange.md's code blocks (see __tests__/fixtures/doc-run.ts): the route and the MCP tool run against
// the MCP fixture's oidc-provider with its token-exchange grant, calling a downstream API protected by this package;
// the page's own oidc-provider program runs with its web app's sign-in and its route, end to end.
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { readDocs } from '../fixtures/doc-blocks';
import { call, docRun, excerpt, freePort, type DocDrivers, type DocRun, type RunOptions } from '../fixtures/doc-run';
import { signIn } from '../fixtures/sign-in';
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

const AS = "'https://as.example.com'";
const CALLBACK = "'https://app.example.com/callback'";
const EXCHANGE_SECRET = randomBytes(32).toString('base64url');
const SIGNING_JWKS = JSON.stringify({
  keys: [
    {
      ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
      kid: randomUUID(),
      use: 'sig',
    },
  ],
});

/** The page's block `id`, run beside the block under test with the same driver table. */
function pageBlock(t: DocRun, id: string) {
  const block = readDocs().blocks.find((b) => b.id === id);
  if (block === undefined) throw new Error(`docs/exchange.md: the ${id} block is gone`);
  return t.own(docRun(block, drivers[id]));
}

/** The page's authorization server (its issuer on a port known before it listens) and the CI API it issues for. */
async function pageProvider(t: DocRun, callback = 'http://127.0.0.1:9/callback') {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const ci = t.own(await startDownstream(issuer));
  const block = t.block.id === 'exchange-oidc-provider' ? t : pageBlock(t, 'exchange-oidc-provider');
  await block.serve({
    port,
    replace: { [AS]: `'${issuer}'`, "'https://ci.example.com/api'": `'${ci.resource}'`, [CALLBACK]: `'${callback}'` },
    env: { SIGNING_JWKS, EXCHANGE_SECRET, COOKIE_SECRET: randomBytes(32).toString('base64url') },
  });
  return { issuer, ci };
}

/** The user's token by the code flow with PKCE of the page's web app client, signed in at the dev pages. */
async function userTokenOf(issuer: string, callback: string): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: 'web-app',
    response_type: 'code',
    redirect_uri: callback,
    scope: 'read:profile',
    resource: 'https://api.example.com',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const { url } = await signIn(`${issuer}/auth?${query}`, 'alice', (next) => next.href.startsWith(callback));
  const form = {
    grant_type: 'authorization_code',
    code: url.searchParams.get('code') ?? '',
    code_verifier: verifier,
    redirect_uri: callback,
    client_id: 'web-app',
  };
  const answer = await fetch(`${issuer}/token`, { method: 'POST', body: new URLSearchParams(form) });
  return ((await answer.json()) as { access_token: string }).access_token;
}

/** One RFC 8693 request of the page's client `api-gateway` (its secret unless `secret` says otherwise). */
async function exchangeAt(issuer: string, form: Record<string, string>, secret = EXCHANGE_SECRET) {
  const answer = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`api-gateway:${secret}`).toString('base64')}` },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      ...form,
    }),
  });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
}

const claimsOf = (token: unknown) => JSON.parse(Buffer.from(String(token).split('.')[1], 'base64url').toString());

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
  // The page's provider alone: a user's token from its web app's sign-in is exchanged for one to the CI API that
  // names api-gateway as actor; each refusal is the RFC 8693 error the page says.
  'exchange-oidc-provider': {
    async run(t) {
      const callback = 'http://127.0.0.1:9/callback';
      const { issuer, ci } = await pageProvider(t, callback);
      const user = await userTokenOf(issuer, callback);
      expect(claimsOf(user)).toMatchObject({ sub: 'alice', aud: 'https://api.example.com', client_id: 'web-app' });
      const granted = await exchangeAt(issuer, { subject_token: user, resource: ci.resource, scope: 'builds:read' });
      expect(granted.status).toBe(200);
      expect(granted.body).toMatchObject({ token_type: 'Bearer', scope: 'builds:read' });
      // oidc-provider answers exp - now in whole seconds: 600, or 599 when a second turned over between the two.
      expect(granted.body.expires_in).toBeGreaterThanOrEqual(599);
      expect(granted.body.expires_in).toBeLessThanOrEqual(600);
      const onward = await ci.auth.verify(String(granted.body.access_token));
      expect([onward.sub, onward.aud, ci.auth.actorsOf(onward)]).toEqual([
        'alice',
        ci.resource,
        [{ sub: 'api-gateway' }],
      ]);

      const refusals = [
        [{ subject_token: user, resource: ci.resource, scope: 'builds:write' }, 'invalid_scope'],
        [{ subject_token: user, resource: 'https://other.example.com/api' }, 'invalid_target'],
        [{ subject_token: user, audience: 'constructor' }, 'invalid_target'],
        [{ subject_token: String(granted.body.access_token), resource: ci.resource }, 'invalid_request'],
        [{ subject_token: `${user.slice(0, -4)}AAAA`, resource: ci.resource }, 'invalid_request'],
      ] as const;
      for (const [form, error] of refusals)
        expect(await exchangeAt(issuer, form)).toMatchObject({ status: 400, body: { error } });
      const stranger = await exchangeAt(issuer, { subject_token: user, resource: ci.resource }, 'wrong');
      expect(stranger).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    },
  },
  // The whole chain: the web app's sign-in, the page's route exchanging the user's token at the page's provider, the
  // CI API's answer about the token it got, relayed to the browser.
  'exchange-oidc-provider-web-app': {
    async run(t) {
      const port = await freePort();
      const callback = `http://127.0.0.1:${port}/callback`;
      const { issuer, ci } = await pageProvider(t, callback);
      const front = await pageBlock(t, 'exchange-route').serve({
        replace: {
          [AS]: `'${issuer}'`,
          "'https://ci.example.com/api'": `'${ci.resource}'`,
          "'https://ci.example.com/api/builds'": `'${ci.resource}/builds'`,
        },
        env: { EXCHANGE_SECRET },
      });
      const web = await t.serve({
        port,
        replace: {
          [AS]: `'${issuer}'`,
          [CALLBACK]: `'${callback}'`,
          "'https://api.example.com/builds'": `'${front.origin}/builds'`,
        },
      });
      const { url, answer } = await signIn(`${web.origin}/login`, 'alice');
      expect(url.href.startsWith(callback)).toBe(true);
      expect(answer?.status).toBe(200);
      expect(JSON.parse(answer?.text ?? '')).toEqual({
        aud: ci.resource,
        sub: 'alice',
        client_id: 'api-gateway',
        actors: [{ sub: 'api-gateway' }],
      });
    },
  },
};
