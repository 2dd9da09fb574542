// `express-verified-user check <url>` against real servers on loopback: a correct MCP server (requireMcpAuth and
// the metadata router, oidc-provider as its authorization server), two broken ones (no resource_metadata; a
// document whose resource differs) and hostile ones. Lines, exit codes and the requests each server received.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import { createTokenAuth } from '../../lib';
import { runCli } from '../../lib/cli';
import { CHECK_LIMITS } from '../../lib/cli/check';
import { requireMcpAuth } from '../../lib/mcp';
import { listen } from '../fixtures/listen';
import { json, startLoopbackServer, hang, type LoopbackServer } from '../fixtures/loopback-server';
import { startMcpAuthorizationServer, type McpAuthorizationServer } from '../fixtures/mcp-authorization-server';
import { mcpHandler } from '../fixtures/mcp-server';

const ROOT = join(__dirname, '..', '..');

let as: McpAuthorizationServer;
beforeAll(async () => {
  as = await startMcpAuthorizationServer();
});
afterAll(() => as.close());

/** An MCP server protected as docs/mcp.md shows, or broken as `setUp` makes it; every request it gets is listed. */
async function mcpServer(setUp: (app: express.Express, origin: string) => ReturnType<typeof createTokenAuth>) {
  const app = express();
  const requests: string[] = [];
  app.use((req, _res, next) => {
    requests.push(`${req.method} ${req.path}`);
    next();
  });
  const server = await listen(app);
  const auth = setUp(app, server.origin);
  return {
    url: `${server.origin}/mcp`,
    origin: server.origin,
    requests,
    auth,
    async close() {
      auth.close();
      await server.close();
    },
  };
}

/** What check says meets a duty it found unmet, for the probed URL `url` (lib/cli/check-duties.ts). */
const fix = (url: string) => {
  const resource = `createTokenAuth({ resource: '${url}', … })`;
  const metadata = `  fix: app.use(auth.protectedResourceMetadata()) at the app's root, with ${resource} (the URL clients call, as a proxy in front shows it)`;
  return {
    resourceMetadata: `  fix: ${resource} and app.use(auth.protectedResourceMetadata()): every challenge then names the document`,
    scope:
      '  fix: requireMcpAuth(auth, { scopes: [...] }) (or auth.requireVerifiedUser([...])) with option "resource": the 401 then names the scopes',
    metadata,
    token: `  fix: ${resource} (or option "audience"), never audience: false: tokens of other audiences are then refused`,
    unreachable: `  fix: make ${new URL(url).origin} reachable from here (host, port, TLS certificate), then protect the endpoint with requireMcpAuth(auth)`,
  };
};

/** The lines of a check run: its stdout without the summary, and the summary. */
async function check(args: string[]) {
  const outcome = await runCli(['check', ...args], {});
  const stdout = outcome.stdout ?? '';
  // Every FAIL line, whatever the server did, ends with what fixes it.
  for (const line of stdout.split('\n').filter((text) => text.startsWith('FAIL')))
    expect(line).toMatch(/\] {2}fix: \S/);
  return {
    code: outcome.code,
    stdout,
    lines: stdout.trim().split('\n').slice(0, -2),
    summary: stdout.trim().split('\n').at(-1),
  };
}

describe('check against a correct MCP server', () => {
  let server: Awaited<ReturnType<typeof mcpServer>>;
  let otherAudience: string;

  beforeAll(async () => {
    server = await mcpServer((app, origin) => {
      const auth = createTokenAuth({
        issuerBaseURL: as.issuer,
        resource: `${origin}/mcp`,
        scopesSupported: ['mcp:tools', 'mcp:admin'],
        claims: 'at+jwt',
      });
      app.use(auth.protectedResourceMetadata());
      app.post('/mcp', express.json(), requireMcpAuth(auth, { scopes: ['mcp:tools'] }), mcpHandler(2, []));
      return auth;
    });
    otherAudience = await as.serviceToken({ resource: 'http://127.0.0.1:9/other' });
    // The server's own discovery and keys, fetched before the run so that the authorization server's log is check's.
    await server.auth.verify(await as.serviceToken({ resource: server.url }));
    await as.log();
  });
  afterAll(() => server.close());

  /** What check prints for this server, the origins as given. */
  const expected = (mcp: string, issuer: string) => [
    'PASS  POST without a token: 401  [RFC 6750 §3.1; MCP 2025-11-25 §10]',
    'PASS  WWW-Authenticate: a Bearer challenge  [RFC 6750 §3; RFC 9110 §11.6.1]',
    'PASS  no error code without a token  [RFC 6750 §3.1]',
    `PASS  resource_metadata: ${mcp}/.well-known/oauth-protected-resource/mcp  [RFC 9728 §5.1; MCP 2025-06-18 §2.3.1, 2025-11-25 §4.2]`,
    'PASS  scope: "mcp:tools"  [MCP 2025-11-25 §4.2 (SHOULD); RFC 6750 §3]',
    'PASS  the resource_metadata document: resource is the probed URL  [RFC 9728 §3.2, §3.3]',
    `PASS  path form ${mcp}/.well-known/oauth-protected-resource/mcp: resource is the probed URL  [RFC 9728 §3.1, §3.3; MCP 2025-11-25 §4.2]`,
    `PASS  root form ${mcp}/.well-known/oauth-protected-resource: resource is the probed URL  [MCP 2025-11-25 §4.2 (fallback)]`,
    `PASS  authorization_servers: ${issuer}  [RFC 9728 §2; MCP 2025-11-25 §4.1]`,
    `PASS  ${issuer}: metadata at /.well-known/oauth-authorization-server, issuer identical  [RFC 8414 §3.1, §3.3; OIDC Discovery §4.3; MCP 2025-11-25 §4.3]`,
    `PASS  ${issuer}: authorization_endpoint and token_endpoint  [RFC 8414 §2]`,
    `PASS  ${issuer}: PKCE S256 in code_challenge_methods_supported  [MCP 2025-11-25 §11.4; RFC 7636 §4.2]`,
    `PASS  ${issuer}: clients register by dynamic registration  [MCP 2025-11-25 §5.1.4, §5.3; RFC 7591 §3]`,
    `PASS  ${issuer}: authorization_response_iss_parameter_supported true  [RFC 9207 §2.3; MCP 2026-07-28 §7.1 (SHOULD)]`,
    'PASS  --token (another audience): 401 invalid_token  [RFC 8707 §2; RFC 6750 §3.1; MCP 2025-11-25 §9.2]',
  ];

  it('passes every duty, exit code 0, in five requests: four to the MCP server, one to its authorization server', async () => {
    server.requests.length = 0;
    const run = await check([server.url, '--token', otherAudience]);
    expect(run.lines).toEqual(expected(server.origin, as.issuer));
    expect(run.summary).toBe('15 passed, 0 warned, 0 failed');
    expect(run.code).toBe(0);
    expect(server.requests).toEqual([
      'POST /mcp',
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /.well-known/oauth-protected-resource',
      'POST /mcp',
    ]);
    expect(await as.log()).toEqual(['GET /.well-known/oauth-authorization-server']);
    expect(run.stdout).not.toContain(otherAudience.split('.')[2]);
  });

  it('docs/mcp.md shows what check prints for such a server (its hosts named as on the page)', async () => {
    const page = readFileSync(join(ROOT, 'docs', 'mcp.md'), 'utf8');
    const shownOutput = /<!-- check-output -->\n```text\n([\s\S]*?)```/.exec(page)?.[1];
    const run = await check([server.url, '--token', otherAudience]);
    const named = run.stdout
      .split(server.origin)
      .join('https://mcp.example.com')
      .split(as.issuer)
      .join('https://as.example.com');
    expect(shownOutput).toBe(named.trimStart());
    await as.log();
  });

  it('without --token: the same lines but the last, and no token sent', async () => {
    server.requests.length = 0;
    const run = await check([server.url]);
    expect(run.lines).toEqual(expected(server.origin, as.issuer).slice(0, -1));
    expect(run.code).toBe(0);
    expect(server.requests).toHaveLength(3);
    await as.log();
  });
});

describe('check against broken MCP servers', () => {
  it('no resource_metadata in the challenge and no metadata document: FAIL lines, exit code 1, three requests', async () => {
    const server = await mcpServer((app, origin) => {
      const auth = createTokenAuth({ issuerBaseURL: as.issuer, audience: `${origin}/mcp`, claims: 'at+jwt' });
      app.post('/mcp', express.json(), auth.requireVerifiedUser(['mcp:tools']), (_req, res) => res.json({}));
      return auth;
    });
    try {
      const run = await check([server.url]);
      expect(run.lines).toEqual([
        'PASS  POST without a token: 401  [RFC 6750 §3.1; MCP 2025-11-25 §10]',
        'PASS  WWW-Authenticate: a Bearer challenge  [RFC 6750 §3; RFC 9110 §11.6.1]',
        'PASS  no error code without a token  [RFC 6750 §3.1]',
        `FAIL  resource_metadata: absent from the challenge  [RFC 9728 §5.1; MCP 2025-06-18 §2.3.1, 2025-11-25 §4.2]${fix(server.url).resourceMetadata}`,
        `WARN  scope: absent (clients then ask for scopes_supported)  [MCP 2025-11-25 §4.2 (SHOULD); RFC 6750 §3]${fix(server.url).scope}`,
        `FAIL  path form ${server.origin}/.well-known/oauth-protected-resource/mcp: answered 404  [RFC 9728 §3.1, §3.3; MCP 2025-11-25 §4.2]${fix(server.url).metadata}`,
        `WARN  root form ${server.origin}/.well-known/oauth-protected-resource: answered 404  [MCP 2025-11-25 §4.2 (fallback)]`,
        `FAIL  authorization_servers: no metadata document describes this resource  [RFC 9728 §2; MCP 2025-11-25 §4.1]${fix(server.url).metadata}`,
      ]);
      expect(run.summary).toBe('3 passed, 2 warned, 3 failed');
      expect(run.code).toBe(1);
      expect(server.requests).toEqual([
        'POST /mcp',
        'GET /.well-known/oauth-protected-resource/mcp',
        'GET /.well-known/oauth-protected-resource',
      ]);
      // docs/mcp.md shows this FAIL line and its fix, for the page's host.
      const page = readFileSync(join(ROOT, 'docs', 'mcp.md'), 'utf8');
      const shown = /^ {2}(FAIL {2}resource_metadata: absent from the challenge .*)$/m.exec(page)?.[1];
      expect(shown).toBe(run.lines[3].split(server.url).join('https://mcp.example.com/mcp'));
    } finally {
      await server.close();
    }
  });

  it('a metadata document whose resource differs (a proxy serves /mcp as /api/mcp): FAIL lines, exit code 1', async () => {
    const server = await mcpServer((app, origin) => {
      const auth = createTokenAuth({ issuerBaseURL: as.issuer, resource: `${origin}/api/mcp`, claims: 'at+jwt' });
      app.use(auth.protectedResourceMetadata());
      app.post('/mcp', express.json(), requireMcpAuth(auth, { scopes: ['mcp:tools'] }), (_req, res) => res.json({}));
      return auth;
    });
    try {
      const run = await check([server.url]);
      const other = `"${server.origin}/api/mcp", not the probed ${server.url}`;
      expect(run.lines.slice(3)).toEqual([
        `PASS  resource_metadata: ${server.origin}/.well-known/oauth-protected-resource/api/mcp  [RFC 9728 §5.1; MCP 2025-06-18 §2.3.1, 2025-11-25 §4.2]`,
        'PASS  scope: "mcp:tools"  [MCP 2025-11-25 §4.2 (SHOULD); RFC 6750 §3]',
        `FAIL  the resource_metadata document: resource is ${other}  [RFC 9728 §3.2, §3.3]${fix(server.url).metadata}`,
        `FAIL  path form ${server.origin}/.well-known/oauth-protected-resource/mcp: answered 404  [RFC 9728 §3.1, §3.3; MCP 2025-11-25 §4.2]${fix(server.url).metadata}`,
        `WARN  root form ${server.origin}/.well-known/oauth-protected-resource: resource is ${other}  [MCP 2025-11-25 §4.2 (fallback)]`,
        `FAIL  authorization_servers: no metadata document describes this resource  [RFC 9728 §2; MCP 2025-11-25 §4.1]${fix(server.url).metadata}`,
      ]);
      expect(run.code).toBe(1);
      expect(server.requests).toEqual([
        'POST /mcp',
        'GET /.well-known/oauth-protected-resource/api/mcp',
        'GET /.well-known/oauth-protected-resource/mcp',
        'GET /.well-known/oauth-protected-resource',
      ]);
    } finally {
      await server.close();
    }
  });

  it('run as the command (a child process): the lines on stdout as they come, exit code 1', async () => {
    const server = await mcpServer((app, origin) => {
      const auth = createTokenAuth({ issuerBaseURL: as.issuer, audience: `${origin}/mcp`, claims: 'at+jwt' });
      app.post('/mcp', auth.requireVerifiedUser(), (_req, res) => res.json({}));
      return auth;
    });
    try {
      const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(
          process.execPath,
          ['-r', join(ROOT, 'scripts', 'ts-register.js'), join(ROOT, 'lib', 'cli.ts'), 'check', server.url],
          { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000, encoding: 'utf8' },
          (err, out) => resolve({ code: err === null ? 0 : Number((err as { code?: unknown }).code), stdout: out }),
        );
      });
      expect(code).toBe(1);
      expect(stdout).toMatch(/^PASS {2}POST without a token: 401 /);
      expect(stdout).toContain('FAIL  resource_metadata: absent from the challenge');
      expect(stdout.trim().split('\n').at(-1)).toBe('3 passed, 2 warned, 3 failed');
    } finally {
      await server.close();
    }
  });
});

describe('check against hostile servers: bounded, nothing unsafe printed', () => {
  let hostile: LoopbackServer;
  beforeAll(async () => {
    hostile = await startLoopbackServer(hang);
  });
  afterAll(() => hostile.close());
  beforeEach(() => hostile.reset());

  const challenge = (params: string) => ({ 'WWW-Authenticate': `Bearer ${params}` });

  it('a server that never answers: the run ends at its time limit; one request, the rest not sent', async () => {
    hostile.handler = hang;
    const run = await check([`${hostile.origin}/mcp`, '--timeout', '1s']);
    expect(run.code).toBe(1);
    expect(run.lines[0]).toBe(
      `FAIL  POST without a token: no answer (timeout)  [RFC 6750 §3.1; MCP 2025-11-25 §10]${fix(`${hostile.origin}/mcp`).unreachable}`,
    );
    expect(run.stdout).toContain('path form');
    expect(run.stdout).toContain('not sent: the run reached its time limit');
    expect(hostile.requests).toBe(1);
  });

  it('a document of endless bytes is read no further than 64 KiB', async () => {
    let written = 0;
    hostile.handler = (req, res) => {
      if (req.method === 'POST') {
        json(res, 401, {}, challenge(`resource_metadata="${hostile.origin}/.well-known/oauth-protected-resource/mcp"`));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const pump = () => {
        while (written < 50 * 1024 * 1024 && res.write(Buffer.alloc(16 * 1024, 0x20))) written += 16 * 1024;
      };
      res.on('drain', pump);
      res.on('close', () => res.removeListener('drain', pump));
      pump();
    };
    const run = await check([`${hostile.origin}/mcp`]);
    expect(run.stdout).toContain('FAIL  the resource_metadata document: answered more than 64 KiB');
    expect(run.code).toBe(1);
    expect(written).toBeLessThan(50 * 1024 * 1024);
    expect(hostile.requests).toBe(3);
  });

  it('ten authorization servers: four are checked, the request budget holds', async () => {
    const issuers = Array.from({ length: 10 }, (_, i) => `${hostile.origin}/tenant${i}`);
    hostile.handler = (req, res) => {
      if (req.method === 'POST') json(res, 401, {}, challenge('scope="a"'));
      else if (req.url?.startsWith('/.well-known/oauth-protected-resource'))
        json(res, 200, { resource: `${hostile.origin}/mcp`, authorization_servers: issuers });
      else json(res, 404, {});
    };
    const run = await check([`${hostile.origin}/mcp`, '--token', 'not-a-real-token-but-secret']);
    expect(run.stdout).toContain(`PASS  authorization_servers: ${issuers.slice(0, 4).join(', ')} (6 more not checked)`);
    expect(run.lines.filter((line) => line.includes(': no metadata ('))).toHaveLength(4);
    // 1 POST, the path and root forms, 3 metadata URLs for each of 4 issuers, the POST with the token.
    expect(hostile.requests).toBe(1 + 2 + 4 * 3 + 1);
    expect(hostile.requests).toBeLessThanOrEqual(CHECK_LIMITS.maxRequests);
    expect(run.stdout).not.toContain('not-a-real-token-but-secret');
    expect(run.lines.at(-1)).toBe(
      'PASS  --token (another audience): 401  [RFC 8707 §2; RFC 6750 §3.1; MCP 2025-11-25 §9.2]',
    );
  });

  it('authorization servers found where MCP clients look; one without PKCE or registration, one naming another issuer', async () => {
    const weak = `${hostile.origin}/weak`;
    const liar = `${hostile.origin}/liar`;
    const endpoints = (issuer: string) => ({
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
    });
    hostile.handler = (req, res) => {
      if (req.method === 'POST') json(res, 401, {}, challenge('scope="a"'));
      else if (req.url?.startsWith('/.well-known/oauth-protected-resource'))
        json(res, 200, { resource: `${hostile.origin}/mcp`, authorization_servers: [weak, liar] });
      // The weak one only where OpenID Connect appends; the liar at RFC 8414's path insertion.
      else if (req.url === '/weak/.well-known/openid-configuration')
        json(res, 200, { ...endpoints(weak), code_challenge_methods_supported: ['plain'] });
      else if (req.url === '/.well-known/oauth-authorization-server/liar')
        json(res, 200, { ...endpoints('https://honest.example'), code_challenge_methods_supported: ['S256'] });
      else json(res, 404, {});
    };
    const run = await check([`${hostile.origin}/mcp`]);
    const refs = {
      metadata: '[RFC 8414 §3.1, §3.3; OIDC Discovery §4.3; MCP 2025-11-25 §4.3]',
      pkce: '[MCP 2025-11-25 §11.4; RFC 7636 §4.2]',
    };
    expect(run.lines.slice(-6)).toEqual([
      `PASS  ${weak}: metadata at /weak/.well-known/openid-configuration, issuer identical  ${refs.metadata}`,
      `PASS  ${weak}: authorization_endpoint and token_endpoint  [RFC 8414 §2]`,
      `FAIL  ${weak}: PKCE S256 missing from code_challenge_methods_supported  ${refs.pkce}  fix: the authorization server's configuration: support PKCE with S256 and list it in code_challenge_methods_supported`,
      `FAIL  ${weak}: no registration_endpoint and no client ID metadata documents: only pre-registered clients can sign in  [MCP 2025-11-25 §5.1.4, §5.3; RFC 7591 §3]  fix: the authorization server's configuration: open dynamic client registration (RFC 7591; oidc-provider: features.registration) or client ID metadata documents`,
      `WARN  ${weak}: authorization_response_iss_parameter_supported not true  [RFC 9207 §2.3; MCP 2026-07-28 §7.1 (SHOULD)]  fix: the authorization server's configuration: send iss in authorization responses (RFC 9207) and say so in its metadata`,
      `FAIL  ${liar}: metadata at /.well-known/oauth-authorization-server/liar names issuer "https://honest.example", not the one listed  ${refs.metadata}  fix: give option "issuerBaseURL" (or "issuer") exactly as the issuer names itself in its metadata (RFC 8414 §3.3)`,
    ]);
    expect(run.code).toBe(1);
    expect(hostile.seen.map((seen) => seen.url).filter((url) => url?.includes('weak'))).toEqual([
      '/.well-known/oauth-authorization-server/weak',
      '/.well-known/openid-configuration/weak',
      '/weak/.well-known/openid-configuration',
    ]);
  });

  it('a server that answers no token with an error code, accepts the token, redirects, sends control characters: FAIL lines, escaped, none followed', async () => {
    hostile.handler = (req, res) => {
      if (req.method === 'POST' && req.headers.authorization !== undefined) json(res, 200, {});
      else if (req.method === 'POST')
        json(
          res,
          401,
          {},
          challenge(`error="invalid_token", scope="\u009b2Jx", resource_metadata="${hostile.origin}/moved"`),
        );
      else if (req.url === '/moved') res.writeHead(302, { Location: `${hostile.origin}/elsewhere` }).end();
      else json(res, 404, {});
    };
    const run = await check([`${hostile.origin}/mcp`, '--token', 'another-secret-token']);
    expect(run.stdout).toContain('FAIL  error="invalid_token" although no token was sent  [RFC 6750 §3.1]');
    // CSI (U+009B), a C1 control some terminals obey, escaped as text.
    expect(run.stdout).toContain('PASS  scope: "\\u009b2Jx"');
    expect(run.stdout).not.toContain('\u009b');
    expect(run.stdout).toContain(
      'FAIL  the resource_metadata document: no answer (network error, or a redirect, which check does not follow)',
    );
    expect(run.lines.at(-1)).toBe(
      `FAIL  --token (another audience): 200, accepted  [RFC 8707 §2; RFC 6750 §3.1; MCP 2025-11-25 §9.2]${fix(`${hostile.origin}/mcp`).token}`,
    );
    expect(run.stdout).not.toContain('another-secret-token');
    expect(hostile.seen.map((seen) => seen.url)).not.toContain('/elsewhere');
    expect(run.code).toBe(1);
  });
});

describe('check: bad input is exit code 2', () => {
  it.each([
    ['no URL', [], 'check takes one URL'],
    ['two URLs', ['http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'], 'check takes one URL'],
    ['a relative URL', ['/mcp'], 'absolute http(s) URL'],
    ['another scheme', ['ftp://127.0.0.1/mcp'], 'absolute http(s) URL'],
    ['a fragment', ['http://127.0.0.1:9/mcp#x'], 'no credentials and no fragment'],
    ['a timeout without unit', ['http://127.0.0.1:9/mcp', '--timeout', '10'], '--timeout must be a duration'],
    ['a timeout too long', ['http://127.0.0.1:9/mcp', '--timeout', '1h'], 'at most 300s'],
  ])('%s', async (_name, args, message) => {
    const outcome = await runCli(['check', ...args], {});
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(message);
  });

  it('--help names every option and the exit codes', async () => {
    const help = (await runCli(['check', '--help'], {})).stdout ?? '';
    for (const text of [
      '--token <token>',
      '--timeout <duration>',
      '--allow-private',
      'PASS',
      'WARN',
      'FAIL',
      'Exit codes',
    ])
      expect(help).toContain(text);
    expect((await runCli(['help', 'check'], {})).stdout).toBe(help);
  });
});
