'use strict';
// Browser test of the demo: Debian's Chromium (never a downloaded browser) driven by playwright-core through the
// real demo server on 127.0.0.1. Prints one line per check and a final "N passed, M failed"; exits 1 on failure.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { startDemo } = require('../server');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
const ARTIFACTS = path.join(__dirname, '..', '..', 'artifacts');
const VERIFY_PATH = '/api/auth/@users/verify';

let passed = 0;
let failed = 0;

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}\n     ${String(err && err.message).split('\n')[0]}`);
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

function equal(actual, expected, what) {
  assert(actual === expected, `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

const payloadOf = (token) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
const text = async (page, selector) => ((await page.locator(selector).textContent()) ?? '').trim();

/** Press "Authorize" and wait for the callback to finish; returns the token the dev issuer put in `?token=`. */
async function authorizeAndWait(page) {
  const [redirect] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth/authorize'),
    page.click('#authorize'),
  ]);
  equal(redirect.status(), 302, 'authorize status');
  const token = new URL(redirect.headers().location, 'http://demo').searchParams.get('token');
  assert(token, 'the authorize redirect carries ?token=');
  await page.waitForSelector('body[data-state="done"]');
  return token;
}

async function main() {
  if (!fs.existsSync(CHROMIUM)) {
    console.log(`FAIL chromium not found at ${CHROMIUM} (install it: apt-get install -y chromium)`);
    console.log('0 passed, 1 failed');
    process.exitCode = 1;
    return;
  }
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const demo = await startDemo({ port: 0, host: '127.0.0.1', log: () => undefined });
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evu-e2e-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1100, height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15000);

    // Uncaught exceptions and CSP violations fail the run; Chromium's "Failed to load resource" lines for the
    // 401s and 403s the demo provokes on purpose do not.
    const pageProblems = [];
    page.on('pageerror', (err) => pageProblems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) pageProblems.push(`console: ${msg.text()}`);
    });
    const verifyRequests = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === VERIFY_PATH) verifyRequests.push(req);
    });

    let token;
    await check('link builder: build a link (all scopes; google and discord linked)', async () => {
      await page.goto(demo.url);
      await page.locator('#providers input[value="roblox"]').uncheck();
      await page.click('#build');
      const link = new URL(await text(page, '#link'));
      equal(link.pathname, '/oauth/authorize', 'link path');
      equal(link.searchParams.get('scope'), 'identify email profile google roblox discord', 'link scope');
      equal(link.searchParams.get('providers'), 'google discord', 'link providers');
      equal(link.searchParams.get('redirect_uri'), '/callback', 'link redirect_uri');
      equal(await page.locator('#authorize').getAttribute('href'), link.href, 'Authorize button target');
      await page.screenshot({ path: path.join(ARTIFACTS, 'demo-link-builder.png'), fullPage: true });
    });

    await check('authorize: redirect to the callback with ?token=, which the page then removes from the address bar', async () => {
      token = await authorizeAndWait(page);
      equal(new URL(page.url()).pathname, '/callback', 'callback path');
      equal(new URL(page.url()).search, '', 'address bar query after reading the token');
    });
    const claims = token ? payloadOf(token) : {};

    await check("callback: calls the verify endpoint as the sample client does (GET, '?', Authorization, Content-Type, Accept)", async () => {
      const first = verifyRequests[0];
      assert(first, 'no request to the verify endpoint');
      equal(first.method(), 'GET', 'method');
      assert(first.url().endsWith(`${VERIFY_PATH}?`), `URL ends with "verify?": ${first.url().replace(/token=[^&]*/, 'token=…')}`);
      const headers = await first.allHeaders();
      equal(headers.authorization, `Bearer ${token}`, 'Authorization');
      equal(headers['content-type'], 'application/json', 'Content-Type');
      equal(headers.accept, 'application/json', 'Accept');
      assert(verifyRequests.some((r) => new URL(r.url()).search === '?view=profile'), 'a ?view=profile request');
    });

    await check("callback: shows Shape B with the token's jti, equal to the signed claims", async () => {
      equal(await text(page, '#jti'), claims.jti, 'jti shown');
      equal(await page.getAttribute('#claims', 'data-status'), '200', 'Shape B status');
      const shown = JSON.parse(await text(page, '#claims .body'));
      equal(JSON.stringify(shown), JSON.stringify(claims), 'Shape B body');
      equal(await text(page, '#linked'), 'google, discord', 'linked accounts');
      assert((await page.getAttribute('#summary', 'class')).includes('ok'), 'summary is a success');
    });

    await check('callback: shows Shape A with the profile name, email and picture', async () => {
      equal(await page.getAttribute('#profile', 'data-status'), '200', 'Shape A status');
      equal(await text(page, '#name'), 'Ada Lovelace', 'profile name');
      equal(await text(page, '#email'), 'ada@example.com', 'profile email');
      const pictureLoaded = await page.$eval('#picture', (img) => img.complete && img.naturalWidth > 0);
      assert(pictureLoaded, 'the profile picture loaded');
      const body = JSON.parse(await text(page, '#profile .body'));
      equal(body.status, 'success', 'Shape A status field');
    });

    await check('callback: the protected routes answer 200 (/api/me) and 403 (/api/admin) for the same token', async () => {
      equal(await text(page, '#route-me .status'), '200', '/api/me status');
      assert((await text(page, '#route-me .answer')).includes(claims.jti), '/api/me answer names the jti');
      equal(await text(page, '#route-admin .status'), '403', '/api/admin status');
      assert((await text(page, '#route-admin .answer')).includes('Insufficient scope: this needs admin; the token lacks admin.'), '/api/admin explains the missing scope');
    });

    await check('screenshot of the callback page saved', async () => {
      const file = path.join(ARTIFACTS, 'demo-callback.png');
      await page.screenshot({ path: file, fullPage: true });
      assert(fs.statSync(file).size > 10000, 'screenshot has content');
    });

    await check('a token without email and profile: Shape B 200, the profile view 403 with a clear message', async () => {
      await page.goto(demo.url);
      await page.locator('#scopes input[value="email"]').uncheck();
      await page.locator('#scopes input[value="profile"]').uncheck();
      await page.click('#build');
      await authorizeAndWait(page);
      equal(await page.getAttribute('#claims', 'data-status'), '200', 'Shape B status');
      equal(await page.getAttribute('#profile', 'data-status'), '403', 'Shape A status');
      const line = await text(page, '#profile .result');
      assert(line.includes('Insufficient scope: this needs identify, profile, email; the token lacks profile, email. Tick them'), `profile message: ${line}`);
      assert(await page.locator('#profile .card').isHidden(), 'no empty profile card');
      await page.screenshot({ path: path.join(ARTIFACTS, 'demo-insufficient-scope.png'), fullPage: true });
    });

    await check('the callback without a token says the token is missing', async () => {
      await page.goto(demo.url);
      await page.click('#try-missing');
      await page.waitForSelector('body[data-state="done"]');
      assert((await text(page, '#summary')).startsWith('Missing token'), 'summary says the token is missing');
      assert((await page.getAttribute('#summary', 'class')).includes('error'), 'summary is an error');
    });

    await check('a forged token is reported invalid (401)', async () => {
      await page.goto(demo.url);
      await page.click('#try-invalid');
      await page.waitForSelector('body[data-state="done"]');
      equal(await page.getAttribute('#claims', 'data-status'), '401', 'Shape B status');
      assert((await text(page, '#summary')).startsWith('Invalid token. Invalid access token: the token was rejected'), 'summary says the token is invalid');
      equal(await text(page, '#route-me .status'), '401', '/api/me status');
    });

    await require('./dashboard').dashboardChecks({ page, demo, check, assert, equal, artifacts: ARTIFACTS });

    await check('no page errors and no CSP violations', async () => {
      assert(pageProblems.length === 0, pageProblems.join('; '));
    });
  } catch (err) {
    failed++;
    console.log(`FAIL the browser run stopped: ${String(err && err.message).split('\n')[0]}`);
  } finally {
    if (context) await context.close().catch(() => undefined);
    await demo.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  if (failed > 0 || passed === 0) process.exitCode = 1;
}

main().catch((err) => {
  console.log(`FAIL ${String(err && err.message).split('\n')[0]}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exitCode = 1;
});
