// Drivers of docs/recipes.md's code blocks (see __tests__/fixtures/doc-run.ts): the vendors' recipes are excerpts,
// type-checked; the oidc-provider recipe runs: the page's own provider configuration on loopback, tokens from it by
// client credentials, and the page's APIs verifying them (JWT, then opaque with introspection).
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readDocs, REPO_ROOT } from '../fixtures/doc-blocks';
import { call, docRun, excerpt, freePort, type DocDriver, type DocDrivers, type DocRun } from '../fixtures/doc-run';

const ISSUER = "'https://auth.example.com'";
const API = 'https://api.example.com';
const REPORTS_JOB_SECRET = randomBytes(32).toString('base64url');
const MESSAGES_API_SECRET = randomBytes(32).toString('base64url');
const SIGNING_JWKS = JSON.stringify({
  keys: [
    {
      ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
      kid: 'k1',
      use: 'sig',
    },
  ],
});

/** The page's provider, on a loopback port it knows before listening (its issuer); `replace` changes it further. */
async function startProvider(t: DocRun, replace: Record<string, string> = {}): Promise<string> {
  const block = readDocs().blocks.find((b) => b.id === 'recipes-oidc-provider');
  if (block === undefined) throw new Error('docs/recipes.md: the recipes-oidc-provider block is gone');
  const provider = t.own(docRun(block, drivers['recipes-oidc-provider']));
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  await provider.serve({
    port,
    replace: { [ISSUER]: `'${issuer}'`, ...replace },
    env: { SIGNING_JWKS, REPORTS_JOB_SECRET, MESSAGES_API_SECRET },
  });
  return issuer;
}

/** A client credentials token request of `reports-job` (RFC 6749 §4.4), as its job would make it. */
function clientCredentials(issuer: string, scope: string) {
  return fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Authorization: `Basic ${Buffer.from(`reports-job:${REPORTS_JOB_SECRET}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope === '' ? {} : { scope }) }),
    signal: AbortSignal.timeout(10_000),
  });
}

async function accessToken(issuer: string, scope: string): Promise<string> {
  const answer = await clientCredentials(issuer, scope);
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { access_token: string }).access_token;
}

/**
 * The page's API on the provider: 200 with the token's client; 403 for a token without read:messages; 401 without a
 * token and for a forged one.
 */
async function expectApi(t: DocRun, issuer: string): Promise<void> {
  const api = await t.serve({ replace: { [ISSUER]: `'${issuer}'` }, env: { MESSAGES_API_SECRET } });
  const token = await accessToken(issuer, 'read:messages');
  const ok = await call(`${api.origin}/messages`, { token });
  expect(ok.status).toBe(200);
  expect(ok.body).toEqual({ client: 'reports-job', messages: [] });
  const short = await call(`${api.origin}/messages`, { token: await accessToken(issuer, '') });
  expect(short.status).toBe(403);
  expect(short.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="read:messages"');
  expect((await call(`${api.origin}/messages`)).status).toBe(401);
  const forged = await call(`${api.origin}/messages`, { token: `${token.slice(0, -2)}xx` });
  expect(forged.status).toBe(401);
  expect(forged.body).toEqual({ status: 'error', message: 'Invalid access token' });
}

const provider: DocDriver = {
  // The provider alone: a JWT access token for the API (RFC 9068), and the page's pitfall without `scopes`.
  async run(t) {
    const issuer = await startProvider(t);
    const token = await accessToken(issuer, 'read:messages');
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    expect(header).toMatchObject({ alg: 'RS256', typ: 'at+jwt' });
    expect(payload).toMatchObject({ iss: issuer, aud: API, client_id: 'reports-job', scope: 'read:messages' });

    const without = await startProvider(t, { "  scopes: ['read:messages', 'write:messages'],": '' });
    const refused = await clientCredentials(without, 'read:messages');
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: 'invalid_client_metadata',
      error_description: 'scope must only contain Authorization Server supported scope values',
    });
  },
};

/** Whether this Node is one oidc-provider calls unsupported (an LTS older than Node 22's, "Jod"): it warns there. */
const WARNED_RUNTIME = (process.release.lts ?? '') < 'Jod';

export const drivers: DocDrivers = {
  'recipes-auth0': excerpt(),
  'recipes-okta': excerpt(),
  'recipes-keycloak': excerpt(),
  'recipes-entra': excerpt(),
  'recipes-cognito': excerpt(),
  'recipes-identity-service': excerpt(),
  // The route of the page's identity-service recipe: its `auth` is the block before, 'strict' by default.
  'recipes-shape-b-route': excerpt(
    "const auth = createTokenAuth({ key: { upstream: 'https://identity.example.com' }, issuer: 'auth.example.com', audience: 'api.example.com' });\n",
  ),
  'recipes-roles-keycloak': excerpt(),
  'recipes-roles-entra': excerpt(),
  'recipes-roles-auth0': excerpt(),
  'recipes-roles-okta': excerpt(),
  'recipes-roles-cognito': excerpt(),
  'recipes-roles-zitadel': excerpt(),
  'recipes-oidc-provider': provider,
  // The JWT recipe's API against the page's provider; a token short of read:messages is 403.
  'recipes-oidc-provider-api': {
    async run(t) {
      await expectApi(t, await startProvider(t));
    },
  },
  // The opaque recipe: the page's provider with accessTokenFormat 'opaque'; its API introspects as messages-api.
  'recipes-oidc-provider-opaque': {
    async run(t) {
      const issuer = await startProvider(t, { "accessTokenFormat: 'jwt'": "accessTokenFormat: 'opaque'" });
      expect(await accessToken(issuer, 'read:messages')).not.toContain('.');
      await expectApi(t, issuer);
    },
  },
  // The Node 20 notice filtered: the provider loads, and stderr holds no notice where a bare import prints one.
  'recipes-oidc-provider-node20': {
    after: 'console.log(typeof Provider, typeof errors.InvalidTarget, typeof console.warn);\n',
    async run(t) {
      const bare = spawnSync(process.execPath, ['--input-type=module', '-e', "await import('oidc-provider');"], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(bare.stderr.includes('Unsupported runtime')).toBe(WARNED_RUNTIME);
      const { stdout, stderr } = await t.script();
      expect(stdout.trim()).toBe('function function function');
      expect(stderr).not.toContain('Unsupported runtime');
    },
  },
};
