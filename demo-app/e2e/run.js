'use strict';
// Browser test of the demo: Debian's Chromium (never a downloaded browser) driven by playwright-core through the
// real demo server on 127.0.0.1. Prints one line per check and a final "N passed, M failed"; exits 1 on failure.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createHash } = require('node:crypto');
const { URLSearchParams } = require('node:url');
const { chromium } = require('playwright-core');
const { startDemo } = require('../server');

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
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
const WIDTHS = [1280, 390];

/** The page fits its viewport: no horizontal scroll (the routes table once overflowed a 390 px screen). */
async function assertNoSideScroll(page, what) {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  assert(scrollWidth <= clientWidth, `${what}: scrollWidth ${scrollWidth} > clientWidth ${clientWidth}`);
}

/** Open the link builder and wait until its link (with a fresh state and PKCE pair) is built. */
async function openBuilder(page, demo) {
  await page.goto(demo.url);
  await page.waitForSelector('body[data-link="ready"]');
}

/** Wait until the built link carries these `providers` (each change rebuilds it, asynchronously). */
async function waitForLink(page, providers) {
  await page.waitForFunction(
    (p) => new URL(document.getElementById('link').href).searchParams.get('providers') === p,
    providers,
  );
  return new URL(await text(page, '#link'));
}

/**
 * Press "Authorize" and wait for the callback to finish. Returns the redirect's code and state and the token the
 * page obtained from POST /oauth/token (read from the exchange's answer, never from an address).
 */
async function authorizeAndWait(page, click = () => page.click('#authorize')) {
  // Waiting for the exchange starts before the click: the callback can post it before the redirect is handled here.
  const exchanged = page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth/token');
  exchanged.catch(() => undefined); // awaited below; a failed check before then must not leave it unhandled
  const [redirect] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth/authorize'),
    click(),
  ]);
  equal(redirect.status(), 302, 'authorize status');
  const location = new URL(redirect.headers().location, 'http://demo');
  const exchange = await exchanged;
  const answer = await exchange.json();
  await page.waitForSelector('body[data-state="done"]');
  return { location, exchange, token: answer.access_token };
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
      viewport: { width: WIDTHS[0], height: 900 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(15000);

    // Uncaught exceptions and CSP violations fail the run; Chromium's "Failed to load resource" lines for the
    // 401s and 403s the demo provokes on purpose do not.
    const pageProblems = [];
    page.on('pageerror', (err) => pageProblems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text()))
        pageProblems.push(`console: ${msg.text()}`);
    });
    const verifyRequests = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === VERIFY_PATH) verifyRequests.push(req);
    });

    const addresses = []; // every address the tab showed: none may carry a token
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) addresses.push(frame.url());
    });
    const tokenRequests = [];
    page.on('request', (req) => {
      if (new URL(req.url()).pathname === '/oauth/token') tokenRequests.push(req);
    });

    let token;
    let flow;
    await check(
      'link builder: a code-flow link with a fresh state and an S256 PKCE challenge (all scopes; google and discord)',
      async () => {
        await openBuilder(page, demo);
        await page.locator('#providers input[value="roblox"]').uncheck();
        await page.click('#build');
        const link = await waitForLink(page, 'google discord');
        equal(link.pathname, '/oauth/authorize', 'link path');
        equal(link.searchParams.get('response_type'), 'code', 'response_type');
        equal(link.searchParams.get('code_challenge_method'), 'S256', 'code_challenge_method');
        assert(/^[\w-]{43}$/.test(link.searchParams.get('code_challenge')), 'code_challenge is a base64url SHA-256');
        assert(/^[\w-]{43}$/.test(link.searchParams.get('state')), 'state is 32 random bytes, base64url');
        equal(link.searchParams.get('scope'), 'identify email profile google roblox discord', 'link scope');
        equal(link.searchParams.get('redirect_uri'), '/callback', 'link redirect_uri');
        equal(await page.locator('#authorize').getAttribute('href'), link.href, 'Authorize button target');
        await page.screenshot({ path: path.join(ARTIFACTS, `demo-link-builder-${WIDTHS[0]}.png`), fullPage: true });
      },
    );

    await check(
      'authorize: a redirect with ?code= and the same state, then POST /oauth/token with the PKCE verifier',
      async () => {
        const link = new URL(await text(page, '#link'));
        flow = await authorizeAndWait(page);
        token = flow.token;
        equal(flow.location.pathname, '/callback', 'redirect path');
        equal(flow.location.searchParams.get('state'), link.searchParams.get('state'), 'state sent back');
        assert(flow.location.searchParams.get('code'), 'a code in the redirect');
        assert(
          !flow.location.searchParams.has('token') && !flow.location.searchParams.has('access_token'),
          'no token in the redirect',
        );
        const exchange = flow.exchange.request();
        equal(exchange.method(), 'POST', 'token request method');
        equal(exchange.headers()['content-type'], 'application/x-www-form-urlencoded', 'token request Content-Type');
        const form = new URLSearchParams(exchange.postData());
        equal(form.get('grant_type'), 'authorization_code', 'grant_type');
        equal(form.get('code'), flow.location.searchParams.get('code'), 'code exchanged');
        const challenge = createHash('sha256').update(form.get('code_verifier')).digest('base64url');
        equal(challenge, link.searchParams.get('code_challenge'), 'S256(code_verifier)');
        equal(flow.exchange.status(), 200, 'token answer');
        assert(token && token.split('.').length === 3, 'an access token in the answer');
      },
    );

    await check(
      'callback: the address bar keeps neither code nor token, and no address ever held the token',
      async () => {
        equal(new URL(page.url()).pathname, '/callback', 'callback path');
        equal(new URL(page.url()).search, '', 'address bar query after the exchange');
        assert(
          addresses.every((url) => !url.includes(token)),
          'an address held the token',
        );
      },
    );
    const claims = token ? payloadOf(token) : {};

    await check(
      "callback: calls the verify endpoint as the sample client does (GET, '?', Authorization, Content-Type, Accept)",
      async () => {
        const first = verifyRequests[0];
        assert(first, 'no request to the verify endpoint');
        equal(first.method(), 'GET', 'method');
        assert(first.url().endsWith(`${VERIFY_PATH}?`), `URL ends with "verify?": ${first.url()}`);
        const headers = await first.allHeaders();
        equal(headers.authorization, `Bearer ${token}`, 'Authorization');
        equal(headers['content-type'], 'application/json', 'Content-Type');
        equal(headers.accept, 'application/json', 'Accept');
        assert(
          verifyRequests.some((r) => new URL(r.url()).search === '?view=profile'),
          'a ?view=profile request',
        );
      },
    );

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

    await check(
      'callback: the protected routes answer 200 (/api/me) and 403 (/api/admin) for the same token',
      async () => {
        equal(await text(page, '#route-me .status'), '200', '/api/me status');
        assert((await text(page, '#route-me .answer')).includes(claims.jti), '/api/me answer names the jti');
        equal(await text(page, '#route-admin .status'), '403', '/api/admin status');
        assert(
          (await text(page, '#route-admin .answer')).includes(
            'Insufficient scope: this needs admin; the token lacks admin.',
          ),
          '/api/admin explains the missing scope',
        );
        await page.screenshot({ path: path.join(ARTIFACTS, `demo-callback-${WIDTHS[0]}.png`), fullPage: true });
      },
    );

    await check('the code is single-use: a second exchange of it is refused with invalid_grant', async () => {
      const form = new URLSearchParams(flow.exchange.request().postData());
      const again = await fetch(new URL('/oauth/token', demo.url), { method: 'POST', body: form });
      equal(again.status, 400, 'second exchange status');
      equal((await again.json()).error, 'invalid_grant', 'second exchange error');
    });

    await check('a tampered state is refused: no code exchange, a "State mismatch" page', async () => {
      await openBuilder(page, demo);
      const link = new URL(await text(page, '#link'));
      link.searchParams.set('state', 'X'.repeat(43));
      const before = tokenRequests.length;
      await page.goto(link.href);
      await page.waitForSelector('body[data-state="done"]');
      equal(await text(page, '#heading'), 'State mismatch', 'heading');
      assert(
        (await text(page, '#summary')).startsWith('Refused: the state in this answer does not match'),
        'summary refuses',
      );
      equal(tokenRequests.length, before, 'token requests made');
      equal(new URL(page.url()).search, '', 'address bar query');
    });

    await check('an expired token is headed "Token expired", not "Invalid token"', async () => {
      await openBuilder(page, demo);
      await authorizeAndWait(page, () => page.click('#try-expired'));
      equal(await text(page, '#heading'), 'Token expired', 'heading');
      assert(
        (await text(page, '#summary')).startsWith("Expired token. Access token expired: the token's lifetime is over."),
        'summary says expired',
      );
      equal(await page.getAttribute('#claims', 'data-status'), '401', 'Shape B status');
      await page.screenshot({ path: path.join(ARTIFACTS, `demo-expired-${WIDTHS[0]}.png`), fullPage: true });
    });

    await check('a forged token is reported invalid (401)', async () => {
      await openBuilder(page, demo);
      await authorizeAndWait(page, () => page.click('#try-invalid'));
      equal(await text(page, '#heading'), 'Invalid token', 'heading');
      assert(
        (await text(page, '#summary')).startsWith('Invalid token. Invalid access token: the token was rejected'),
        'summary says the token is invalid',
      );
      equal(await text(page, '#route-me .status'), '401', '/api/me status');
    });

    await check(
      'a token without email and profile: Shape B 200, the profile view 403 with a clear message',
      async () => {
        await openBuilder(page, demo);
        await page.locator('#scopes input[value="email"]').uncheck();
        await page.locator('#scopes input[value="profile"]').uncheck();
        await page.click('#build');
        await page.waitForFunction(
          () =>
            new URL(document.getElementById('authorize').href).searchParams.get('scope') ===
            'identify google roblox discord',
        );
        await authorizeAndWait(page);
        equal(await page.getAttribute('#claims', 'data-status'), '200', 'Shape B status');
        equal(await page.getAttribute('#profile', 'data-status'), '403', 'Shape A status');
        const line = await text(page, '#profile .result');
        assert(
          line.includes(
            'Insufficient scope: this needs identify, profile, email; the token lacks profile, email. Tick them',
          ),
          `profile message: ${line}`,
        );
        assert(await page.locator('#profile .card').isHidden(), 'no empty profile card');
        await page.screenshot({ path: path.join(ARTIFACTS, 'demo-insufficient-scope.png'), fullPage: true });
      },
    );

    await check('the callback without a code says the code is missing', async () => {
      await openBuilder(page, demo);
      await page.click('#try-missing');
      await page.waitForSelector('body[data-state="done"]');
      equal(await text(page, '#heading'), 'Missing code', 'heading');
      assert(
        (await text(page, '#summary')).startsWith('Missing authorization code'),
        'summary says the code is missing',
      );
      assert((await page.getAttribute('#summary', 'class')).includes('error'), 'summary is an error');
    });

    for (const width of WIDTHS) {
      await check(
        `at ${width} px wide: every page fits with no horizontal scroll, and the flow reaches a 200`,
        async () => {
          await page.setViewportSize({ width, height: 900 });
          await openBuilder(page, demo);
          await assertNoSideScroll(page, 'link builder');
          await page.screenshot({ path: path.join(ARTIFACTS, `demo-link-builder-${width}.png`), fullPage: true });
          await authorizeAndWait(page);
          equal(await text(page, '#route-me .status'), '200', '/api/me status');
          await assertNoSideScroll(page, 'callback');
          await page.screenshot({ path: path.join(ARTIFACTS, `demo-callback-${width}.png`), fullPage: true });
          await openBuilder(page, demo);
          await authorizeAndWait(page, () => page.click('#try-expired'));
          await assertNoSideScroll(page, 'expired-token callback');
          await page.goto(new URL('/callback', demo.url).href);
          await page.waitForSelector('body[data-state="done"]');
          await assertNoSideScroll(page, 'callback without a code');
        },
      );
    }

    await require('./dpop').runDpopChecks({ page, url: demo.url, check, assert, equal });

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
