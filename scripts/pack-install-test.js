#!/usr/bin/env node
// Install the package as a user would: `npm pack`, install the tarball into a fresh app in a temporary folder,
// then use it there with require (CommonJS), import (ESM) and from TypeScript (tsc --noEmit, strict).
'use strict';
const { execFileSync } = require('node:child_process');
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

run('npm', ['run', 'build'], root);
const tarball = run('npm', ['pack', '--silent', '--pack-destination', work], root).trim().split('\n').pop();
const tarPath = path.join(work, tarball);

check('the tarball holds dist/, the README and no sources or tests', () => {
  const listing = run('tar', ['-tzf', tarPath], work);
  for (const needed of ['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/testing.js', 'package/dist/otel.js', 'package/dist/express.d.ts', 'package/README.md']) {
    if (!listing.includes(needed)) throw new Error(`missing ${needed}`);
  }
  for (const banned of ['package/lib/', 'package/__tests__/', 'package/node_modules/']) {
    if (listing.includes(banned)) throw new Error(`should not ship ${banned}`);
  }
});

const rootPkg = require(path.join(root, 'package.json'));
const devVersion = (name) => rootPkg.devDependencies[name];
fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer-app', version: '1.0.0', private: true }, null, 2));
run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarPath, `express@${devVersion('express')}`,
  `typescript@${devVersion('typescript')}`, `@types/express@${devVersion('@types/express')}`, `@types/node@${devVersion('@types/node')}`], app);

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

check('require() from CommonJS', () => {
  fs.writeFileSync(path.join(app, 'cjs.js'), `(async () => {
const express = require('express');
const { createTokenAuth, requireVerifiedUser, errorHandler, TokenAuthError } = require('express-verified-user');
const { createTestIssuer } = require('express-verified-user/testing');
${serverScenario('').replace(/^/, '')}
})().catch((e) => { console.error(e); process.exit(1); });`);
  run('node', ['cjs.js'], app);
});

check('import from an ES module', () => {
  fs.writeFileSync(path.join(app, 'esm.mjs'), serverScenario(`import express from 'express';
import { createTokenAuth, requireVerifiedUser, errorHandler, TokenAuthError } from 'express-verified-user';
import { createTestIssuer } from 'express-verified-user/testing';`));
  run('node', ['esm.mjs'], app);
});

check('TypeScript (strict, node16 resolution) sees the types and req.auth', () => {
  fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'node16', moduleResolution: 'node16', target: 'ES2022', esModuleInterop: true, types: ['node'] },
    files: ['app.ts'],
  }));
  fs.writeFileSync(path.join(app, 'app.ts'), `import express from 'express';
import { createTokenAuth, errorHandler, TokenAuthError, type VerifiedClaims, type ErrorBody, type TokenAuthOptions } from 'express-verified-user';
import { createTestIssuer } from 'express-verified-user/testing';

const options: TokenAuthOptions = { key: { secret: 'a'.repeat(32) }, issuer: 'iss', audience: ['aud'] };
const auth = createTokenAuth(options);
const app = express();
app.get('/me', auth.requireVerifiedUser({ all: ['identify'], any: ['email'] }), (req, res) => {
  const claims: VerifiedClaims | undefined = req.auth;
  const name: string | undefined = req.auth?.providers.google?.name;
  res.json({ jti: claims?.jti, name });
});
app.use(errorHandler());
export async function mint(): Promise<string> {
  const issuer = await createTestIssuer({ alg: 'RS256' });
  return issuer.sign({ scopes: ['identify'] });
}
export function body(err: unknown): ErrorBody | undefined {
  return err instanceof TokenAuthError ? err.toJSON() : undefined;
}
`);
  run(path.join(app, 'node_modules', '.bin', 'tsc'), ['-p', '.'], app);
});

check('TypeScript rejects misuse of req.auth', () => {
  fs.writeFileSync(path.join(app, 'bad.ts'), `import express from 'express';
import { createTokenAuth } from 'express-verified-user';
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
express().get('/', auth.requireVerifiedUser(), (req) => { const n: number = req.auth!.jti; return n; });
`);
  fs.writeFileSync(path.join(app, 'tsconfig.bad.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: 'node16', moduleResolution: 'node16', target: 'ES2022', esModuleInterop: true, types: ['node'] },
    files: ['bad.ts'],
  }));
  let failed = false;
  try {
    run(path.join(app, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.bad.json'], app);
  } catch (err) {
    failed = /not assignable to type 'number'/.test(String(err.stdout));
  }
  if (!failed) throw new Error('tsc accepted a string claim assigned to a number');
});

check('the otel entry: without @opentelemetry/api the core still loads; with it, a verification is counted', () => {
  run('node', ['-e', "require('express-verified-user'); try { require('express-verified-user/otel'); process.exit(1); } catch (e) { if (e.code !== 'MODULE_NOT_FOUND') throw e; }"], app);
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `@opentelemetry/api@${devVersion('@opentelemetry/api')}`], app);
  fs.writeFileSync(path.join(app, 'otel.js'), `const { createTokenAuth } = require('express-verified-user');
const { instrumentTokenAuth } = require('express-verified-user/otel');
let counted = 0;
const meter = { createCounter: () => ({ add: () => { counted++; } }), createHistogram: () => ({ record() {} }) };
const span = { setAttributes() {}, setStatus() {}, end() {} };
instrumentTokenAuth({ meterProvider: { getMeter: () => meter }, tracerProvider: { getTracer: () => ({ startSpan: () => span }) } });
const auth = createTokenAuth({ key: { secret: 'a'.repeat(32) }, issuer: false, audience: false });
auth.verify('a.b.c').catch(() => { auth.close(); if (counted !== 1) { console.error('counted', counted); process.exit(1); } });
`);
  run('node', ['otel.js'], app);
});

fs.rmSync(work, { recursive: true, force: true });
const passed = results.filter(([, ok]) => ok).length;
console.log(`${passed} passed, ${results.length - passed} failed`);
process.exit(passed === results.length ? 0 : 1);
