import { decode } from 'jsonwebtoken';
import request from 'supertest';
import type { VerifiedClaims } from '../../lib';

// The demo requires the package by name (self-reference, resolved to dist/ once built). Here it gets the source,
// so the test needs no build; the flag proves the demo really loaded it through this mock.
jest.mock('express-verified-user', () => {
  (globalThis as { demoUsesSource?: boolean }).demoUsesSource = true;
  return jest.requireActual('../../lib');
}, { virtual: true });

import { createDemoApp, startDemo } from '../../demo-app/server';

const ALL_SCOPES = ['identify', 'email', 'profile', 'google', 'roblox', 'discord'];
const sampleClientHeaders = (token: string) => ({
  Authorization: `Bearer ${token}`,
  'Content-Type': 'application/json',
  Accept: 'application/json',
});

function tokenFrom(location: string): string {
  const token = new URL(location, 'http://demo').searchParams.get('token');
  if (token === null) throw new Error('no token in the redirect');
  return token;
}

describe('demo app', () => {
  const { app, auth } = createDemoApp();
  afterAll(() => auth.close());

  it('loads the package through its public name', () => {
    expect((globalThis as { demoUsesSource?: boolean }).demoUsesSource).toBe(true);
  });

  describe('pages', () => {
    it('serves the link builder at / with its scope and provider choices', async () => {
      const res = await request(app).get('/').expect(200).expect('Content-Type', /html/);
      for (const scope of ALL_SCOPES) expect(res.text).toContain(`name="scope" value="${scope}"`);
      for (const provider of ['google', 'discord', 'roblox']) expect(res.text).toContain(`name="providers" value="${provider}"`);
      expect(res.text).toContain('id="authorize"');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    });

    it('serves the callback page and its scripts', async () => {
      const page = await request(app).get('/callback?token=x').expect(200).expect('Content-Type', /html/);
      expect(page.text).toContain('src="/callback.js"');
      const script = await request(app).get('/callback.js').expect(200).expect('Content-Type', /javascript/);
      expect(script.text).toContain("'/api/auth/@users/verify?'");
      expect(script.text).toContain("'Content-Type': 'application/json'");
      expect(script.text).toContain("Accept: 'application/json'");
      await request(app).get('/builder.js').expect(200);
      await request(app).get('/style.css').expect(200);
      await request(app).get('/avatar.svg').expect(200).expect('Content-Type', /svg/);
    });
  });

  describe('dev authorize endpoint', () => {
    const authorize = '/oauth/authorize?response_type=token&client_id=demo-app&redirect_uri=%2Fcallback';

    it('mints a token with the chosen scopes and providers and redirects to the callback with ?token= and state', async () => {
      const res = await request(app).get(`${authorize}&scope=identify+email+profile&providers=google+roblox&state=s1`).expect(302);
      expect(res.headers.location).toMatch(/^\/callback\?token=[\w-]+\.[\w-]+\.[\w-]+&state=s1$/);
      expect(res.headers['cache-control']).toBe('no-store');
      const claims = decode(tokenFrom(res.headers.location)) as VerifiedClaims;
      expect(claims.scopes).toEqual(['identify', 'email', 'profile']);
      expect(Object.keys(claims.providers)).toEqual(['google', 'roblox']);
    });

    it('mints a token the demo verify endpoint accepts: Shape B as signed, Shape A from google', async () => {
      const res = await request(app).get(`${authorize}&scope=identify+email+profile&providers=google`).expect(302);
      const token = tokenFrom(res.headers.location);
      const claims = await request(app).get('/api/auth/@users/verify?').set(sampleClientHeaders(token)).expect(200);
      expect(claims.body).toEqual(decode(token));
      const profile = await request(app).get('/api/auth/@users/verify?view=profile').set(sampleClientHeaders(token)).expect(200);
      expect(profile.body).toEqual({
        status: 'success',
        user: { id: '109876543210987654321', name: 'Ada Lovelace', email: 'ada@example.com', picture: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/avatar\.svg$/) },
      });
    });

    it('accepts an empty scope and no providers (a token every route refuses)', async () => {
      const res = await request(app).get(`${authorize}&scope=`).expect(302);
      const token = tokenFrom(res.headers.location);
      expect(decode(token)).toMatchObject({ scopes: [], providers: {} });
      await request(app).get('/api/auth/@users/verify?').set(sampleClientHeaders(token)).expect(403);
    });

    it.each([
      ['another response_type', '/oauth/authorize?response_type=code&redirect_uri=%2Fcallback'],
      ['a redirect to another host', '/oauth/authorize?response_type=token&redirect_uri=https%3A%2F%2Fevil.example%2F'],
      ['a protocol-relative redirect', '/oauth/authorize?response_type=token&redirect_uri=%2F%2Fevil.example'],
      ['a backslash redirect', '/oauth/authorize?response_type=token&redirect_uri=%2F%5Cevil.example'],
      ['no redirect', '/oauth/authorize?response_type=token'],
      ['an unknown scope', `${authorize}&scope=identify+admin`],
      ['an unknown provider', `${authorize}&providers=github`],
    ])('refuses %s with 400 and no token', async (_case, url) => {
      const res = await request(app).get(url).expect(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toMatch(/^Authorization failed: /);
    });
  });

  describe('protected routes', () => {
    it('answers /api/me with 200 and /api/admin with 403 for the same full token', async () => {
      const res = await request(app).get(`/oauth/authorize?response_type=token&redirect_uri=%2Fcallback&scope=${ALL_SCOPES.join('+')}&providers=google`);
      const token = tokenFrom(res.headers.location);
      const me = await request(app).get('/api/me').set('Authorization', `Bearer ${token}`).expect(200);
      expect(me.body).toMatchObject({ status: 'success', jti: (decode(token) as VerifiedClaims).jti });
      const admin = await request(app).get('/api/admin').set('Authorization', `Bearer ${token}`).expect(403);
      expect(admin.body).toEqual({ status: 'error', message: 'Insufficient scope' });
      expect(admin.headers['www-authenticate']).toBe('Bearer realm="api", error="insufficient_scope", scope="admin"');
    });

    it('answers unknown /api paths with a JSON 404', async () => {
      const res = await request(app).get('/api/nothing').expect(404);
      expect(res.body).toEqual({ status: 'error', message: 'Not found' });
    });
  });
});

describe('startDemo', () => {
  it('listens on port 0, prints the URL, a ready token with all six scopes and three providers, and curl lines', async () => {
    const lines: string[] = [];
    const demo = await startDemo({ port: 0, host: '127.0.0.1', log: (text) => lines.push(text) });
    try {
      const printed = lines.join('\n');
      expect(demo.url).toBe(`http://127.0.0.1:${demo.port}/`);
      expect(printed).toContain(demo.url);
      expect(printed).toContain(`export TOKEN='${demo.token}'`);
      expect(printed).toContain(`curl -s '${demo.url}api/auth/@users/verify?' -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H 'Accept: application/json'`);
      const claims = decode(demo.token) as VerifiedClaims;
      expect(claims.scopes).toEqual(ALL_SCOPES);
      expect(Object.keys(claims.providers).sort()).toEqual(['discord', 'google', 'roblox']);

      const res = await request(demo.url.slice(0, -1)).get('/api/auth/@users/verify?').set(sampleClientHeaders(demo.token)).expect(200);
      expect(res.body).toEqual(claims);
    } finally {
      await demo.close();
    }
  });

  it('makes a fresh signing key each start: one run\'s token is invalid in another', async () => {
    const quiet = () => undefined;
    const first = await startDemo({ port: 0, host: '127.0.0.1', log: quiet });
    const second = await startDemo({ port: 0, host: '127.0.0.1', log: quiet });
    try {
      const res = await request(second.url.slice(0, -1)).get('/api/auth/@users/verify?').set(sampleClientHeaders(first.token)).expect(401);
      expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
