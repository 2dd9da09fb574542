import { createHash, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import type { Express } from 'express';
import { decode } from 'jsonwebtoken';
import request from 'supertest';
import type { VerifiedClaims } from '../../lib';

// The demo requires the package by name (self-reference, resolved to dist/ once built). Here it gets the source,
// so the test needs no build; the flag proves the demo really loaded it through this mock.
jest.mock(
  'express-verified-user',
  () => {
    (globalThis as { demoUsesSource?: boolean }).demoUsesSource = true;
    return jest.requireActual('../../lib');
  },
  { virtual: true },
);

import { createDemoApp, startDemo } from '../../demo-app/server';
import { runCli } from '../../lib/cli';

const ALL_SCOPES = ['identify', 'email', 'profile', 'google', 'roblox', 'discord'];
const sampleClientHeaders = (token: string) => ({
  Authorization: `Bearer ${token}`,
  'Content-Type': 'application/json',
  Accept: 'application/json',
});

const CALLBACK = '/callback';

/** A PKCE pair as a browser makes it (RFC 7636 §4.1, §4.2 S256). */
function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

type Query = Record<string, string | undefined>;

/** An authorization request; any parameter can be overridden or removed (undefined). */
function authorizeUrl(challenge: string, overrides: Query = {}): string {
  const params: Query = {
    response_type: 'code',
    client_id: 'demo-app',
    redirect_uri: CALLBACK,
    scope: ALL_SCOPES.join(' '),
    providers: 'google',
    state: randomBytes(32).toString('base64url'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const defined = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return `/oauth/authorize?${new URLSearchParams(defined)}`;
}

function codeFrom(location: string): string {
  const code = new URL(location, 'http://demo').searchParams.get('code');
  if (code === null) throw new Error('no code in the redirect');
  return code;
}

/** The token request a callback page makes (RFC 6749 §4.1.3), form-encoded. */
function tokenRequest(app: Express, code: string, verifier: string, overrides: Query = {}) {
  const form: Query = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CALLBACK,
    client_id: 'demo-app',
    code_verifier: verifier,
    ...overrides,
  };
  const defined = Object.entries(form).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return request(app).post('/oauth/token').type('form').send(new URLSearchParams(defined).toString());
}

/** The whole flow as the demo's pages run it: authorize, then exchange the code with its verifier. */
async function obtainToken(app: Express, overrides: Query = {}): Promise<string> {
  const { verifier, challenge } = pkcePair();
  const res = await request(app).get(authorizeUrl(challenge, overrides)).expect(302);
  const answer = await tokenRequest(app, codeFrom(res.headers.location), verifier).expect(200);
  return answer.body.access_token as string;
}

describe('demo app', () => {
  const { app, auth } = createDemoApp();
  afterAll(() => auth.close());

  it('loads the package through its public name', () => {
    expect((globalThis as { demoUsesSource?: boolean }).demoUsesSource).toBe(true);
  });

  it('its dashboard counts a verified token that its route refused (403) as insufficient_scope, not as accepted', async () => {
    const stats = async () =>
      (await request(app).get('/dashboard/stats.json').expect(200)).body as {
        total: number;
        outcomes: Record<string, number>;
        series: Array<{ ok: number; forbidden: number }>;
      };
    const token = await obtainToken(app);
    const before = await stats();
    await request(app).get('/api/me').set('Authorization', `Bearer ${token}`).expect(200);
    for (let i = 0; i < 3; i++)
      await request(app).get('/api/admin').set('Authorization', `Bearer ${token}`).expect(403);
    const after = await stats();
    expect(after.total - before.total).toBe(4);
    expect((after.outcomes.ok ?? 0) - (before.outcomes.ok ?? 0)).toBe(1);
    expect((after.outcomes.insufficient_scope ?? 0) - (before.outcomes.insufficient_scope ?? 0)).toBe(3);
    const forbidden = (s: typeof after) => s.series.reduce((sum, second) => sum + second.forbidden, 0);
    expect(forbidden(after) - forbidden(before)).toBe(3);
  });

  describe('pages', () => {
    it('serves the link builder at / with its scope and provider choices, for the code flow', async () => {
      const res = await request(app).get('/').expect(200).expect('Content-Type', /html/);
      for (const scope of ALL_SCOPES) expect(res.text).toContain(`name="scope" value="${scope}"`);
      for (const provider of ['google', 'discord', 'roblox'])
        expect(res.text).toContain(`name="providers" value="${provider}"`);
      expect(res.text).toContain('id="authorize"');
      expect(res.text).toContain('name="response_type" value="code"');
      expect(res.text).not.toContain('?token=');
      expect(res.headers['content-security-policy']).toBe(
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
      );
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    });

    it('serves the callback page and its scripts: PKCE in sessionStorage, the code exchanged by POST, the sample client call', async () => {
      const page = await request(app).get('/callback?code=x&state=y').expect(200).expect('Content-Type', /html/);
      expect(page.text).toContain('src="/callback.js"');
      expect(page.text).toContain('src="/pkce.js"');
      const script = await request(app)
        .get('/callback.js')
        .expect(200)
        .expect('Content-Type', /javascript/);
      expect(script.text).toContain("'/api/auth/@users/verify?'");
      expect(script.text).toContain("'Content-Type': 'application/json'");
      expect(script.text).toContain("Accept: 'application/json'");
      expect(script.text).toContain("fetch('/oauth/token', {\n      method: 'POST'");
      expect(script.text).toContain("params.get('state') !== pending.state");
      expect(script.text).not.toMatch(/params\.get\('token'\)/);
      const pkce = await request(app)
        .get('/pkce.js')
        .expect(200)
        .expect('Content-Type', /javascript/);
      expect(pkce.text).toContain("crypto.subtle.digest('SHA-256'");
      expect(pkce.text).toContain('sessionStorage');
      await request(app).get('/builder.js').expect(200);
      await request(app).get('/style.css').expect(200);
      await request(app).get('/avatar.svg').expect(200).expect('Content-Type', /svg/);
    });
  });

  describe('dev authorization server: GET /oauth/authorize', () => {
    it('redirects to the callback with a one-time code and the same state, never a token', async () => {
      const { challenge } = pkcePair();
      const state = randomBytes(32).toString('base64url');
      const res = await request(app).get(authorizeUrl(challenge, { state })).expect(302);
      expect(res.headers.location).toMatch(/^\/callback\?code=[\w-]{43}&state=[\w-]{43}$/);
      expect(new URL(res.headers.location, 'http://demo').searchParams.get('state')).toBe(state);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it.each([
      ['the implicit flow (response_type=token)', { response_type: 'token' }, 'response_type must be "code"'],
      ['another client_id', { client_id: 'other' }, 'unknown client_id'],
      [
        'a redirect to another host',
        { redirect_uri: 'https://evil.example/' },
        'redirect_uri must be a path on this demo',
      ],
      ['a protocol-relative redirect', { redirect_uri: '//evil.example' }, 'redirect_uri must be a path on this demo'],
      ['a backslash redirect', { redirect_uri: '/\\evil.example' }, 'redirect_uri must be a path on this demo'],
      ['no redirect', { redirect_uri: undefined }, 'redirect_uri must be a path on this demo'],
      ['no code_challenge', { code_challenge: undefined }, 'code_challenge must be'],
      ['the plain PKCE method', { code_challenge_method: 'plain' }, 'code_challenge_method must be "S256"'],
      ['no state', { state: undefined }, 'state must be an unguessable value'],
      ['a short state', { state: 'abc' }, 'state must be an unguessable value'],
      ['an unknown scope', { scope: 'identify admin' }, 'unknown scope'],
      ['an unknown provider', { providers: 'github' }, 'unknown provider'],
    ])('refuses %s with 400 and no code', async (_case, overrides: Query, reason) => {
      const res = await request(app).get(authorizeUrl(pkcePair().challenge, overrides)).expect(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toMatch(new RegExp(`^Authorization failed: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    });
  });

  describe('dev authorization server: POST /oauth/token', () => {
    it('exchanges the code and its verifier for a Bearer token with the chosen scopes and providers', async () => {
      const { verifier, challenge } = pkcePair();
      const redirect = await request(app)
        .get(authorizeUrl(challenge, { scope: 'identify email profile', providers: 'google roblox' }))
        .expect(302);
      const res = await tokenRequest(app, codeFrom(redirect.headers.location), verifier)
        .expect(200)
        .expect('Content-Type', /json/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'identify email profile',
      });
      const claims = decode(res.body.access_token) as VerifiedClaims;
      expect(claims.scopes).toEqual(['identify', 'email', 'profile']);
      expect(Object.keys(claims.providers)).toEqual(['google', 'roblox']);
    });

    it('mints a token the demo verify endpoint accepts: Shape B as signed, Shape A from google', async () => {
      const token = await obtainToken(app, { scope: 'identify email profile', providers: 'google' });
      const claims = await request(app).get('/api/auth/@users/verify?').set(sampleClientHeaders(token)).expect(200);
      expect(claims.body).toEqual(decode(token));
      const profile = await request(app)
        .get('/api/auth/@users/verify?view=profile')
        .set(sampleClientHeaders(token))
        .expect(200);
      expect(profile.body).toEqual({
        status: 'success',
        user: {
          id: '109876543210987654321',
          name: 'Ada Lovelace',
          email: 'ada@example.com',
          picture: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/avatar\.svg$/),
        },
      });
    });

    it('accepts an empty scope and no providers (a token every route refuses)', async () => {
      const token = await obtainToken(app, { scope: '', providers: undefined });
      expect(decode(token)).toMatchObject({ scopes: [], providers: {} });
      await request(app).get('/api/auth/@users/verify?').set(sampleClientHeaders(token)).expect(403);
    });

    it('uses each code once: a second exchange is invalid_grant', async () => {
      const { verifier, challenge } = pkcePair();
      const code = codeFrom((await request(app).get(authorizeUrl(challenge)).expect(302)).headers.location);
      await tokenRequest(app, code, verifier).expect(200);
      const again = await tokenRequest(app, code, verifier).expect(400);
      expect(again.body).toEqual({ error: 'invalid_grant', error_description: 'the code is unknown, used or expired' });
    });

    it.each([
      [
        'another code_verifier',
        (v: string) => ({ code_verifier: `${v.slice(1)}A` }),
        'code_verifier does not match the code_challenge',
      ],
      ['no code_verifier', () => ({ code_verifier: undefined }), 'code_verifier does not match the code_challenge'],
      [
        'another redirect_uri',
        () => ({ redirect_uri: '/elsewhere' }),
        'redirect_uri differs from the authorization request',
      ],
      ['another client_id', () => ({ client_id: 'other' }), 'the code was issued to another client'],
      ['an unknown code', () => ({ code: 'A'.repeat(43) }), 'the code is unknown, used or expired'],
    ])(
      'refuses %s with invalid_grant, and the code is spent',
      async (_case, change: (verifier: string) => Query, description) => {
        const { verifier, challenge } = pkcePair();
        const code = codeFrom((await request(app).get(authorizeUrl(challenge)).expect(302)).headers.location);
        const res = await tokenRequest(app, code, verifier, change(verifier)).expect(400);
        expect(res.body).toEqual({ error: 'invalid_grant', error_description: description });
        expect(res.headers['cache-control']).toBe('no-store');
        if (description !== 'the code is unknown, used or expired') await tokenRequest(app, code, verifier).expect(400);
      },
    );

    it('refuses another grant_type, and a JSON body, with unsupported_grant_type', async () => {
      const res = await request(app)
        .post('/oauth/token')
        .type('form')
        .send('grant_type=password&username=a&password=b')
        .expect(400);
      expect(res.body.error).toBe('unsupported_grant_type');
      const json = await request(app).post('/oauth/token').send({ grant_type: 'authorization_code' }).expect(400);
      expect(json.body.error).toBe('unsupported_grant_type');
    });

    it('refuses an expired code', async () => {
      const demo = createDemoApp({ codeLifetimeMs: 0 });
      try {
        const { verifier, challenge } = pkcePair();
        const code = codeFrom((await request(demo.app).get(authorizeUrl(challenge)).expect(302)).headers.location);
        const res = await tokenRequest(demo.app, code, verifier).expect(400);
        expect(res.body.error).toBe('invalid_grant');
      } finally {
        demo.auth.close();
      }
    });

    it('issues the failure examples on request: an expired token (401 token expired) and a forged one (401 invalid)', async () => {
      const expired = await obtainToken(app, { demo_token: 'expired' });
      const late = await request(app).get('/api/me').set('Authorization', `Bearer ${expired}`).expect(401);
      expect(late.body).toEqual({ status: 'error', message: 'Access token expired' });
      const forged = await obtainToken(app, { demo_token: 'forged' });
      const bad = await request(app).get('/api/me').set('Authorization', `Bearer ${forged}`).expect(401);
      expect(bad.body).toEqual({ status: 'error', message: 'Invalid access token' });
    });
  });

  describe('protected routes', () => {
    it('answers /api/me with 200 and /api/admin with 403 for the same full token', async () => {
      const token = await obtainToken(app);
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
      expect(printed).toContain(
        `curl -s '${demo.url}api/auth/@users/verify?' -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -H 'Accept: application/json'`,
      );
      const claims = decode(demo.token) as VerifiedClaims;
      expect(claims.scopes).toEqual(ALL_SCOPES);
      expect(Object.keys(claims.providers).sort()).toEqual(['discord', 'google', 'roblox']);

      const res = await request(demo.url.slice(0, -1))
        .get('/api/auth/@users/verify?')
        .set(sampleClientHeaders(demo.token))
        .expect(200);
      expect(res.body).toEqual(claims);
    } finally {
      await demo.close();
    }
  });

  it("prints an express-verified-user token line, with this run's key file, whose token the demo accepts; the file goes at close", async () => {
    const lines: string[] = [];
    const demo = await startDemo({ port: 0, host: '127.0.0.1', log: (text) => lines.push(text) });
    let keyFile = '';
    try {
      const line = /^export TOKEN=\$\(npx express-verified-user (token .*)\)$/m.exec(lines.join('\n'));
      expect(line).not.toBeNull();
      const args = (line?.[1] ?? '').split(' ').map((arg) => arg.replace(/^'(.*)'$/, '$1'));
      expect(args).toContain(demo.keyFile);
      keyFile = demo.keyFile;
      expect(statSync(keyFile).mode & 0o077).toBe(0);
      const minted = await runCli(args, {});
      expect(minted.code).toBe(0);
      const res = await request(demo.url.slice(0, -1))
        .get('/api/me')
        .set('Authorization', `Bearer ${minted.stdout?.trim()}`)
        .expect(200);
      expect(res.body).toMatchObject({ status: 'success', scopes: ['identify', 'email'] });
    } finally {
      await demo.close();
    }
    expect(existsSync(keyFile)).toBe(false);
  });

  it("makes a fresh signing key each start: one run's token is invalid in another", async () => {
    const quiet = () => undefined;
    const first = await startDemo({ port: 0, host: '127.0.0.1', log: quiet });
    const second = await startDemo({ port: 0, host: '127.0.0.1', log: quiet });
    try {
      const res = await request(second.url.slice(0, -1))
        .get('/api/auth/@users/verify?')
        .set(sampleClientHeaders(first.token))
        .expect(401);
      expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
