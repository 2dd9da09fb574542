/**
 * The `express-verified-user` command, run as a child process (node + the TypeScript sources): the tokens it
 * prints verify with createTokenAuth in real Express 4 and 5 apps; its keys serve as PEM and as a JWKS; bad
 * input is a clear message and exit code 2. The error matrix also runs in-process through runCli.
 */
import { execFile, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { decode } from 'jsonwebtoken';
import { createTokenAuth, type TokenAuthOptions } from '../lib';
import { runCli } from '../lib/cli';
import { EXPRESS_VERSIONS } from './fixtures/express';
import { json, startLoopbackServer } from './fixtures/loopback-server';

const ROOT = join(__dirname, '..');
const SECRET = 'cli-test-secret-that-is-long-enough-for-hs256';
const work = mkdtempSync(join(tmpdir(), 'evu-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the command in a child Node with only PATH and `env` in its environment (no TOKEN_* of this process). */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', join(ROOT, 'scripts', 'ts-register.js'), join(ROOT, 'lib', 'cli.ts'), ...args],
      {
        cwd: work,
        env: { PATH: process.env.PATH ?? '', ...env },
        timeout: 30_000,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        const code =
          err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** GET /me through a real Express app on `options` with the token; the status and the claims the route saw. */
async function call(
  express: (typeof EXPRESS_VERSIONS)[number][1],
  options: TokenAuthOptions,
  token: string,
  scopes: string[] = [],
) {
  const auth = createTokenAuth(options);
  try {
    const app = express();
    app.get('/me', auth.requireVerifiedUser(scopes), (req, res) => res.json(req.auth));
    const res = await request(app).get('/me').set('Authorization', `Bearer ${token}`);
    return { status: res.status, claims: res.body as Record<string, unknown> };
  } finally {
    auth.close();
  }
}

describe('express-verified-user token, as a child process', () => {
  let hs256: Run;
  let fromEnv: Run;
  let pemKey: Run;
  let publicPem: Run;
  let jwks: Run;
  let signed: Run;
  beforeAll(async () => {
    [hs256, fromEnv, pemKey] = await Promise.all([
      cli([
        'token',
        '--secret',
        SECRET,
        '--iss',
        'https://dev.local',
        '--aud',
        'my-api',
        '--scope',
        'identify,email',
        '--scope',
        'profile',
        '--sub',
        'user-1',
        '--exp',
        '2m',
      ]),
      cli(['token', '--scope', 'read:users'], {
        TOKEN_SECRET: SECRET,
        TOKEN_ISSUER: 'https://a.example, https://b.example',
        TOKEN_AUDIENCE: 'my-api',
        TOKEN_CLAIMS: 'jwt',
      }),
      cli(['key']),
    ]);
    writeFileSync(join(work, 'dev-key.pem'), pemKey.stdout);
    [publicPem, jwks, signed] = await Promise.all([
      cli(['key', '--public', 'dev-key.pem']),
      cli(['key', '--public', 'dev-key.pem', '--jwks']),
      cli([
        'token',
        '--key',
        'dev-key.pem',
        '--iss',
        'https://dev.local',
        '--aud',
        'my-api',
        '--claims',
        'at+jwt',
        '--sub',
        'user-2',
        '--scope',
        'read',
      ]),
    ]);
  }, 90_000);

  describe.each(EXPRESS_VERSIONS)('through %s', (_name, express) => {
    it('prints an HS256 Shape B token for --secret that createTokenAuth accepts, with the scopes, sub and lifetime asked for', async () => {
      expect(hs256).toMatchObject({ code: 0, stderr: '' });
      const token = hs256.stdout.trim();
      const { status, claims } = await call(
        express,
        { key: { secret: SECRET }, issuer: 'https://dev.local', audience: 'my-api' },
        token,
        ['identify', 'profile'],
      );
      expect(status).toBe(200);
      expect(claims).toMatchObject({
        iss: 'https://dev.local',
        aud: 'my-api',
        sub: 'user-1',
        scopes: ['identify', 'email', 'profile'],
        providers: {},
      });
      expect((claims.exp as number) - (claims.iat as number)).toBe(120);
      expect(decode(token, { complete: true })?.header).toEqual({ alg: 'HS256', typ: 'JWT' });
    });

    it('takes the key, issuer, audience and claims mode from TOKEN_* variables, so the token fits the app', async () => {
      expect(fromEnv.code).toBe(0);
      const { status, claims } = await call(
        express,
        { key: { secret: SECRET }, issuer: 'https://a.example', audience: 'my-api', claims: 'jwt' },
        fromEnv.stdout.trim(),
        ['read:users'],
      );
      expect(status).toBe(200);
      expect(claims).toMatchObject({ iss: 'https://a.example', scope: 'read:users' });
      expect(claims.providers).toBeUndefined();
    });

    it('makes an ES256 key pair whose private PEM signs an at+jwt token the public PEM and the JWKS both verify', async () => {
      expect(pemKey.stdout).toMatch(
        /^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/,
      );
      expect(publicPem.stdout).toBe(pemKey.stdout.slice(pemKey.stdout.indexOf('-----BEGIN PUBLIC KEY-----')));
      const token = signed.stdout.trim();
      const header = decode(token, { complete: true })?.header;
      const published = JSON.parse(jwks.stdout) as { keys: Array<Record<string, unknown>> };
      expect(published.keys).toEqual([
        expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: header?.kid }),
      ]);
      expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });

      const base = { issuer: 'https://dev.local', audience: 'my-api', claims: 'at+jwt' as const };
      expect(await call(express, { ...base, key: { publicKey: publicPem.stdout } }, token, ['read'])).toMatchObject({
        status: 200,
        claims: { sub: 'user-2', scope: 'read' },
      });
      const server = await startLoopbackServer((_req, res) => json(res, 200, published));
      try {
        expect(
          (await call(express, { ...base, key: { jwksUri: `${server.origin}/jwks.json` } }, token, ['read'])).status,
        ).toBe(200);
      } finally {
        await server.close();
      }
    });
  });

  it('answers bad input with one message per problem and exit code 2, naming variables, never values', async () => {
    const [unknownFlag, nothing] = await Promise.all([
      cli(['token', '--secrte', SECRET]),
      cli(['token', '--exp', 'soon'], { TOKEN_SECERT: 'misspelt-secret-value-never-printed' }),
    ]);
    expect(unknownFlag).toMatchObject({ code: 2, stdout: '' });
    expect(unknownFlag.stderr).toMatch(/^express-verified-user: Unknown option '--secrte'/);
    expect(unknownFlag.stderr).not.toContain(SECRET);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toBe(
      [
        'express-verified-user: no iss: pass --iss <value> or set TOKEN_ISSUER (what your app accepts)',
        'express-verified-user: no aud: pass --aud <value> or set TOKEN_AUDIENCE (what your app accepts)',
        'express-verified-user: --exp must be a duration with a unit, such as 90s, 10m, 2h or 7d',
        'express-verified-user: no signing key: pass --secret <secret> or --key <file>, or set TOKEN_SECRET (TOKEN_SECERT is set: a misspelling of TOKEN_SECRET?)',
        'Run "express-verified-user --help" for usage.',
        '',
      ].join('\n'),
    );
  }, 60_000);

  it('--help names every flag; help for each command too, with exit code 0', async () => {
    const help = await cli(['token', '--help']);
    expect(help.code).toBe(0);
    for (const flag of [
      '--secret',
      '--key',
      '--iss',
      '--aud',
      '--sub',
      '--scope',
      '--exp',
      '--claims',
      '--claim',
      '--alg',
      '--kid',
      'TOKEN_SECRET',
    ])
      expect(help.stdout).toContain(flag);
    expect((await runCli(['key', '--help'])).stdout).toEqual(expect.stringContaining('--public <file>'));
    expect(await runCli(['--help'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('token    print a signed access token'),
    });
    expect(await runCli([])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Usage: express-verified-user <command>'),
    });
  }, 30_000);
});

describe('express-verified-user key: private key files readable by their owner only', () => {
  it('--out writes a new file with mode 0600 and never overwrites one', async () => {
    const file = join(work, 'out-key.pem');
    const made = await cli(['key', '--out', file]);
    expect(made).toMatchObject({ code: 0, stdout: '', stderr: `wrote ${file} (mode 0600)\n` });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const pem = readFileSync(file, 'utf8');
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----BEGIN PUBLIC KEY-----\n/);
    const again = await cli(['key', '--alg', 'EdDSA', '--out', file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`${file} exists; remove it or choose another --out`);
    expect(readFileSync(file, 'utf8')).toBe(pem);
    const secret = join(work, 'out-secret.txt');
    expect((await cli(['key', '--alg', 'HS256', '--out', secret])).code).toBe(0);
    expect(statSync(secret).mode & 0o777).toBe(0o600);
  });

  it('"key > dev-key.pem": a file stdout is redirected to is made 0600 before the key is written', async () => {
    const file = join(work, 'redirected-key.pem');
    writeFileSync(file, '', { mode: 0o644 });
    const fd = openSync(file, 'w');
    try {
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(
          process.execPath,
          ['-r', join(ROOT, 'scripts', 'ts-register.js'), join(ROOT, 'lib', 'cli.ts'), 'key'],
          { cwd: work, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', fd, 'ignore'] },
        );
        child.on('exit', resolve);
      });
      expect(code).toBe(0);
    } finally {
      closeSync(fd);
    }
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toContain('-----BEGIN PRIVATE KEY-----');
  }, 30_000);

  it('--public and --jwks in either order; a public key --out file holds the public key only', async () => {
    const file = join(work, 'order-key.pem');
    expect((await cli(['key', '--out', file])).code).toBe(0);
    const [after, before] = await Promise.all([
      cli(['key', '--public', file, '--jwks']),
      cli(['key', '--public', '--jwks', file]),
    ]);
    expect(after.code).toBe(0);
    expect(before).toEqual(after);
    expect(JSON.parse(after.stdout)).toMatchObject({ keys: [{ kty: 'EC', alg: 'ES256', use: 'sig' }] });
    const publicFile = join(work, 'order-key.pub.pem');
    expect((await cli(['key', '--public', file, '--out', publicFile])).code).toBe(0);
    expect(readFileSync(publicFile, 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----\n[^-]+-----END PUBLIC KEY-----\n$/);
  });

  it('--help says so', async () => {
    const help = (await runCli(['key', '--help'])).stdout ?? '';
    expect(help).toContain('--out <file>      write to <file>, created with mode 0600');
    expect(help).toContain('npx express-verified-user key --out dev-key.pem');
    expect((await runCli(['token', '--help'])).stdout).toContain('"key --public <file> --jwks"');
  });
});

describe('runCli (in-process): bad input is exit code 2 with a message', () => {
  const base = ['token', '--iss', 'i', '--aud', 'a'];
  it.each([
    ['a short secret', [...base, '--secret', 'short'], '--secret is 5 bytes; an HMAC secret must be at least 32'],
    ['a missing key file', [...base, '--key', join(work, 'none.pem')], 'cannot read the key file'],
    [
      'an algorithm that does not fit the key',
      [...base, '--secret', SECRET, '--alg', 'RS256'],
      '--alg RS256 does not fit the secret from --secret',
    ],
    ['alg none', [...base, '--secret', SECRET, '--alg', 'none'], '--alg must be one of'],
    [
      'an unknown claims mode',
      [...base, '--secret', SECRET, '--claims', 'oidc'],
      '--claims must be strict, jwt or at+jwt',
    ],
    [
      '--secret and --key together',
      [...base, '--secret', SECRET, '--key', 'x.pem'],
      'give --secret or --key, not both',
    ],
    ['a claim without a value', [...base, '--secret', SECRET, '--claim', 'tenant'], '--claim takes name=value'],
    ['an unknown command', ['mint'], 'unknown command "mint"'],
    ['--jwks without --public', ['key', '--jwks'], '--jwks goes with --public <file>'],
  ])('%s', async (_case, args, message) => {
    const outcome = await runCli(args, {});
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(message);
    expect(outcome.stdout).toBeUndefined();
  });

  it('never prints a key or secret given where a file name or one word belongs', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = JSON.stringify(privateKey.export({ format: 'jwk' }));
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    for (const value of [jwk, pem]) {
      const outcome = await runCli([...base, `--key=${value}`], {});
      expect(outcome.code).toBe(2);
      expect(outcome.stderr).toContain('the value given to --key');
      expect(outcome.stderr).not.toContain(value.slice(20, 60));
    }
    // An unquoted secret with a space: Node's own message would quote its second word.
    const stray = await runCli([...base, '--secret', 'first-half-of-a-long-secret', 'second-half-SECRET-word'], {});
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('unexpected argument');
    expect(stray.stderr).not.toContain('second-half-SECRET-word');
  });

  it('refuses a key file that holds only a public key, saying so', async () => {
    const file = join(work, 'public-only.pem');
    writeFileSync(
      file,
      (await runCli(['key'])).stdout?.replace(/-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----\n/, '') ??
        '',
    );
    expect(await runCli([...base, '--key', file], {})).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('holds a public key only; token needs the private key'),
    });
  });

  it('reads a private JWK file, keeping its kid, and --claim values as JSON', async () => {
    const file = join(work, 'private.jwk.json');
    writeFileSync(
      file,
      JSON.stringify({ ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }), kid: 'my-kid' }),
    );
    const token =
      (
        await runCli(
          [...base, '--key', file, '--claim', 'roles=["admin"]', '--claim', 'tenant=acme', '--claims', 'jwt'],
          {},
        )
      ).stdout?.trim() ?? '';
    expect(decode(token, { complete: true })).toMatchObject({
      header: { alg: 'EdDSA', kid: 'my-kid' },
      payload: { roles: ['admin'], tenant: 'acme' },
    });
  });
});
