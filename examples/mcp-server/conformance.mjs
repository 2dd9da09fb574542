// The official MCP conformance suite (@modelcontextprotocol/conformance, a pinned devDependency) against the example
// server in each shape of docs/mcp.md (SDK 1.x transport, SDK 2.x Node transport, SDK 2.x createMcpHandler), with
// requireMcpAuth and without it, scored per requirement set (2025-11-25 and 2026-07-28). The suite is no OAuth
// client, so it reaches the server through a loopback proxy that adds a valid token (token-proxy.mjs). Exits 1
// when the gate costs any check a shape passes without it, or after LIMIT_MS; prints the scores.
// The suite needs Node 22 while this package runs on Node 20: the npm registry's Node package
// (node-<platform>-<arch>, the binary inside its tarball) is installed into a tools folder for this step only.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { startServer } from './server.mjs';
import { startTokenProxy } from './token-proxy.mjs';

const NODE_VERSION = '22.23.3';
const SETS = ['2025-11-25', '2026-07-28'];
const SHAPES = ['sdk1', 'sdk2', 'handler'];
const LIMIT_MS = 15 * 60_000;
const RUN_LIMIT_MS = 180_000;
const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '..', '..');

const deadline = setTimeout(() => {
  console.error(`conformance: not done within ${LIMIT_MS / 60_000} min`);
  process.exit(1);
}, LIMIT_MS);

const run = (file, args, options = {}) =>
  new Promise((resolve) => {
    execFile(file, args, { maxBuffer: 64 * 1024 * 1024, ...options }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr }),
    );
  });

/** Node 22 from the npm registry's package for this platform, installed once into node_modules/.cache. */
async function node22() {
  const name = `node-${process.platform}-${process.arch}`;
  const tools = join(root, 'node_modules', '.cache', `conformance-node-${NODE_VERSION}`);
  const bin = join(tools, 'node_modules', name, 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(tools, { recursive: true });
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const args = ['install', '--prefix', tools, '--no-save', '--no-package-lock', '--no-audit', '--no-fund'];
    const installed = await run(npm, [...args, `${name}@${NODE_VERSION}`], { timeout: 300_000 });
    if (installed.code !== 0) throw new Error(`npm install ${name}@${NODE_VERSION}: ${installed.stderr}`);
  }
  const version = (await run(bin, ['--version'])).stdout.trim();
  if (version !== `v${NODE_VERSION}`) throw new Error(`${bin} is ${version}, not v${NODE_VERSION}`);
  return bin;
}

/** Each check the suite emitted, as `scenario › id › name` → statuses (a check may be emitted more than once). */
function readChecks(dir) {
  const checks = new Map();
  for (const entry of readdirSync(dir)) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    const file = join(dir, entry, 'checks.json');
    // A scenario that ended without a report (the suite's own error) has no checks: the other run is compared.
    if (!existsSync(file)) continue;
    for (const check of JSON.parse(readFileSync(file, 'utf8'))) {
      const key = `${scenario} › ${check.id} › ${check.name}`;
      checks.set(key, [...(checks.get(key) ?? []), check.status]);
    }
  }
  return checks;
}

const count = (checks, status) => [...checks.values()].flat().filter((s) => s === status).length;

/** Run one requirement set against `url`; the suite's own exit code is its verdict on the server, not ours. */
async function score(node, url, set) {
  const out = mkdtempSync(join(tmpdir(), 'conformance-'));
  try {
    const cli = fileURLToPath(import.meta.resolve('@modelcontextprotocol/conformance/dist/index.js'));
    const result = await run(node, [cli, 'server', '--url', url, '--requirements', set, '-o', out], {
      timeout: RUN_LIMIT_MS,
      cwd: out,
    });
    const checks = readChecks(out);
    if (checks.size === 0) throw new Error(`the suite ran no scenario (exit ${result.code}): ${result.stderr}`);
    const summary = /^Total: (.*)$/m.exec(result.stdout)?.[1] ?? '(no total printed)';
    return { checks, summary };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const as = spawn(process.execPath, [join(here, 'authorization-server.mjs')], { stdio: ['pipe', 'pipe', 'ignore'] });
const lines = createInterface({ input: as.stdout })[Symbol.asyncIterator]();
let failed = false;
const table = [];
const totals = [];
try {
  const node = await node22();
  const { issuer, serviceClient } = JSON.parse((await lines.next()).value);
  const tokenFor = async (resource) => {
    const answer = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: {
        Authorization: `Basic ${Buffer.from(`${serviceClient.client_id}:${serviceClient.client_secret}`).toString('base64')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp:tools', resource }),
    });
    return (await answer.json()).access_token;
  };
  console.log(
    `conformance suite ${JSON.parse(readFileSync(join(root, 'node_modules/@modelcontextprotocol/conformance/package.json'), 'utf8')).version} on Node ${NODE_VERSION}\n`,
  );
  for (const shape of SHAPES) {
    const scores = {};
    for (const gate of [false, true]) {
      const server = await startServer({ issuer, shape, gate, conformance: true });
      const proxy = await startTokenProxy(server.origin, await tokenFor(`${server.origin}/mcp`));
      try {
        for (const set of SETS) scores[`${set} ${gate}`] = await score(node, `${proxy.origin}/mcp`, set);
      } finally {
        await proxy.close();
        await server.close();
      }
    }
    for (const set of SETS) {
      const bare = scores[`${set} false`];
      const gated = scores[`${set} true`];
      const lost = [...bare.checks].filter(
        ([key, statuses]) =>
          statuses.filter((s) => s === 'SUCCESS').length >
          (gated.checks.get(key) ?? []).filter((s) => s === 'SUCCESS').length,
      );
      const gained = [...gated.checks].filter(
        ([key, statuses]) =>
          statuses.filter((s) => s === 'SUCCESS').length >
          (bare.checks.get(key) ?? []).filter((s) => s === 'SUCCESS').length,
      );
      totals.push(`${shape.padEnd(8)} ${set}  without the gate: ${bare.summary}  |  with it: ${gated.summary}`);
      table.push([
        shape,
        set,
        `${count(bare.checks, 'SUCCESS')}/${count(bare.checks, 'SUCCESS') + count(bare.checks, 'FAILURE')}`,
        `${count(gated.checks, 'SUCCESS')}/${count(gated.checks, 'SUCCESS') + count(gated.checks, 'FAILURE')}`,
        lost.length,
        gained.length,
      ]);
      for (const [key] of lost) console.log(`LOST   ${shape} ${set}: ${key}`);
      for (const [key] of gained) console.log(`GAINED ${shape} ${set}: ${key}`);
      if (lost.length > 0) failed = true;
    }
  }
  console.log('\nshape    requirements  passed without the gate  passed with the gate  checks lost  gained');
  for (const [shape, set, bare, gated, lost, gained] of table)
    console.log(
      `${shape.padEnd(8)} ${set.padEnd(13)} ${bare.padStart(23)}  ${gated.padStart(20)}  ${String(lost).padStart(11)}  ${String(gained).padStart(6)}`,
    );
  console.log(`\nthe suite's own totals (scored scenarios):\n${totals.join('\n')}`);
  console.log(
    `\nconformance: ${failed ? 'failed: the gate costs checks (LOST above)' : 'ok: the gate costs no check in any shape'}`,
  );
} catch (err) {
  failed = true;
  console.error('conformance: failed:', err);
} finally {
  as.stdin.end();
  clearTimeout(deadline);
}
process.exitCode = failed ? 1 : 0;
