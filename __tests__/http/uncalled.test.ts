import type { Express, RequestHandler } from 'express';
import request from 'supertest';
import { createTokenAuth } from '../../lib';
import { clearVariables } from '../fixtures/environment';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, SECRET, shapeB, sign } from '../fixtures/issuer';

// `app.get('/me', auth.requireVerifiedUser, …)`: the factory mounted without being called. Express then runs it
// with (req, res, next); it must work as `requireVerifiedUser()`, never answer a 500 with Express's HTML stack.

// The factories are mounted uncalled on purpose: their types say they must be called, which is the point.
const asMounted = (factory: unknown) => factory as RequestHandler;

describe.each(EXPRESS_VERSIONS)('a middleware factory mounted uncalled (%s)', (_name, express) => {
  const auth = createTokenAuth({ key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE });
  afterAll(() => auth.close());

  function build(): Express {
    const app = express();
    app.get('/me', asMounted(auth.requireVerifiedUser), (req, res) => {
      res.json({ jti: req.auth?.jti });
    });
    app.get('/maybe', asMounted(auth.optionalVerifiedUser), (req, res) => {
      res.json({ signedIn: req.auth !== undefined });
    });
    app.use('/api', asMounted(auth.verifyRouter));
    return app;
  }
  const app = build();

  it('auth.requireVerifiedUser works as requireVerifiedUser(): 200 with a valid token, its claims on req.auth', async () => {
    const claims = shapeB();
    const res = await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(claims)}`)
      .expect(200);
    expect(res.body).toEqual({ jti: claims.jti });
  });

  it('auth.requireVerifiedUser answers a request without a token with the JSON 401 and challenge, not a 500', async () => {
    const res = await request(app).get('/me').expect(401).expect('Content-Type', /json/);
    expect(res.body).toEqual({ status: 'error', message: 'Missing access token' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
  });

  it('auth.optionalVerifiedUser lets an anonymous request through and still refuses a bad token', async () => {
    await request(app).get('/maybe').expect(200, { signedIn: false });
    await request(app)
      .get('/maybe')
      .set('Authorization', `Bearer ${sign(shapeB())}`)
      .expect(200, { signedIn: true });
    const res = await request(app).get('/maybe').set('Authorization', 'Bearer a.b.c').expect(401);
    expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
  });

  it('auth.verifyRouter serves the verify endpoint as verifyRouter() does', async () => {
    const claims = shapeB();
    const res = await request(app)
      .get('/api/auth/@users/verify?')
      .set('Authorization', `Bearer ${sign(claims)}`)
      .expect(200);
    expect(res.body).toEqual(claims);
    await request(app).get('/api/elsewhere').expect(404);
  });
});

describe.each(EXPRESS_VERSIONS)('the top-level factories mounted uncalled (%s)', (_name, express) => {
  let restore: () => void;
  // A fresh copy of the package per Express version: the default instance and the uncalled handler are built once
  // per process, on first use, as they are in an app.
  let lib: typeof import('../../lib');
  let defaults: typeof import('../../lib/token-auth');
  beforeAll(async () => {
    restore = clearVariables();
    await jest.isolateModulesAsync(async () => {
      lib = await import('../../lib');
      defaults = await import('../../lib/token-auth');
    });
  });
  afterAll(() => {
    defaults.resetDefaultTokenAuth();
    restore();
  });

  it('answer a bare JSON 500 (never an HTML stack) while the environment is unconfigured, and warn once how to call them', async () => {
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const app = express();
      app.get('/me', asMounted(lib.requireVerifiedUser), (_req, res) => {
        res.json({ reached: true });
      });
      for (let i = 0; i < 2; i++) {
        const res = await request(app).get('/me').expect(500).expect('Content-Type', /json/);
        expect(res.body).toEqual({ status: 'error', message: 'Internal server error' });
      }
      expect(emitWarning.mock.calls.map(([message]) => message)).toEqual([
        'requireVerifiedUser was mounted without being called, and calling it failed: express-verified-user: the environment ' +
          'does not configure the default TokenAuth:\n' +
          '- no key configured: set one of TOKEN_SECRET, TOKEN_PUBLIC_KEY, TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL, TOKEN_ISSUER_BASE_URL\n' +
          '- set TOKEN_ISSUER (a value, a comma-separated list, or "false" to leave it unchecked on purpose)\n' +
          '- set TOKEN_AUDIENCE (a value, a comma-separated list, or "false" to leave it unchecked on purpose). Call it once at set-up ' +
          "instead, e.g. app.get('/me', requireVerifiedUser(), handler), so that this fails at start-up.",
      ]);
    } finally {
      emitWarning.mockRestore();
    }
  });

  it('work as requireVerifiedUser() and verifyRouter() once the environment is configured', async () => {
    Object.assign(process.env, { TOKEN_SECRET: SECRET, TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE });
    const app = express();
    app.get('/me', asMounted(lib.requireVerifiedUser), (req, res) => {
      res.json({ jti: req.auth?.jti });
    });
    app.use('/api', asMounted(lib.verifyRouter));
    const claims = shapeB();
    await request(app)
      .get('/me')
      .set('Authorization', `Bearer ${sign(claims)}`)
      .expect(200, { jti: claims.jti });
    await request(app).get('/me').expect(401);
    await request(app)
      .get('/api/auth/@users/verify')
      .set('Authorization', `Bearer ${sign(claims)}`)
      .expect(200);
  });
});
