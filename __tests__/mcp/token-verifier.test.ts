// mcpTokenVerifier behind the SDK's own requireBearerAuth (1.x and 2.x): the SDK's client completes the OAuth flow
// against oidc-provider, the tool sees the AuthInfo; refusals are the SDK's 401, an outage never a 500.
// Sender-constrained tokens are refused on that path: it carries no DPoP proof and no client certificate.
import { createHash } from 'node:crypto';
import express from 'express';
import type { RequestHandler } from 'express';
import { createTokenAuth } from '../../lib';
import { mcpTokenVerifier } from '../../lib/mcp';
import { createDpopHolder } from '../../lib/testing';
import { listen, type Listening } from '../fixtures/listen';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';
import { connectMcpClient, type SdkLine } from '../fixtures/mcp-client';
import { mcpHandler, type SeenAuthInfo } from '../fixtures/mcp-server';

type BearerAuth = (options: {
  verifier: ReturnType<typeof mcpTokenVerifier>;
  requiredScopes: string[];
  resourceMetadataUrl: string;
  expectedResource?: URL;
}) => RequestHandler;

/**
 * The SDK's requireBearerAuth, loaded with `require`: importing its types would declare `req.auth` as the SDK's
 * AuthInfo in this whole test program (the repo's typecheck too), where the package's own declaration holds.
 */
function bearerAuth(line: SdkLine): BearerAuth {
  /* eslint-disable @typescript-eslint/no-require-imports -- see above */
  const module =
    line === 1
      ? require('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js')
      : require('@modelcontextprotocol/express');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return (module as { requireBearerAuth: BearerAuth }).requireBearerAuth;
}

/** A `tools/call` of whoami as the SDK's client would send it, with `token` as a Bearer token. */
function callWhoami(url: string, token: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
  });
}

let as: McpAuthorizationServer;
beforeAll(async () => {
  as = await startMcpAuthorizationServer();
});
afterAll(async () => {
  await as.close();
});

describe.each([1, 2] as const)('mcpTokenVerifier with the SDK %i.x requireBearerAuth', (line) => {
  let server: Listening;
  let resource: string;
  const runs: string[] = [];
  let auth: ReturnType<typeof createTokenAuth<'at+jwt'>>;
  // The same resource with DPoP and mTLS turned on (not required): the set-up that sees bound tokens.
  let bindingAuth: ReturnType<typeof createTokenAuth<'at+jwt'>>;

  beforeAll(async () => {
    const app = express();
    server = await listen(app);
    resource = `${server.origin}/mcp`;
    const metadataUrl = `${server.origin}/.well-known/oauth-protected-resource/mcp`;
    auth = createTokenAuth({
      issuerBaseURL: as.issuer,
      resource,
      scopesSupported: ['mcp:tools', 'mcp:admin'],
      claims: 'at+jwt',
    });
    app.use(auth.protectedResourceMetadata());
    const verifier = mcpTokenVerifier(auth, { sdk: line });
    // expectedResource: the SDK compares it with AuthInfo.resource, which is the configured resource.
    app.post(
      '/mcp',
      express.json(),
      bearerAuth(line)({
        verifier,
        requiredScopes: ['mcp:tools'],
        resourceMetadataUrl: metadataUrl,
        expectedResource: new URL(resource),
      }),
      mcpHandler(line, runs),
    );
    bindingAuth = createTokenAuth({ issuerBaseURL: as.issuer, resource, claims: 'at+jwt', dpop: {}, mtls: {} });
    const bindingVerifier = mcpTokenVerifier(bindingAuth, { sdk: line });
    app.post(
      '/mcp-binding',
      express.json(),
      bearerAuth(line)({
        verifier: bindingVerifier,
        requiredScopes: ['mcp:tools'],
        resourceMetadataUrl: metadataUrl,
        expectedResource: new URL(resource),
      }),
      mcpHandler(line, runs),
    );
  });
  afterAll(async () => {
    auth.close();
    bindingAuth.close();
    await server.close();
  });

  it('serves the real client end to end; the tool sees token, client id, scopes and expiry', async () => {
    const session = await connectMcpClient({ line, url: resource, login: 'alice' });
    const info = JSON.parse(await session.call('whoami')) as SeenAuthInfo;
    const token = session.provider.tokens()?.access_token;
    await session.close();
    expect(info.token).toBe(token);
    expect(info.clientId).toBe(session.provider.clientInformation()?.client_id);
    expect(info.scopes).toEqual(['mcp:tools']);
    expect(info.expiresAt).toBeGreaterThan(Date.now() / 1000);
    expect(info.resource).toBe(resource);
    expect(info.sub).toBe('alice');
  });

  it.each([
    ['another resource', () => as.serviceToken({ resource: 'http://127.0.0.1:9/other' })],
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
  ])('answers 401 invalid_token for %s, and the tool never runs', async (_name, token) => {
    runs.length = 0;
    const answer = await fetch(resource, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${await token()}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect(runs).toEqual([]);
  });

  it.each([
    ['a DPoP-bound token (cnf.jkt)', { jkt: createDpopHolder().jkt }],
    [
      'a certificate-bound token (cnf["x5t#S256"])',
      { 'x5t#S256': createHash('sha256').update('a client certificate').digest('base64url') },
    ],
  ])('answers 401 invalid_token for %s sent as Bearer, and the tool never runs', async (_name, cnf) => {
    const claims = {
      sub: 'alice',
      aud: resource,
      client_id: 'c',
      scope: 'mcp:tools',
      iat: 1_700_000_000,
      exp: 4_000_000_000,
    };
    for (const path of ['/mcp', '/mcp-binding']) {
      // The same claims without cnf pass, so the refusal below is the binding's alone.
      runs.length = 0;
      const unbound = await callWhoami(`${server.origin}${path}`, await as.mint({ ...claims, jti: `plain-${path}` }));
      expect(unbound.status).toBe(200);
      expect(runs).toEqual(['whoami']);

      runs.length = 0;
      const bound = await callWhoami(
        `${server.origin}${path}`,
        await as.mint({ ...claims, jti: `bound-${path}`, cnf }),
      );
      expect(bound.status).toBe(401);
      expect(bound.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      expect(runs).toEqual([]);
    }
  });

  it('an outage of the authorization server is temporarily_unavailable (400), never a 500', async () => {
    const closed = await listen(express());
    await closed.close();
    const down = createTokenAuth({ issuerBaseURL: closed.origin, audience: resource, claims: 'at+jwt' });
    const app = express();
    app.post(
      '/mcp',
      express.json(),
      bearerAuth(line)({
        verifier: mcpTokenVerifier(down, { sdk: line }),
        requiredScopes: [],
        resourceMetadataUrl: `${closed.origin}/x`,
      }),
      mcpHandler(line, runs),
    );
    const probe = await listen(app);
    try {
      // Its own issuer, so only the key fetch can fail.
      const token = await as.mint({
        iss: closed.origin,
        sub: 'alice',
        aud: resource,
        client_id: 'c',
        iat: 1,
        exp: 4_000_000_000,
        jti: 'j2',
      });
      const answer = await fetch(`${probe.origin}/mcp`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{}',
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { error: string }).error).toBe('temporarily_unavailable');
    } finally {
      down.close();
      await probe.close();
    }
  });
});

describe('mcpTokenVerifier options', () => {
  const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
  afterAll(() => auth.close());

  it.each([
    [
      'no line chosen while both SDK lines are installed (as here)',
      undefined,
      /both MCP SDK lines are installed; pass \{ sdk: 1 \} or \{ sdk: 2 \}/,
    ],
    ['an SDK line that does not exist', { sdk: 3 }, /option "sdk" must be 1 or 2/],
    ['an unknown option', { line: 1 }, /no option "line"/],
  ])('%s is a TypeError at set-up', (_name, options, message) => {
    expect(() => mcpTokenVerifier(auth, options as never)).toThrow(message);
    expect(() => mcpTokenVerifier(auth, options as never)).toThrow(TypeError);
  });

  it("a TokenAuth with dpop.required is a TypeError at set-up: the SDK's bearer path never carries a proof", () => {
    const required = createTokenAuth({
      key: { secret: 'a'.repeat(32) },
      issuer: false,
      audience: false,
      dpop: { required: true },
    });
    const optional = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false, dpop: {} });
    try {
      expect(() => mcpTokenVerifier(required, { sdk: 1 })).toThrow(TypeError);
      expect(() => mcpTokenVerifier(required, { sdk: 2 })).toThrow(
        /^express-verified-user: mcpTokenVerifier cannot serve a TokenAuth with "dpop\.required".*use requireMcpAuth\(auth\) instead$/,
      );
      // DPoP on but not required: bound tokens are refused per request, unbound ones still pass.
      expect(() => mcpTokenVerifier(optional, { sdk: 1 })).not.toThrow();
    } finally {
      required.close();
      optional.close();
    }
  });
});
