#!/usr/bin/env node
// Install the package as a user would: `npm pack` in a clean copy of the repository (no dist/: the `prepack`
// script must build it, and leaves `prepare` out of the shipped package.json: scripts/pack-manifest.js), install the tarball into a fresh app in a temporary folder, then use it there with
// require (CommonJS), import (ESM) and from TypeScript (tsc --noEmit, strict, skipLibCheck off) under every
// moduleResolution (node10, node16, bundler), with and without esModuleInterop, and against @types/node 20, 22,
// 24 and the newest.
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'evu-pack-'));
const app = path.join(work, 'app');
fs.mkdirSync(app);
const results = [];

function run(cmd, args, cwd) {
  return execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
}

function check(name, fn) {
  try {
    fn();
    results.push([name, true]);
    console.log(`ok - ${name}`);
  } catch (err) {
    results.push([name, false]);
    console.log(`not ok - ${name}\n${err.stdout ?? ''}${err.stderr ?? ''}${err.stack ?? err}`);
  }
}

// A clean clone of the working tree: the files git tracks (or would), without dist/ or any build output. Its
// node_modules is the repository's (a link), as after `npm ci`; `npm pack` there must build dist/ by itself.
const clone = path.join(work, 'clone');
const tracked = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root)
  .split('\0')
  .filter(Boolean);
for (const file of tracked) {
  if (!fs.existsSync(path.join(root, file))) continue; // deleted in the working tree, not yet in the index
  fs.mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
  fs.copyFileSync(path.join(root, file), path.join(clone, file));
}
if (fs.existsSync(path.join(clone, 'dist'))) throw new Error('the clean copy holds dist/: is it tracked by git?');
fs.symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
const tarball = run('npm', ['pack', '--silent', '--pack-destination', work], clone).trim().split('\n').pop();
const tarPath = path.join(work, tarball);

const listing = run('tar', ['-tzf', tarPath], work).split('\n').filter(Boolean);
const shipped = new Set(listing.map((entry) => entry.replace(/^package\//, '')));
// What ships, unpacked: the checks below read the tarball's files, not the repository's.
run('tar', ['-xzf', tarPath, '-C', work], work);
const unpacked = path.join(work, 'package');

check('package.json exports are the six entries and nothing more (the command is a bin, not an export)', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  if (Object.keys(pkg.exports).join(' ') !== '. ./testing ./redis ./otel ./mcp ./edge ./package.json')
    throw new Error(`exports: ${Object.keys(pkg.exports).join(' ')}`);
  if (pkg.bin?.['express-verified-user'] !== './dist/cli.js' || !shipped.has('dist/cli.js'))
    throw new Error('bin express-verified-user → ./dist/cli.js missing');
});

check("npm pack in a clean clone builds dist/ first (the prepack script), so the tarball's main exists", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  if (!/\bnpm run build\b/.test(pkg.scripts?.prepack ?? ''))
    throw new Error('package.json has no prepack script running the build');
  const main = pkg.main.replace(/^\.\//, '');
  if (!shipped.has(main)) throw new Error(`the tarball lacks ${main}, which "main" names (${shipped.size} files)`);
});

check('the tarball holds dist/, the README, LICENSE, CHANGELOG, SECURITY and docs/, and no sources or tests', () => {
  for (const needed of [
    'dist/index.js',
    'dist/index.d.ts',
    'dist/testing.js',
    'dist/otel.js',
    'dist/redis.js',
    'dist/http/express.d.ts',
    'dist/mcp.js',
    'dist/mcp.mjs',
    'dist/edge.js',
    'dist/edge.d.ts',
    'types/mcp.d.ts',
    'types/mcp-request.d.ts',
    'README.md',
    'LICENSE',
    'CHANGELOG.md',
    'SECURITY.md',
  ]) {
    if (!shipped.has(needed)) throw new Error(`missing ${needed}`);
  }
  if (![...shipped].some((file) => file.startsWith('docs/'))) throw new Error('missing docs/');
  for (const banned of ['lib/', '__tests__/', 'node_modules/', 'bench/', 'demo-app/']) {
    if ([...shipped].some((file) => file.startsWith(banned))) throw new Error(`should not ship ${banned}`);
  }
});

check('every relative link in the shipped README, SECURITY and docs points at a file the tarball holds', () => {
  const broken = [];
  for (const file of [...shipped].filter((f) => f.endsWith('.md'))) {
    const text = fs.readFileSync(path.join(unpacked, file), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
      if (!shipped.has(resolved)) broken.push(`${file} → ${target}`);
    }
  }
  if (broken.length > 0) throw new Error(`links to files the tarball lacks: ${broken.join(', ')}`);
});

check('no "SPEC §" reference in what ships (users have no SPEC)', () => {
  const cited = [...shipped].filter(
    (f) => /\.(md|d\.ts)$/.test(f) && /SPEC\s*§/.test(fs.readFileSync(path.join(unpacked, f), 'utf8')),
  );
  if (cited.length > 0) throw new Error(`cites SPEC: ${cited.join(', ')}`);
});

check('typesVersions maps every subpath export, so node10 (commonjs) TypeScript resolves each entry', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const mapped = pkg.typesVersions?.['*'] ?? {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (subpath === '.' || subpath === './package.json') continue;
    const name = subpath.slice(2);
    if (JSON.stringify(mapped[name]) !== JSON.stringify([target.types])) {
      throw new Error(
        `typesVersions["*"]["${name}"] should be ["${target.types}"], is ${JSON.stringify(mapped[name])}`,
      );
    }
  }
});

const rootPkg = require(path.join(root, 'package.json'));
const devVersion = (name) => rootPkg.devDependencies[name];
fs.writeFileSync(
  path.join(app, 'package.json'),
  JSON.stringify({ name: 'consumer-app', version: '1.0.0', private: true }, null, 2),
);
// Its output is kept: a consumer's npm must print no install-scripts warning for this package (checked below).
const installed = spawnSync(
  'npm',
  [
    'install',
    '--no-audit',
    '--no-fund',
    '--prefer-offline',
    tarPath,
    `express@${devVersion('express')}`,
    `typescript@${devVersion('typescript')}`,
    `@types/express@${devVersion('@types/express')}`,
    `@types/node@${devVersion('@types/node')}`,
  ],
  { cwd: app, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
);
if (installed.status !== 0)
  throw new Error(`npm install of the tarball failed:\n${installed.stdout}${installed.stderr}`);

check('installing the tarball runs no script of this package: no install script ships, and npm warns of none', () => {
  const shippedPkg = JSON.parse(fs.readFileSync(path.join(unpacked, 'package.json'), 'utf8'));
  const installScripts = ['preinstall', 'install', 'postinstall', 'prepare'].filter((s) => shippedPkg.scripts?.[s]);
  if (installScripts.length > 0) throw new Error(`the shipped package.json has ${installScripts.join(', ')}`);
  const warned = `${installed.stdout}${installed.stderr}`
    .split('\n')
    .filter((line) => /install-scripts/.test(line) && line.includes(rootPkg.name));
  if (warned.length > 0) throw new Error(`npm warned:\n${warned.join('\n')}`);
  // The repository keeps `prepare` (npm ci builds), and npm pack gave the clean clone its package.json back.
  if (!/\bnpm run build\b/.test(rootPkg.scripts?.prepare ?? '')) throw new Error('the repository lost its prepare');
  const before = fs.readFileSync(path.join(root, 'package.json'), 'utf8');
  if (fs.readFileSync(path.join(clone, 'package.json'), 'utf8') !== before)
    throw new Error("npm pack left the clone's package.json changed");
});

const serverScenario = (importLines) => `${importLines}
const issuer = await createTestIssuer({ alg: 'ES256' });
const auth = createTokenAuth(issuer.options);
const app = express();
app.get('/me', auth.requireVerifiedUser(['email']), (req, res) => res.json({ jti: req.auth.jti }));
const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const url = 'http://127.0.0.1:' + server.address().port + '/me';
const token = issuer.sign({ jti: 'pack-test' });
const ok = await fetch(url, { headers: { Authorization: 'Bearer ' + token } });
const body = await ok.json();
const missing = await fetch(url);
const missingBody = await missing.json();
server.close();
await issuer.close();
auth.close();
if (ok.status !== 200 || body.jti !== 'pack-test') throw new Error('valid token: ' + ok.status + ' ' + JSON.stringify(body));
if (missing.status !== 401 || missingBody.message !== 'Missing access token') throw new Error('missing token: ' + missing.status);
if (typeof TokenAuthError !== 'function' || typeof errorHandler !== 'function' || typeof requireVerifiedUser !== 'function') throw new Error('exports missing');
console.log('served 200 and 401');
`;

// The edge entry as a user loads it: cloudflareAccess's options against a loopback certs document, a token in
// Cf-Access-Jwt-Assertion → 200, the same token as Authorization → 401.
const edgeScenario = (importLines) => `${importLines}
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const kid = 'a'.repeat(64);
const certs = http.createServer((req, res) => {
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }], public_cert: { kid, cert: '' }, public_certs: [] }));
});
certs.listen(0, '127.0.0.1');
await new Promise((r) => certs.once('listening', r));
const teamDomain = 'http://127.0.0.1:' + certs.address().port;
const aud = 'b'.repeat(64);
const auth = createTokenAuth({ ...cloudflareAccess({ teamDomain, audience: aud }), cache: false });
const app = express();
app.get('/me', auth.requireVerifiedUser(), (req, res) => res.json({ email: req.auth.email }));
const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const url = 'http://127.0.0.1:' + server.address().port + '/me';
const now = Math.floor(Date.now() / 1000);
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const input = b64({ alg: 'RS256', kid, typ: 'JWT' }) + '.' + b64({ aud: [aud], iss: teamDomain, email: 'user@example.com', iat: now, exp: now + 60 });
const token = input + '.' + sign('sha256', Buffer.from(input), privateKey).toString('base64url');
const ok = await fetch(url, { headers: { 'Cf-Access-Jwt-Assertion': token } });
const body = await ok.json();
const bearer = await fetch(url, { headers: { Authorization: 'Bearer ' + token } });
server.close();
certs.close();
auth.close();
if (ok.status !== 200 || body.email !== 'user@example.com') throw new Error('edge: ' + ok.status + ' ' + JSON.stringify(body));
if (bearer.status !== 401) throw new Error('edge: Authorization answered ' + bearer.status);
if (typeof googleIap !== 'function' || typeof awsAlb !== 'function') throw new Error('edge exports missing');
console.log('edge: served 200 and 401');
`;

check('require() of the edge entry from CommonJS', () => {
  fs.writeFileSync(
    path.join(app, 'edge-cjs.js'),
    `(async () => {
const express = require('express');
const http = require('node:http');
const { generateKeyPairSync, sign } = require('node:crypto');
const { createTokenAuth } = require('express-verified-user');
const { cloudflareAccess, googleIap, awsAlb } = require('express-verified-user/edge');
${edgeScenario('')}
})().catch((e) => { console.error(e); process.exit(1); });`,
  );
  run('node', ['edge-cjs.js'], app);
});

check('import of the edge entry from an ES module', () => {
  fs.writeFileSync(
    path.join(app, 'edge-esm.mjs'),
    edgeScenario(`import express from 'express';
import http from 'node:http';
import { generateKeyPairSync, sign } from 'node:crypto';
import { createTokenAuth } from 'express-verified-user';
import { cloudflareAccess, googleIap, awsAlb } from 'express-verified-user/edge';`),
  );
  run('node', ['edge-esm.mjs'], app);
});

check('require() from CommonJS', () => {
  fs.writeFileSync(
    path.join(app, 'cjs.js'),
    `(async () => {
const express = require('express');
const { createTokenAuth, requireVerifiedUser, errorHandler, TokenAuthError } = require('express-verified-user');
const { createTestIssuer } = require('express-verified-user/testing');
${serverScenario('').replace(/^/, '')}
})().catch((e) => { console.error(e); process.exit(1); });`,
  );
  run('node', ['cjs.js'], app);
});

check('import from an ES module', () => {
  fs.writeFileSync(
    path.join(app, 'esm.mjs'),
    serverScenario(`import express from 'express';
import { createTokenAuth, requireVerifiedUser, errorHandler, TokenAuthError } from 'express-verified-user';
import { createTestIssuer } from 'express-verified-user/testing';`),
  );
  run('node', ['esm.mjs'], app);
});

// One consumer, written so that it compiles under every module setting: named imports from express (a default
// import needs esModuleInterop), the package's root and its ./testing entry. skipLibCheck is off, so the package's
// own .d.ts files are checked too (they need @types/express, installed above as the README says).
const TYPES_CONSUMER = `import { Router } from 'express';
import { generateKeyPairSync } from 'node:crypto';
import {
  createTokenAuth, errorHandler, requireVerifiedUser, verifyRouter, TokenAuthError,
  type ErrorBody, type JwtClaims, type RegisteredClaims, type TokenAuth, type TokenAuthOptions, type VerifiedClaims,
  type RouteRequirements,
} from 'express-verified-user';
import { createTestIssuer } from 'express-verified-user/testing';
import { createRedisStore, type RedisStore } from 'express-verified-user/redis';
import { awsAlb, cloudflareAccess, googleIap, type EdgeOptions } from 'express-verified-user/edge';

export const options: TokenAuthOptions = { key: { secret: 'a'.repeat(32) }, issuer: 'iss', audience: ['aud'] };
// A public key as node:crypto exports a JWK, whatever @types/node calls that type.
export const jwkOptions: TokenAuthOptions = {
  key: { publicKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) }, issuer: 'iss', audience: 'aud',
};
// Strict mode (the default with key): Shape B guaranteed, through auth.claims(req) and verify().
const auth: TokenAuth<VerifiedClaims> = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: 'iss', audience: ['aud'] });
export const router = Router();
router.get('/me', auth.requireVerifiedUser({ all: ['identify'], any: ['email'] }), (req, res) => {
  const claims: VerifiedClaims = auth.claims(req);
  const name: string | undefined = claims.providers.google?.name;
  const exp: number | undefined = req.auth?.exp;
  res.json({ jti: claims.jti, name, exp });
});
// 'jwt' mode (the default with issuerBaseURL): the registered claims typed as RFC 7519 types them, never unknown.
const discovered = createTokenAuth({ issuerBaseURL: 'https://issuer.example', audience: 'api' });
router.get('/whoami', discovered.requireVerifiedUser(), (req, res) => {
  const claims: JwtClaims = discovered.claims(req);
  const sub: string | undefined = claims.sub;
  const aud: string | string[] | undefined = claims.aud;
  const named: Array<string | undefined> = [claims.iss, claims.jti];
  const times: Array<number | undefined> = [claims.exp, claims.iat, claims.nbf];
  // @ts-expect-error RFC 7519 makes sub optional: 'jwt' mode types it string | undefined, not any.
  const always: string = claims.sub;
  // @ts-expect-error req.auth is typed by every mode, and Shape B's sub may be null.
  const fromAuth: string | undefined = req.auth?.sub;
  res.json({ sub, aud, named, times, always, fromAuth });
});
// Route requirements (roles, claims, RFC 9396 details, allow typed by the mode), beside step-up.
const requirements: RouteRequirements<VerifiedClaims> = {
  roles: { any: ['admin', 'ops'] }, claims: { tid: 't' }, authorizationDetails: { type: 'payment_initiation', actions: ['initiate'] },
  allow: (claims, req) => claims.providers.discord !== undefined && req.params.id !== '',
};
router.delete('/orders/:id', auth.requireVerifiedUser(['orders:write'], { ...requirements, acr: ['urn:mfa'] }), (_req, res) => { res.end(); });
export const roled = createTokenAuth({ ...options, roleClaim: ['realm_access', 'roles'], scopeImplies: { admin: ['read'] } });
export const makeStore = (client: Parameters<typeof createRedisStore>[0]): RedisStore => createRedisStore(client);
router.use('/api', auth.verifyRouter({ defaultView: 'profile' }));
router.use(errorHandler());
export const fromEnvironment = [requireVerifiedUser, verifyRouter];
export async function mint(): Promise<string> {
  const issuer = await createTestIssuer({ alg: 'RS256' });
  return issuer.sign({ scopes: ['identify'] });
}
export function body(err: unknown): ErrorBody | undefined {
  return err instanceof TokenAuthError ? err.toJSON() : undefined;
}
// The edge presets: options that spread into createTokenAuth's, claims typed by 'jwt'.
const behindCloudflare: EdgeOptions = cloudflareAccess({ teamDomain: 'https://acme.cloudflareaccess.com', audience: 'a'.repeat(64) });
export const edge = [
  createTokenAuth({ ...behindCloudflare, onError: (err) => console.warn(err.code) }),
  createTokenAuth(googleIap({ audience: '/projects/1/global/backendServices/2' })),
  createTokenAuth(awsAlb({ signer: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/a/0123456789abcdef', clientId: null, issuer: 'https://idp.example.com' })),
];
export const expOf = (token: string): Promise<number> => edge[0].verify(token).then((claims) => claims.exp);
export const subOf = (claims: RegisteredClaims): string | null | undefined => claims.sub;
// Token exchange with the test issuer alone: its options carry tokenExchange.
export async function exchanged(): Promise<string> {
  const issuer = await createTestIssuer({ exchange: { authMethod: 'private_key_jwt' } });
  const onward = await createTokenAuth(issuer.options).exchange(issuer.sign(), { audience: 'ci', scope: ['read'] });
  return onward.accessToken;
}
`;
check("@types/express is an optional peer dependency (the package's .d.ts files import Express's types)", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  if (!pkg.peerDependencies?.['@types/express'] || pkg.peerDependenciesMeta?.['@types/express']?.optional !== true) {
    throw new Error('peerDependencies and peerDependenciesMeta should name @types/express as optional');
  }
  const declarations = [...shipped].filter((f) => f.endsWith('.d.ts'));
  if (!declarations.some((f) => /from 'express'/.test(fs.readFileSync(path.join(unpacked, f), 'utf8')))) {
    throw new Error('no .d.ts imports express: the peer dependency may be dropped');
  }
});

const MODULE_SETTINGS = [
  ['node10', { module: 'commonjs', moduleResolution: 'node10' }],
  ['node16', { module: 'node16', moduleResolution: 'node16' }],
  ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }],
  ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
];
fs.writeFileSync(path.join(app, 'types-consumer.ts'), TYPES_CONSUMER);
for (const [resolution, moduleOptions] of MODULE_SETTINGS) {
  for (const esModuleInterop of [true, false]) {
    check(
      `TypeScript (strict, moduleResolution ${resolution}, esModuleInterop ${esModuleInterop}) resolves the root, ./testing, ./redis and ./edge with no type error`,
      () => {
        const config = `tsconfig.${resolution}-${esModuleInterop}.json`;
        fs.writeFileSync(
          path.join(app, config),
          JSON.stringify({
            compilerOptions: {
              strict: true,
              noEmit: true,
              target: 'ES2022',
              types: ['node'],
              esModuleInterop,
              skipLibCheck: false,
              ...moduleOptions,
            },
            files: ['types-consumer.ts'],
          }),
        );
        run(path.join(app, 'node_modules', '.bin', 'tsc'), ['-p', config], app);
      },
    );
  }
}

check('TypeScript (strict, node16 resolution) sees the types and req.auth', () => {
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'node16',
        moduleResolution: 'node16',
        target: 'ES2022',
        esModuleInterop: true,
        types: ['node'],
      },
      files: ['app.ts'],
    }),
  );
  fs.writeFileSync(
    path.join(app, 'app.ts'),
    `import express from 'express';
import { createTokenAuth, errorHandler, TokenAuthError, type VerifiedClaims, type ErrorBody, type TokenAuthOptions } from 'express-verified-user';
import { createTestIssuer } from 'express-verified-user/testing';

export const options: TokenAuthOptions = { key: { secret: 'a'.repeat(32) }, issuer: 'iss', audience: ['aud'] };
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: 'iss', audience: ['aud'] });
const app = express();
app.get('/me', auth.requireVerifiedUser({ all: ['identify'], any: ['email'] }), (req, res) => {
  const claims: VerifiedClaims = auth.claims(req);
  const name: string | undefined = claims.providers.google?.name;
  res.json({ jti: claims.jti, name, exp: req.auth?.exp });
});
app.use(errorHandler());
export async function mint(): Promise<string> {
  const issuer = await createTestIssuer({ alg: 'RS256' });
  return issuer.sign({ scopes: ['identify'] });
}
export function body(err: unknown): ErrorBody | undefined {
  return err instanceof TokenAuthError ? err.toJSON() : undefined;
}
`,
  );
  run(path.join(app, 'node_modules', '.bin', 'tsc'), ['-p', '.'], app);
});

// The package's declarations against each maintained @types/node line and the newest (a user's `npm i -D
// @types/express` brings the newest): strict, skipLibCheck off, one module setting each to keep the run short.
const NODE_TYPES = [...new Set([devVersion('@types/node'), '22', '24', 'latest'])];
for (const version of NODE_TYPES) {
  check(`TypeScript (strict, skipLibCheck off) compiles the consumer with @types/node@${version}`, () => {
    // The newest is asked of the registry each run (no --prefer-offline), so a new major is seen the day it lands.
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        ...(version === 'latest' ? [] : ['--prefer-offline']),
        `@types/node@${version}`,
      ],
      app,
    );
    const installed = JSON.parse(
      fs.readFileSync(path.join(app, 'node_modules', '@types', 'node', 'package.json'), 'utf8'),
    ).version;
    console.log(`# @types/node ${installed}`);
    fs.writeFileSync(
      path.join(app, 'tsconfig.node-types.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          types: ['node'],
          esModuleInterop: true,
          skipLibCheck: false,
          module: 'node16',
          moduleResolution: 'node16',
        },
        files: ['types-consumer.ts'],
      }),
    );
    run(path.join(app, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.node-types.json'], app);
  });
}

check('TypeScript rejects misuse of req.auth', () => {
  fs.writeFileSync(
    path.join(app, 'bad.ts'),
    `import express from 'express';
import { createTokenAuth } from 'express-verified-user';
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
express().get('/', auth.requireVerifiedUser(), (req) => { const n: number = req.auth!.jti; return n; });
`,
  );
  fs.writeFileSync(
    path.join(app, 'tsconfig.bad.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'node16',
        moduleResolution: 'node16',
        target: 'ES2022',
        esModuleInterop: true,
        types: ['node'],
      },
      files: ['bad.ts'],
    }),
  );
  let failed = false;
  try {
    run(path.join(app, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.bad.json'], app);
  } catch (err) {
    failed = /not assignable to type 'number'/.test(String(err.stdout));
  }
  if (!failed) throw new Error('tsc accepted a string claim assigned to a number');
});

check(
  'the express-verified-user command (bin) prints a token the installed package verifies, and exits 2 on bad input',
  () => {
    const bin = path.join(app, 'node_modules', '.bin', 'express-verified-user');
    const env = {
      PATH: process.env.PATH,
      TOKEN_SECRET: 's'.repeat(40),
      TOKEN_ISSUER: 'https://dev.local',
      TOKEN_AUDIENCE: 'my-api',
    };
    const token = execFileSync(bin, ['token', '--scope', 'identify', '--sub', 'user-1'], {
      cwd: app,
      env,
      encoding: 'utf8',
    }).trim();
    fs.writeFileSync(
      path.join(app, 'cli-token.js'),
      `const { createTokenAuth } = require('express-verified-user');
const auth = createTokenAuth({ key: { secret: process.env.TOKEN_SECRET }, issuer: process.env.TOKEN_ISSUER, audience: process.env.TOKEN_AUDIENCE });
auth.verify(process.argv[2]).then((claims) => { auth.close(); if (claims.sub !== 'user-1') process.exit(1); }, (e) => { console.error(e.code, e.reason); process.exit(1); });`,
    );
    execFileSync('node', ['cli-token.js', token], { cwd: app, env, stdio: 'pipe' });
    let code = 0;
    try {
      execFileSync(bin, ['token', '--nonsense'], { cwd: app, env, stdio: 'pipe' });
    } catch (err) {
      code = err.status;
    }
    if (code !== 2) throw new Error(`bad input exited ${code}, not 2`);
  },
);

check('express-verified-user/redis loads with no Redis client installed (optional peers)', () => {
  fs.writeFileSync(
    path.join(app, 'redis-entry.js'),
    `const { createRedisStore } = require('express-verified-user/redis');
if (typeof createRedisStore !== 'function') throw new Error('createRedisStore missing');
try { createRedisStore({}); throw new Error('accepted a non-client'); } catch (e) { if (!(e instanceof TypeError)) throw e; }
console.log('redis entry ok');`,
  );
  run('node', ['redis-entry.js'], app);
});

check('the otel entry: without @opentelemetry/api the core still loads; with it, a verification is counted', () => {
  run(
    'node',
    [
      '-e',
      "require('express-verified-user'); try { require('express-verified-user/otel'); process.exit(1); } catch (e) { if (e.code !== 'MODULE_NOT_FOUND') throw e; }",
    ],
    app,
  );
  run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      `@opentelemetry/api@${devVersion('@opentelemetry/api')}`,
    ],
    app,
  );
  fs.writeFileSync(
    path.join(app, 'otel.js'),
    `const { createTokenAuth } = require('express-verified-user');
const { instrumentTokenAuth } = require('express-verified-user/otel');
let counted = 0;
const meter = { createCounter: () => ({ add: () => { counted++; } }), createHistogram: () => ({ record() {} }) };
const span = { setAttributes() {}, setStatus() {}, end() {} };
instrumentTokenAuth({ meterProvider: { getMeter: () => meter }, tracerProvider: { getTracer: () => ({ startSpan: () => span }) } });
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
auth.verify('a.b.c').catch(() => { auth.close(); if (counted !== 1) { console.error('counted', counted); process.exit(1); } });
`,
  );
  run('node', ['otel.js'], app);
});

check(
  'the mcp entry: without the MCP SDK requireMcpAuth loads and mcpTokenVerifier says what to install; with the 1.x SDK a refused token is its InvalidTokenError, and 401 from an ES module app',
  () => {
    fs.writeFileSync(
      path.join(app, 'mcp-bare.js'),
      `const { createTokenAuth } = require('express-verified-user');
const { requireMcpAuth, mcpTokenVerifier } = require('express-verified-user/mcp');
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
if (typeof requireMcpAuth(auth, { scopes: ['mcp:tools'], tools: { admin: ['mcp:admin'] } }) !== 'function') throw new Error('no middleware');
try { mcpTokenVerifier(auth); throw new Error('no error without the SDK'); } catch (e) { if (!(e instanceof TypeError) || !/@modelcontextprotocol/.test(e.message)) throw e; }
auth.close();`,
    );
    run('node', ['mcp-bare.js'], app);
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        `@modelcontextprotocol/sdk@${devVersion('@modelcontextprotocol/sdk')}`,
        `zod@${devVersion('zod')}`,
      ],
      app,
    );
    fs.writeFileSync(
      path.join(app, 'mcp-sdk.js'),
      `const { createTokenAuth } = require('express-verified-user');
const { mcpTokenVerifier } = require('express-verified-user/mcp');
const { InvalidTokenError } = require('@modelcontextprotocol/sdk/server/auth/errors.js');
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
mcpTokenVerifier(auth).verifyAccessToken('a.b.c').then(() => process.exit(1), (e) => { auth.close(); if (!(e instanceof InvalidTokenError)) { console.error(e); process.exit(1); } });`,
    );
    run('node', ['mcp-sdk.js'], app);
    // An ES module app gets the SDK's ESM classes: the SDK's requireBearerAuth must still answer 401, not 500.
    fs.writeFileSync(
      path.join(app, 'mcp-esm.mjs'),
      `import express from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { createTokenAuth } from 'express-verified-user';
import { mcpTokenVerifier } from 'express-verified-user/mcp';
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
const app = express();
app.post('/mcp', requireBearerAuth({ verifier: mcpTokenVerifier(auth) }), (req, res) => res.end('ok'));
const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const answer = await fetch('http://127.0.0.1:' + server.address().port + '/mcp', { method: 'POST', headers: { Authorization: 'Bearer a.b.c' } });
server.close();
auth.close();
if (answer.status !== 401) throw new Error('ESM: refused token answered ' + answer.status);`,
    );
    run('node', ['mcp-esm.mjs'], app);
  },
);

check(
  'TypeScript (strict, skipLibCheck off): an MCP route passes req to the SDK transport with no cast; claims through auth.claims(req)',
  () => {
    fs.writeFileSync(
      path.join(app, 'mcp-app.ts'),
      `import express from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createTokenAuth } from 'express-verified-user';
import { requireMcpAuth, type McpAuthInfo } from 'express-verified-user/mcp';
const auth = createTokenAuth({ issuerBaseURL: 'https://as.example.com', resource: 'https://mcp.example.com/mcp', claims: 'at+jwt' });
const app = express();
app.use(auth.protectedResourceMetadata());
app.post('/mcp', express.json(), requireMcpAuth(auth, { scopes: ['mcp:tools'] }), async (req, res) => {
  const info: McpAuthInfo | undefined = req.auth;
  const sub: string = auth.claims(req).sub;
  res.setHeader('X-Who', sub + String(info?.clientId));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await transport.handleRequest(req, res, req.body);
});
`,
    );
    fs.writeFileSync(
      path.join(app, 'tsconfig.mcp.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'commonjs',
          moduleResolution: 'node10',
          target: 'ES2022',
          esModuleInterop: true,
          skipLibCheck: false,
          types: ['node'],
        },
        files: ['mcp-app.ts'],
      }),
    );
    run(path.join(app, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.mcp.json'], app);
  },
);

fs.rmSync(work, { recursive: true, force: true });
const passed = results.filter(([, ok]) => ok).length;
console.log(`${passed} passed, ${results.length - passed} failed`);
process.exit(passed === results.length ? 0 : 1);
