import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createTokenAuth, TokenAuthError, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { verifyEndpoint } from '../../lib/remote/upstream';
import { fingerprint } from '../../lib/verify/admission';
import { AUDIENCE, ISSUER, shapeB } from '../fixtures/issuer';
import { hang, json, startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection as failure } from '../fixtures/rejection';

let now = Math.floor(Date.now() / 1000);
const clock = () => now;
const opened: TokenAuth[] = [];
let upstream: LoopbackServer;
/** What the emulated identity service knows: token → Shape B payload. */
const issued = new Map<string, Record<string, unknown>>();

/** The identity service's verify endpoint: Shape B for a token it issued, 401 otherwise. */
function identityService(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'GET' || req.url !== '/auth/@users/verify') {
    json(res, 404, { status: 'error', message: 'Not found' });
    return;
  }
  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const claims = token === undefined ? undefined : issued.get(token);
  if (claims === undefined) {
    json(
      res,
      401,
      { status: 'error', message: 'Invalid access token' },
      { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    );
    return;
  }
  json(res, 200, claims);
}

/** An opaque RFC 6750 b64token (not a JWS) that the service knows. */
function issue(overrides: Record<string, unknown> = {}): { token: string; claims: Record<string, unknown> } {
  const token = `${randomBytes(24).toString('base64')}~op+aque`;
  const claims = shapeB(now, overrides);
  issued.set(token, claims);
  return { token, claims };
}

function upstreamAuth(key: Record<string, unknown> = {}, options: Partial<TokenAuthOptions> = {}): TokenAuth {
  const auth = createTokenAuth({
    key: { upstream: upstream.origin, ...key },
    issuer: ISSUER,
    audience: AUDIENCE,
    clock,
    ...options,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

beforeEach(async () => {
  now = Math.floor(Date.now() / 1000);
  issued.clear();
  upstream = await startLoopbackServer(identityService);
});

afterEach(async () => {
  for (const auth of opened.splice(0)) auth.close();
  await upstream.close();
});

describe('verifyEndpoint', () => {
  it.each([
    ['https://id.example.com', 'https://id.example.com/auth/@users/verify'],
    ['https://id.example.com/', 'https://id.example.com/auth/@users/verify'],
    ['https://id.example.com/api', 'https://id.example.com/api/auth/@users/verify'],
    ['https://id.example.com/api/', 'https://id.example.com/api/auth/@users/verify'],
  ])('puts the verify path under %s', (base, endpoint) => {
    expect(verifyEndpoint(new URL(base))).toBe(endpoint);
  });
});

describe('upstream key source', () => {
  it('answers the upstream Shape B payload exactly, for an opaque token', async () => {
    const { token, claims } = issue({ extra: { kept: true } });
    const auth = upstreamAuth();
    await expect(auth.verify(token)).resolves.toEqual(claims);
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]).toMatchObject({
      method: 'GET',
      url: '/auth/@users/verify',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    });
  });

  it('calls the verify path under a base address with a path prefix', async () => {
    const { token } = issue();
    upstream.handler = (req, res) => {
      req.url = req.url?.replace(/^\/api/, '');
      identityService(req, res);
    };
    const auth = upstreamAuth({ upstream: `${upstream.origin}/api/` });
    await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
    expect(upstream.seen[0].url).toBe('/api/auth/@users/verify');
  });

  it('caches the answer: a second verification makes no upstream call', async () => {
    const { token } = issue();
    const auth = upstreamAuth();
    await auth.verify(token);
    await auth.verify(token);
    expect(upstream.requests).toBe(1);
    expect(auth.stats()).toMatchObject({ hits: 1, size: 1 });
  });

  it('keeps the cached answer no longer than the token exp', async () => {
    const { token } = issue();
    const auth = upstreamAuth();
    await auth.verify(token);
    now += 601 + 5;
    const err = await failure(auth.verify(token));
    expect([err.code, err.status]).toEqual(['token_expired', 401]);
  });

  it('shares one upstream call among 10 concurrent first uses of a token', async () => {
    const { token } = issue();
    const auth = upstreamAuth();
    const results = await Promise.all(Array.from({ length: 10 }, () => auth.verify(token)));
    expect(new Set(results.map((c) => c.jti)).size).toBe(1);
    expect(upstream.requests).toBe(1);
  });

  it('still answers its cached users while the upstream is down after a flood of tokens it refused', async () => {
    const auth = upstreamAuth({}, { cache: { max: 10 } });
    const users = Array.from({ length: 5 }, () => issue().token);
    for (const token of users) await auth.verify(token);
    for (let i = 0; i < 40; i++) await failure(auth.verify(`forged-${i}`));
    await upstream.stop();
    for (const token of users) await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
    expect(upstream.requests).toBe(users.length + 40);
  });

  it('looks every token up by its SHA-256, so a cached user is answered while the upstream is down even when sighting fingerprints collide', async () => {
    // Five opaque tokens whose fingerprints fall in one four-slot set of the admission table (1 024 slots for a
    // cache of 10): recording the fifth overwrites one of the others. Local verification only pays for that with a
    // signature check; here it would cost an upstream call, and a 503 while the upstream is down.
    const crowded: string[] = [];
    const prints = new Set<number>();
    while (crowded.length < 5) {
      const { token } = issue();
      const h = fingerprint(token);
      const print = (Math.imul(h, 0x9e3779b1) | 1) >>> 0;
      if ((h & 1023 & ~3) === 0 && !prints.has(print)) {
        prints.add(print);
        crowded.push(token);
      }
    }
    const auth = upstreamAuth({}, { cache: { max: 10 } });
    for (const token of crowded) await auth.verify(token);
    await upstream.stop();
    for (const token of crowded) await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
  });

  it('passes an upstream 401 through as invalid_token, remembered briefly like any token fault', async () => {
    const auth = upstreamAuth();
    const err = await failure(auth.verify('unknown-token'));
    expect([err.code, err.status, err.message]).toEqual(['invalid_token', 401, 'Invalid access token']);
    expect(err.headers['WWW-Authenticate']).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Invalid access token"',
    );
    await failure(auth.verify('unknown-token'));
    expect(upstream.requests).toBe(1);
  });

  it('passes an upstream 403 through as insufficient_scope with the scopes it named, never cached', async () => {
    upstream.handler = (_req, res) =>
      json(
        res,
        403,
        { status: 'error', message: 'Forbidden' },
        {
          'WWW-Authenticate': 'Bearer realm="id", error="insufficient_scope", scope="identify email"',
        },
      );
    const auth = upstreamAuth();
    const err = await failure(auth.verify('some-token'));
    expect([err.code, err.status, err.message]).toEqual(['insufficient_scope', 403, 'Insufficient scope']);
    expect(err.headers['WWW-Authenticate']).toBe(
      'Bearer realm="api", error="insufficient_scope", scope="identify email"',
    );
    await failure(auth.verify('some-token'));
    expect(upstream.requests).toBe(2);
  });

  it('does not repeat a scope list from an upstream 403 that is not a valid scope list', async () => {
    upstream.handler = (_req, res) => json(res, 403, {}, { 'WWW-Authenticate': 'Bearer scope="a\\\\b  c"' });
    const err = await failure(upstreamAuth().verify('some-token'));
    expect(err.headers['WWW-Authenticate']).toBe('Bearer realm="api", error="insufficient_scope", scope=""');
  });

  it('answers 503 while the upstream is down, never caching it, and recovers', async () => {
    const { token } = issue();
    const auth = upstreamAuth();
    await upstream.stop();
    const err = await failure(auth.verify(token));
    expect([err.code, err.status, err.message, err.reason]).toEqual([
      'verification_unavailable',
      503,
      'Token verification unavailable',
      'upstream-network',
    ]);
    expect(err.headers['Retry-After']).toBe('5');
    expect(err.headers['WWW-Authenticate']).toBeUndefined();
    await upstream.start();
    await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
  });

  it('answers 503 when the upstream is too slow (timeout)', async () => {
    upstream.handler = hang;
    const err = await failure(upstreamAuth({ timeout: '200ms' }).verify('some-token'));
    expect([err.code, err.status, err.reason]).toEqual(['verification_unavailable', 503, 'upstream-timeout']);
  });

  it('answers 503 at once beyond key.maxInflight calls under way, never queuing them', async () => {
    upstream.handler = hang;
    const auth = upstreamAuth({ timeout: '2s', breaker: false, maxInflight: 3 });
    const held = [1, 2, 3].map((i) => failure(auth.verify(`held-${i}`)));
    await until(() => upstream.requests === 3, 'three upstream calls');
    const busy = await Promise.all([4, 5].map((i) => failure(auth.verify(`busy-${i}`))));
    for (const err of busy) {
      expect([err.code, err.status, err.reason, err.headers['Retry-After']]).toEqual([
        'verification_unavailable',
        503,
        'upstream-busy',
        '1',
      ]);
    }
    expect(upstream.requests).toBe(3);
    auth.close();
    await Promise.all(held);
    // The calls ended free their places: the next new token reaches the upstream again.
    upstream.handler = identityService;
    const fresh = upstreamAuth({ maxInflight: 1 });
    const { token } = issue();
    await expect(fresh.verify(token)).resolves.toMatchObject({ iss: ISSUER });
    await expect(fresh.verify(issue().token)).resolves.toMatchObject({ iss: ISSUER });
  });

  it('refuses a key.maxInflight that is not a positive integer at createTokenAuth', () => {
    for (const maxInflight of [0, 1.5, '10', -1])
      expect(() => upstreamAuth({ maxInflight })).toThrow(/key\.maxInflight/);
  });

  it('repeats a sane upstream Retry-After on a 503', async () => {
    upstream.handler = (_req, res) => json(res, 503, { status: 'error', message: 'down' }, { 'Retry-After': '42' });
    const err = await failure(upstreamAuth().verify('some-token'));
    expect([err.code, err.headers['Retry-After']]).toEqual(['verification_unavailable', '42']);
  });

  it.each<[string, (res: ServerResponse) => void]>([
    ['a 500', (res) => json(res, 500, { status: 'error', message: 'Internal server error' })],
    [
      'a 502 with an HTTP-date Retry-After',
      (res) => json(res, 502, {}, { 'Retry-After': 'Wed, 21 Oct 2015 07:28:00 GMT' }),
    ],
    ['a 404', (res) => json(res, 404, { status: 'error', message: 'Not found' })],
    ['a 204', (res) => res.writeHead(204).end()],
    ['a redirect', (res) => res.writeHead(302, { Location: '/login' }).end()],
  ])('answers 503 for %s (an outage), never caching it', async (_what, answer) => {
    const { token } = issue();
    upstream.handler = (_req, res) => answer(res);
    const auth = upstreamAuth();
    const err = await failure(auth.verify(token));
    expect([err.code, err.status, err.message]).toEqual([
      'verification_unavailable',
      503,
      'Token verification unavailable',
    ]);
    expect(err.headers['Retry-After']).toBe('5');
    upstream.handler = identityService;
    await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
  });

  it.each<[string, string, (res: ServerResponse) => void]>([
    ['a 400', 'upstream-status-400', (res) => json(res, 400, { status: 'error', message: 'Bad request' })],
    ['a 413', 'upstream-status-413', (res) => json(res, 413, { status: 'error', message: 'Too large' })],
    [
      'non-JSON',
      'upstream-not-json',
      (res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>sign in</html>'),
    ],
    ['a JSON array', 'upstream-not-object', (res) => json(res, 200, [shapeB(now)])],
    [
      'Shape A',
      'upstream-shape:iss',
      (res) =>
        json(res, 200, {
          status: 'success',
          user: { id: '1', name: 'N', email: 'n@example.com', picture: 'https://x/p.png' },
        }),
    ],
    ['Shape B without jti', 'upstream-shape:jti', (res) => json(res, 200, shapeB(now, { jti: undefined }))],
    [
      'an answer over 256 KiB',
      'upstream-too-large',
      (res) => json(res, 200, shapeB(now, { pad: 'x'.repeat(300 * 1024) })),
    ],
  ])(
    'answers 401 for %s (an answer about this token), remembered errorTtl like any token fault',
    async (_what, reason, answer) => {
      const { token } = issue();
      upstream.handler = (_req, res) => answer(res);
      const auth = upstreamAuth({}, { cache: { errorTtl: '5s' } });
      const err = await failure(auth.verify(token));
      expect([err.code, err.status, err.reason]).toEqual(['invalid_token', 401, reason]);
      upstream.handler = identityService;
      expect((await failure(auth.verify(token))).code).toBe('invalid_token');
      expect(upstream.requests).toBe(1);
      now += 6;
      await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
    },
  );

  it.each([
    ['another issuer', { iss: 'https://evil.example.com' }, 'invalid_token'],
    ['another audience', { aud: 'other-api' }, 'invalid_token'],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 60 }, 'token_expired'],
  ])('answers 401 for a well-formed answer with %s', async (_what, overrides, code) => {
    const { token } = issue(overrides);
    const err = await failure(upstreamAuth().verify(token));
    expect([err.code, err.status]).toEqual([code, 401]);
  });

  it('accepts opaque b64token syntax but still refuses characters outside it', async () => {
    const auth = upstreamAuth();
    const err = await failure(auth.verify('not a token'));
    expect(err.code).toBe('invalid_token');
    expect(upstream.requests).toBe(0);
  });

  it('close() aborts an upstream call under way', async () => {
    upstream.handler = hang;
    const auth = upstreamAuth();
    const pending = failure(auth.verify('some-token'));
    await until(() => upstream.requests === 1, 'the call to reach the upstream');
    auth.close();
    const err = await pending;
    expect([err.code, err.reason]).toEqual(['verification_unavailable', 'upstream-closed']);
  });

  it('never puts the token in an error message or reason', async () => {
    const token = 'secret-opaque-token-value';
    const seen: TokenAuthError[] = [];
    const auth = upstreamAuth({ timeout: '200ms' }, { onError: (err) => seen.push(err) });
    seen.push(await failure(auth.verify(token)));
    upstream.handler = hang;
    seen.push(await failure(auth.verify(`${token}-2`)));
    await upstream.stop();
    seen.push(await failure(auth.verify(`${token}-3`)));
    for (const err of seen) {
      expect(
        `${err.message} ${err.reason} ${JSON.stringify(err.headers)} ${String((err.cause as Error | undefined)?.message)}`,
      ).not.toContain(token);
    }
  });
});
