'use strict';
// The demo app: a link builder, a dev authorization server (code flow with PKCE), a callback page that exchanges
// the code and calls the verify endpoint as the service's sample client does, and two protected routes. It uses
// the package only through its public entry.
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const express = require('express');
const { createTokenAuth } = require('express-verified-user');
const { createDevIssuer, LIFETIME, ISSUER, AUDIENCE } = require('./dev-issuer');
const { devAuthorizationServer } = require('./dev-authorization-server');

const PUBLIC = path.join(__dirname, 'public');

// The pages load only their own scripts and styles, and never leak a token through a Referer header.
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};

/** Build the demo's Express app with a fresh dev signing key. `codeLifetimeMs` is for tests. */
function createDemoApp({ codeLifetimeMs } = {}) {
  const issuer = createDevIssuer();
  const { dashboardRouter, countRouteRefusal } = require('./dashboard');
  // onError: the dashboard counts a verified token that its route refused (403) as refused, not accepted.
  const auth = createTokenAuth({ ...issuer.options, onError: countRouteRefusal });
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.set(SECURITY_HEADERS);
    next();
  });

  app.get('/', (_req, res) => res.sendFile(path.join(PUBLIC, 'index.html')));
  app.get('/callback', (_req, res) => res.sendFile(path.join(PUBLIC, 'callback.html')));
  app.use(express.static(PUBLIC, { index: false }));
  require('./dpop').mountDpop(app); // the DPoP page: /dpop, /dpop/token, /dpop/api/me
  app.use(dashboardRouter());

  // Dev stand-in for the identity service's OAuth steps: GET /oauth/authorize → ?code=&state=, POST /oauth/token.
  app.use(devAuthorizationServer(issuer, { codeLifetimeMs }));

  // The verify endpoint, as the service serves it: GET|POST /api/auth/@users/verify (Shape B, or Shape A with
  // ?view=profile).
  app.use('/api', auth.verifyRouter());

  // Two protected routes for the same token: one any identified user may call, one no demo token can.
  app.get('/api/me', auth.requireVerifiedUser(['identify']), (req, res) => {
    res.json({
      status: 'success',
      route: '/api/me',
      requires: ['identify'],
      jti: req.auth.jti,
      scopes: req.auth.scopes,
    });
  });
  app.get('/api/admin', auth.requireVerifiedUser(['admin']), (req, res) => {
    res.json({ status: 'success', route: '/api/admin', requires: ['admin'], jti: req.auth.jti });
  });

  app.use('/api', (_req, res) => res.status(404).json({ status: 'error', message: 'Not found' }));
  app.use((err, _req, res, _next) => {
    void err;
    res.status(500).json({ status: 'error', message: 'Internal server error' });
  });

  return { app, auth, issuer };
}

/** The lines printed at start: where to go, a ready token, curl commands that use it, and how to mint another. */
function banner(url, token, keyFile) {
  const api = `${url}api`;
  const headers = `-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H 'Accept: application/json'`;
  return [
    '',
    'express-verified-user demo',
    '',
    `  Open ${url} to build an authorization link.`,
    '',
    `  A ready token (all six scopes; google, discord and roblox linked; valid ${LIFETIME / 60} minutes;`,
    '  signed with a key made at start, so it dies with this process):',
    '',
    `export TOKEN='${token}'`,
    '',
    '# Shape B (the claims), the way the sample client asks:',
    `curl -s '${api}/auth/@users/verify?' ${headers}`,
    '# Shape A (the profile):',
    `curl -s '${api}/auth/@users/verify?view=profile' ${headers}`,
    '# A protected route that answers 200, and one that answers 403 (it needs a scope no demo token has):',
    `curl -s '${api}/me' -H "Authorization: Bearer $TOKEN"`,
    `curl -si '${api}/admin' -H "Authorization: Bearer $TOKEN"`,
    '# No token: 401 with a WWW-Authenticate challenge:',
    `curl -si '${api}/auth/@users/verify?'`,
    '',
    "# Another token, with the scopes you choose: the package's command, signing with this run's key",
    '# (npx express-verified-user token --help says every flag):',
    `export TOKEN=$(npx express-verified-user token --key '${keyFile}' --iss ${ISSUER} --aud ${AUDIENCE} --scope identify,email --sub ada)`,
    `curl -s '${api}/me' -H "Authorization: Bearer $TOKEN"`,
    '',
  ].join('\n');
}

/**
 * Start the demo. `port` 0 picks a free port (tests); `host` defaults to every interface. Resolves with the URL,
 * the printed token and `close()`.
 */
async function startDemo({ port = Number(process.env.PORT ?? 3000), host, log = console.log } = {}) {
  const { app, auth, issuer } = createDemoApp();
  const server = http.createServer(app);
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    auth.close();
    throw err;
  }
  const address = server.address();
  const shownHost = host === undefined || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}/`;
  const token = issuer.mint({ origin: url.slice(0, -1) });
  // The dev key in a private temporary file while the demo runs, for the command's --key; removed at close or exit.
  const keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'evu-demo-'));
  const keyFile = path.join(keyDir, 'dev-key.pem');
  fs.writeFileSync(keyFile, issuer.privateKeyPem(), { mode: 0o600 });
  const removeKey = () => fs.rmSync(keyDir, { recursive: true, force: true });
  process.once('exit', removeKey);
  log(banner(url, token, keyFile));
  return {
    url,
    port: address.port,
    token,
    keyFile,
    server,
    close() {
      removeKey();
      process.removeListener('exit', removeKey);
      auth.close();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

module.exports = { createDemoApp, startDemo };

if (require.main === module) {
  // Ctrl-C (SIGINT) and a stop request (SIGTERM: kill, docker stop, systemd) end through process.exit, so that the
  // 'exit' handlers run: the dev key file goes with the process, whichever way it is stopped.
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
  startDemo({ host: process.env.HOST || undefined }).catch((err) => {
    console.error(`demo: could not start: ${err.message}`);
    process.exitCode = 1;
  });
}
