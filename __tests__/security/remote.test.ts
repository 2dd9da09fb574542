/**
 * Hostile input, part 4: attacks on the remote key sources, against real loopback servers that record every
 * request they get. JWKS: `kid` path traversal and injection never reach a URL, made-up `kid`s cannot make the
 * package hammer the issuer, `jku`/`x5u` never redirect a fetch, a JWKS key is used with its own algorithm only
 * (RFC 8725 §3.1, §3.10). Upstream: a token never reaches the upstream unless it is a clean RFC 6750 b64token,
 * and never reaches anyone else.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, rsaKeys, shapeB, sign } from '../fixtures/issuer';
import {
  answerOf,
  expectRefused,
  getMe,
  hitCounter,
  protectedApp,
  rawToken,
  refusal,
  type HitCounter,
  type ProtectedApp,
} from './harness';

const issuerKey = rsaKeys();
const ecKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const attacker = rsaKeys();
const KID = 'issuer-2026';
const EC_KID = 'issuer-ec';
const bearer = (token: string) => `Bearer ${token}`;
const claims = shapeB(NOW);

function jwk(key: KeyObject, extra: Record<string, unknown>): Record<string, unknown> {
  return { ...key.export({ format: 'jwk' }), use: 'sig', ...extra };
}

/** The issuer's published JWKS, with a misconfigured symmetric key in it that must never be used. */
const PUBLISHED = {
  keys: [
    jwk(issuerKey.publicKey, { kid: KID, alg: 'RS256' }),
    jwk(ecKey.publicKey, { kid: EC_KID }),
    {
      kty: 'oct',
      kid: 'shared',
      k: Buffer.from('a-secret-someone-published-in-a-jwks').toString('base64url'),
      alg: 'HS256',
    },
  ],
};

const KIDS = [
  '../../../../etc/passwd',
  '../jwks.json',
  '..%2F..%2Fadmin',
  '/.well-known/jwks.json',
  '?kid=1&x=',
  '#fragment',
  'http://127.0.0.1:1/evil',
  "' OR 1=1 --",
  '$(id)',
  '\u0000',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  `${KID} `,
  KID.toUpperCase(),
  '',
];

describe.each(EXPRESS_VERSIONS)('JWKS key source under attack through %s', (_name, express) => {
  let jwks: HitCounter;
  let evil: HitCounter;
  let app: ProtectedApp;
  const jwksPath = '/.well-known/jwks.json';
  beforeAll(async () => {
    jwks = await hitCounter(JSON.stringify(PUBLISHED));
    evil = await hitCounter(JSON.stringify({ keys: [jwk(attacker.publicKey, { kid: KID })] }));
    // The clock stands still, so the 30 s cooldown never elapses: every fetch after the first would be a leak.
    const options: TokenAuthOptions = {
      key: { jwksUri: `${jwks.url}${jwksPath}`, cooldown: '30s' },
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
    };
    app = await protectedApp(express, options);
  });
  afterAll(() => Promise.all([jwks.close(), evil.close(), app.close()]));
  afterEach(() => {
    // Whatever a test sent, the JWKS was asked for at the configured path only, and the attacker's server never.
    for (const seen of jwks.requests) expect(seen).toEqual({ method: 'GET', path: jwksPath, authorization: undefined });
    expect(jwks.hits).toBeLessThanOrEqual(1);
    expect(evil.hits).toBe(0);
  });

  it("accepts the issuer's genuine RS256 and ES256 tokens (control)", async () => {
    expect((await getMe(app.server, bearer(sign(claims, issuerKey.privateKey, 'RS256', { kid: KID })))).status).toBe(
      200,
    );
    expect((await getMe(app.server, bearer(sign(claims, ecKey.privateKey, 'ES256', { kid: EC_KID })))).status).toBe(
      200,
    );
  });

  it.each(KIDS.map((kid) => [JSON.stringify(kid), kid]))(
    'refuses kid %s signed by the attacker, fetching nothing new',
    async (_label, kid) => {
      await expectRefused(app.server, bearer(sign(claims, attacker.privateKey, 'RS256', { kid })), 'invalid');
    },
  );

  it('refuses 50 made-up kids in a burst with 401s and no extra fetch (no JWKS hammering)', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        getMe(app.server, bearer(sign(claims, attacker.privateKey, 'RS256', { kid: `made-up-${i}` }))),
      ),
    );
    for (const res of answers) expect(answerOf(res)).toEqual(refusal('invalid'));
  });

  it("refuses the issuer's kid on a token the attacker signed, with jku and x5u pointing at the attacker", async () => {
    const header = {
      kid: KID,
      jku: `${evil.url}/jwks.json`,
      x5u: `${evil.url}/cert.pem`,
      jwk: attacker.publicKey.export({ format: 'jwk' }),
    };
    await expectRefused(app.server, bearer(sign(claims, attacker.privateKey, 'RS256', header)), 'invalid');
  });

  it('refuses HS256 signed with a published public key (as PEM, as JWK JSON, as its modulus)', async () => {
    const pem = issuerKey.publicKey.export({ type: 'spki', format: 'pem' });
    const asJwk = JSON.stringify(jwk(issuerKey.publicKey, { kid: KID, alg: 'RS256' }));
    const modulus = String(issuerKey.publicKey.export({ format: 'jwk' }).n);
    for (const hmacKey of [pem, asJwk, modulus, Buffer.from(modulus, 'base64url')]) {
      await expectRefused(
        app.server,
        bearer(rawToken(JSON.stringify({ alg: 'HS256', kid: KID }), JSON.stringify(claims), hmacKey)),
        'invalid',
      );
    }
  });

  it('never uses a symmetric key a JWKS publishes by mistake (anyone can read it)', async () => {
    const k = Buffer.from('a-secret-someone-published-in-a-jwks');
    await expectRefused(
      app.server,
      bearer(rawToken(JSON.stringify({ alg: 'HS256', kid: 'shared' }), JSON.stringify(claims), k)),
      'invalid',
    );
    expect(() =>
      createTokenAuth({
        key: { jwksUri: `${jwks.url}${jwksPath}` },
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
      }),
    ).toThrow(TypeError);
  });

  it("uses a key with the algorithm its JWK names only: the issuer's own key under PS256 is refused", async () => {
    await expectRefused(app.server, bearer(sign(claims, issuerKey.privateKey, 'PS256', { kid: KID })), 'invalid');
    await expectRefused(app.server, bearer(sign(claims, issuerKey.privateKey, 'RS512', { kid: KID })), 'invalid');
  });

  it('refuses an RSA kid presented with an EC algorithm and the reverse', async () => {
    await expectRefused(app.server, bearer(sign(claims, ecKey.privateKey, 'ES256', { kid: KID })), 'invalid');
    await expectRefused(app.server, bearer(sign(claims, issuerKey.privateKey, 'RS256', { kid: EC_KID })), 'invalid');
  });

  it('refuses a kid-less token signed by the attacker', async () => {
    await expectRefused(app.server, bearer(sign(claims, attacker.privateKey, 'RS256')), 'invalid');
  });
});

describe.each(EXPRESS_VERSIONS)('upstream mode under attack through %s', (_name, express) => {
  let upstream: HitCounter;
  let evil: HitCounter;
  let redirecting: HitCounter;
  let app: ProtectedApp;
  let redirected: ProtectedApp;
  const opaque = 'opaque-token_0123456789~+/abc==';

  beforeAll(async () => {
    evil = await hitCounter('{}');
    // A genuine identity service: knows exactly one token.
    upstream = await hitCounter('', (req, res: ServerResponse) => {
      const known = req.headers.authorization === `Bearer ${opaque}`;
      res
        .writeHead(known ? 200 : 401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify(known ? shapeB(NOW) : { status: 'error', message: 'no' }));
    });
    // A compromised or misconfigured one that redirects to the attacker, who would then hold the token.
    redirecting = await hitCounter('', (_req, res: ServerResponse) => {
      res.writeHead(307, { Location: `${evil.url}/auth/@users/verify` }).end();
    });
    const base = { issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };
    app = await protectedApp(express, { key: { upstream: upstream.url }, ...base });
    redirected = await protectedApp(express, { key: { upstream: redirecting.url }, ...base });
  });
  afterAll(() => Promise.all([upstream.close(), evil.close(), redirecting.close(), app.close(), redirected.close()]));

  it('accepts the token the upstream knows (control)', async () => {
    expect((await getMe(app.server, bearer(opaque))).status).toBe(200);
  });

  it.each([
    ['a header injection (CR LF) through verify()', 'abc\r\nX-Injected: 1'],
    ['a space', 'abc def'],
    ['a comma', 'abc,def'],
    ['a quote', 'abc"def'],
    ['"=" inside, not only at the end', 'ab=c'],
    ['a non-ASCII character', 'abcé'],
    ['a NUL', 'abc\u0000'],
    ['a token beyond maxTokenLength', 'a'.repeat(16_385)],
  ])('never forwards %s to the upstream', async (_case, token) => {
    const before = upstream.hits;
    const auth = createTokenAuth({
      key: { upstream: upstream.url },
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
    });
    try {
      await expect(auth.verify(token)).rejects.toMatchObject({ code: 'invalid_token', status: 401 });
    } finally {
      auth.close();
    }
    expect(upstream.hits).toBe(before);
  });

  it.each([
    ['a comma-joined second token', `Bearer ${opaque},${opaque}`],
    ['two tokens', `Bearer ${opaque} ${opaque}`],
    ['a quoted token', `Bearer "${opaque}"`],
    // An oversized token (over the 16 384 default) cannot reach the app over HTTP: Node answers 431 first. The
    // verify() case above holds the length rule in upstream mode.
  ])('refuses %s through HTTP without an upstream call', async (_case, header) => {
    const before = upstream.hits;
    await expectRefused(app.server, header, 'invalid');
    expect(upstream.hits).toBe(before);
  });

  it('does not follow an upstream redirect: 503, and the token never reaches the redirect target', async () => {
    const res = await getMe(redirected.server, bearer(opaque));
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    expect(evil.hits).toBe(0);
  });

  it('sends the token to the configured upstream path only, in the Authorization header only', async () => {
    for (const seen of upstream.requests) {
      expect(seen.method).toBe('GET');
      expect(seen.path).toBe('/auth/@users/verify');
    }
    expect(upstream.requests.some((seen) => seen.authorization === `Bearer ${opaque}`)).toBe(true);
  });
});
