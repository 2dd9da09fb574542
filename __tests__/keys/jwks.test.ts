import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { JWKS_DEFAULT_ALGORITHMS, JWKS_MAX_AGE, MAX_JWKS_KEYS, parseJwks, readJwk } from '../../lib/keys/jwks';
import { createTestIssuer } from '../../lib/testing';
import { AUDIENCE, b64, ecKeys, ISSUER, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';
import { hang, json, startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection as failure } from '../fixtures/rejection';

const rsa = rsaKeys();
const rsa2 = rsaKeys();
const ec = ecKeys();
const ec384 = ecKeys('secp384r1');

function jwk(publicKey: KeyObject, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...publicKey.export({ format: 'jwk' }), ...extra };
}

let now = Math.floor(Date.now() / 1000);
const clock = () => now;
const opened: TokenAuth[] = [];
const servers: LoopbackServer[] = [];
const issuers: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const auth of opened.splice(0)) auth.close();
  await Promise.all([...servers.splice(0), ...issuers.splice(0)].map((s) => s.close()));
});

/** A JWKS server answering with `keys` (a function, so a test can change what it publishes). */
async function jwksServer(keys: () => unknown[]): Promise<LoopbackServer & { uri: string }> {
  const server = await startLoopbackServer((_req, res) => json(res, 200, { keys: keys() }));
  servers.push(server);
  return Object.assign(server, { uri: `${server.origin}/.well-known/jwks.json` });
}

function jwksAuth(
  jwksUri: string,
  key: Record<string, unknown> = {},
  options: Partial<TokenAuthOptions> = {},
): TokenAuth {
  const auth = createTokenAuth({
    key: { jwksUri, ...key },
    issuer: ISSUER,
    audience: AUDIENCE,
    clock,
    ...options,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

/** A createTestIssuer serving its JWKS, and a TokenAuth reading it; both closed after the test. */
async function issuerWithAuth(alg: 'RS256' | 'ES256') {
  const issuer = await createTestIssuer({ alg, jwks: true, clock });
  issuers.push(issuer);
  const auth = createTokenAuth({ ...issuer.options, clock });
  opened.push(auth);
  return { issuer, auth };
}

function rs256(
  kid: string | undefined,
  key: KeyObject = rsa.privateKey,
  overrides: Record<string, unknown> = {},
): string {
  return sign(shapeB(now, overrides), key, 'RS256', kid === undefined ? {} : { kid });
}

describe('readJwk', () => {
  it('reads RSA and EC (P-256, P-384) public keys with their kid and alg', () => {
    expect(readJwk(jwk(rsa.publicKey, { kid: 'r', alg: 'RS256', use: 'sig' }))).toMatchObject({
      kid: 'r',
      alg: 'RS256',
    });
    expect(readJwk(jwk(ec.publicKey, { kid: 'e' }))).toMatchObject({ kid: 'e', alg: undefined });
    expect(readJwk(jwk(ec384.publicKey, { alg: 'ES384' }))?.key.asymmetricKeyDetails?.namedCurve).toBe('secp384r1');
  });

  it('reads OKP public keys: Ed25519 (alg EdDSA, Ed25519 or none named) and Ed448', () => {
    const ed = generateKeyPairSync('ed25519').publicKey;
    expect(readJwk(jwk(ed, { kid: 'o', alg: 'EdDSA' }))).toMatchObject({ kid: 'o', alg: 'EdDSA' });
    expect(readJwk(jwk(ed, { alg: 'Ed25519' }))?.key.asymmetricKeyType).toBe('ed25519');
    expect(readJwk(jwk(generateKeyPairSync('ed448').publicKey))?.key.asymmetricKeyType).toBe('ed448');
  });

  it.each([
    ['use other than sig', jwk(rsa.publicKey, { use: 'enc' })],
    ['key_ops without verify', jwk(rsa.publicKey, { key_ops: ['encrypt'] })],
    ['a private RSA key', rsa.privateKey.export({ format: 'jwk' })],
    ['a private EC key', ec.privateKey.export({ format: 'jwk' })],
    ['a symmetric key', { kty: 'oct', k: b64(SECRET) }],
    ['an X25519 (key agreement) OKP key', jwk(generateKeyPairSync('x25519').publicKey)],
    ['a private Ed25519 key', generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })],
    ['an RSA alg on an Ed25519 key', jwk(generateKeyPairSync('ed25519').publicKey, { alg: 'RS256' })],
    ['the Ed25519 alg on an Ed448 key', jwk(generateKeyPairSync('ed448').publicKey, { alg: 'Ed25519' })],
    ['an EC key on an unsupported curve', jwk(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey)],
    ['RSA under 2048 bits', jwk(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey)],
    ['an alg that is not a signature algorithm', jwk(rsa.publicKey, { alg: 'RSA-OAEP' })],
    ['an HMAC alg on an RSA key', jwk(rsa.publicKey, { alg: 'HS256' })],
    ['an alg that does not fit the key', jwk(ec.publicKey, { alg: 'ES384' })],
    ['an unparseable modulus', { kty: 'RSA', n: '!!', e: 'AQAB' }],
    ['missing parameters', { kty: 'EC', crv: 'P-256' }],
    ['a kid that is not a string', jwk(rsa.publicKey, { kid: 7 })],
    ['an issuer that is not a string', jwk(rsa.publicKey, { issuer: ['https://a.example'] })],
    ['an empty issuer', jwk(rsa.publicKey, { issuer: '' })],
    ['not an object', 'key'],
  ])('skips %s', (_what, value) => {
    expect(readJwk(value)).toBeUndefined();
  });

  describe('a key with its own issuer (Entra ID: iss must be it, {tenantid} filled in from tid)', () => {
    const tid = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    const fits = (issuer: string, payload: Record<string, unknown>, served?: readonly string[]) =>
      readJwk(jwk(rsa.publicKey, { issuer }))?.fitsIssuer?.(payload, served && (() => served));

    it('holds an exact issuer to iss exactly', () => {
      const issuer = `https://login.example/${tid}/v2.0`;
      expect(fits(issuer, { iss: issuer })).toBe(true);
      expect(fits(issuer, { iss: `${issuer}/` })).toBe(false);
      expect(fits(issuer, { iss: issuer.replace(tid, tid.toUpperCase()), tid })).toBe(false);
    });

    it.each(['{tenantid}', '{TenantId}'])('fills a template (%s) with a lower-case GUID tid only', (placeholder) => {
      const issuer = `https://login.example/${placeholder}/v2.0`;
      expect(fits(issuer, { iss: `https://login.example/${tid}/v2.0`, tid })).toBe(true);
      expect(fits(issuer, { iss: `https://login.example/${tid}/v2.0` })).toBe(false);
      expect(fits(issuer, { iss: 'https://login.example/contoso/v2.0', tid: 'contoso' })).toBe(false);
      const upper = tid.toUpperCase();
      expect(fits(issuer, { iss: `https://login.example/${upper}/v2.0`, tid: upper })).toBe(false);
      expect(
        fits(issuer, { iss: `https://login.example/${tid}/v2.0`, tid: 'fa15d692-e9c7-4460-a743-29f29522229a' }),
      ).toBe(false);
    });

    describe("Microsoft's second path: the key's issuer, filled in, is one the set serves for the token's tenant", () => {
      const v1 = `https://sts.example/${tid}/`;
      const served = ['https://sts.example/{tenantid}/', 'https://login.example/{tenantid}/v2.0'];

      it('lets a v1.0 token (iss containing its tid) pass a v2.0 key, template or exact', () => {
        expect(fits('https://login.example/{tenantid}/v2.0', { iss: v1, tid }, served)).toBe(true);
        expect(fits(`https://login.example/${tid}/v2.0`, { iss: v1, tid }, served)).toBe(true);
        // The served issuer's placeholder in any case, as the key's.
        expect(
          fits('https://login.example/{tenantid}/v2.0', { iss: v1, tid }, ['https://login.example/{TenantID}/v2.0']),
        ).toBe(true);
      });

      it('refuses without a served issuer that fits, a tenant ID tid, or an iss that contains the tid', () => {
        const key = 'https://login.example/{tenantid}/v2.0';
        expect(fits(key, { iss: v1, tid })).toBe(false);
        expect(fits(key, { iss: v1, tid }, [served[0]])).toBe(false);
        expect(fits(key, { iss: v1, tid: 'fa15d692-e9c7-4460-a743-29f29522229a' }, served)).toBe(false);
        expect(fits(key, { iss: 'https://sts.example/fa15d692-e9c7-4460-a743-29f29522229a/', tid }, served)).toBe(
          false,
        );
        expect(fits(key, { iss: v1.toUpperCase(), tid: tid.toUpperCase() }, served)).toBe(false);
        expect(fits(key, { iss: 'https://sts.example/', tid: undefined }, served)).toBe(false);
        // An exact key needs a tenant ID tid too: a tid of another form never fills a served template.
        const contoso = { iss: 'https://sts.example/contoso/', tid: 'contoso' };
        expect(fits('https://login.example/contoso/v2.0', contoso, served)).toBe(false);
        expect(fits(key, { iss: [v1], tid }, served)).toBe(false);
        // An exact key of another tenant names another tenant, even when its issuer is served as it is.
        const consumers = 'https://login.example/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0';
        expect(fits(consumers, { iss: v1, tid }, [...served, consumers])).toBe(false);
        // An exact key of another tenant: its issuer is no served issuer filled in with this token's tid.
        expect(fits('https://login.example/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0', { iss: v1, tid }, served)).toBe(
          false,
        );
      });
    });

    it('has no rule without an issuer member, and makes the issuer part of the key identity', () => {
      expect(readJwk(jwk(rsa.publicKey))?.fitsIssuer).toBeUndefined();
      expect(readJwk(jwk(rsa.publicKey, { issuer: 'https://a.example' }))?.identity).not.toBe(
        readJwk(jwk(rsa.publicKey, { issuer: 'https://b.example' }))?.identity,
      );
    });
  });
});

describe('parseJwks', () => {
  it('keeps the usable keys and skips the rest without failing the set', () => {
    const keys = parseJwks(
      JSON.stringify({
        keys: [
          jwk(rsa.publicKey, { kid: 'a' }),
          jwk(rsa2.publicKey, { kid: 'b', use: 'enc' }),
          { kty: 'RSA' },
          jwk(ec.publicKey, { kid: 'c' }),
        ],
      }),
    );
    expect(keys.map((k) => k.kid)).toEqual(['a', 'c']);
  });

  it.each([
    ['not JSON', '<html>'],
    ['an array', '[]'],
    ['keys not an array', '{"keys":{}}'],
    ['null', 'null'],
  ])('throws for a document that is %s', (_what, text) => {
    expect(() => parseJwks(text)).toThrow();
  });
});

describe('jwksUri key source', () => {
  beforeEach(() => {
    now = Math.floor(Date.now() / 1000);
  });

  it('verifies RS256 and ES256 tokens by kid, fetching the set once', async () => {
    const server = await jwksServer(() => [
      jwk(rsa.publicKey, { kid: 'rsa-1', alg: 'RS256', use: 'sig' }),
      jwk(ec.publicKey, { kid: 'ec-1' }),
    ]);
    const auth = jwksAuth(server.uri);
    const claims = shapeB(now);
    await expect(auth.verify(sign(claims, rsa.privateKey, 'RS256', { kid: 'rsa-1' }))).resolves.toEqual(claims);
    await expect(auth.verify(sign(shapeB(now), ec.privateKey, 'ES256', { kid: 'ec-1' }))).resolves.toMatchObject({
      iss: ISSUER,
    });
    await expect(auth.verify(rs256('rsa-1'))).resolves.toMatchObject({ aud: AUDIENCE });
    expect(server.requests).toBe(1);
    expect(server.seen[0]).toMatchObject({ method: 'GET', url: '/.well-known/jwks.json' });
  });

  it('finds a rotated key by refetching (createTestIssuer rotate)', async () => {
    const { issuer, auth } = await issuerWithAuth('RS256');
    await auth.verify(issuer.sign());
    expect(issuer.jwksRequests).toBe(1);
    const before = issuer.kid;
    issuer.rotate();
    expect(issuer.kid).not.toBe(before);
    await expect(auth.verify(issuer.sign())).resolves.toMatchObject({ iss: issuer.options.issuer });
    expect(issuer.jwksRequests).toBe(2);
  });

  it('stops serving a cached success once a refetch no longer lists its key (withdrawn key)', async () => {
    const { issuer, auth } = await issuerWithAuth('ES256');
    const old = issuer.sign();
    await auth.verify(old);
    await auth.verify(old);
    expect(auth.stats()).toMatchObject({ hits: 1 });
    issuer.rotate({ retirePrevious: true });
    await auth.verify(issuer.sign()); // unknown kid: the refetch drops the old key
    expect(await failure(auth.verify(old))).toMatchObject({ code: 'invalid_token', reason: 'kid-unknown' });
  });

  it('keeps serving cached successes of a key a refetch still lists', async () => {
    const { issuer, auth } = await issuerWithAuth('ES256');
    const old = issuer.sign();
    await auth.verify(old);
    issuer.rotate({ retirePrevious: false });
    await auth.verify(issuer.sign());
    expect(issuer.jwksRequests).toBe(2);
    await expect(auth.verify(old)).resolves.toMatchObject({ iss: issuer.options.issuer });
    expect(auth.stats()).toMatchObject({ hits: 1 });
  });

  it('refetches for a new kid only once the cooldown has passed, answering invalid_token meanwhile', async () => {
    let published = [jwk(rsa.publicKey, { kid: 'one' })];
    const server = await jwksServer(() => published);
    const auth = jwksAuth(server.uri, { cooldown: '30s' });
    await auth.verify(rs256('one'));
    published = [jwk(rsa.publicKey, { kid: 'one' }), jwk(rsa2.publicKey, { kid: 'two' })];
    now += 10;
    const early = await failure(auth.verify(rs256('two', rsa2.privateKey)));
    expect([early.code, early.status, early.reason]).toEqual(['invalid_token', 401, 'kid-unknown']);
    expect(server.requests).toBe(1);
    now += 21;
    await expect(auth.verify(rs256('two', rsa2.privateKey))).resolves.toMatchObject({ iss: ISSUER });
    expect(server.requests).toBe(2);
  });

  it('shares one fetch among 20 concurrent misses on an unknown kid', async () => {
    const server = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'known' })]);
    const auth = jwksAuth(server.uri, { cooldown: 0 });
    const results = await Promise.all(Array.from({ length: 20 }, () => failure(auth.verify(rs256('unknown')))));
    expect(new Set(results.map((e) => e.code))).toEqual(new Set(['invalid_token']));
    expect(server.requests).toBe(1);
  });

  it('makes at most one fetch per cooldown for a flood of made-up kids', async () => {
    const server = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'known' })]);
    const auth = jwksAuth(server.uri);
    await auth.verify(rs256('known'));
    now += 31;
    for (let i = 0; i < 20; i++) {
      expect((await failure(auth.verify(rs256(`made-up-${i}`)))).code).toBe('invalid_token');
    }
    expect(server.requests).toBe(2);
  });

  it('accepts a token without kid when exactly one usable key exists (enc keys do not count)', async () => {
    const server = await jwksServer(() => [
      jwk(rsa.publicKey, { kid: 'sig' }),
      jwk(rsa2.publicKey, { kid: 'enc', use: 'enc' }),
    ]);
    const auth = jwksAuth(server.uri);
    await expect(auth.verify(rs256(undefined))).resolves.toMatchObject({ iss: ISSUER });
  });

  it('refuses a token without kid when several keys could verify it', async () => {
    const server = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'a' }), jwk(rsa2.publicKey, { kid: 'b' })]);
    const auth = jwksAuth(server.uri);
    const err = await failure(auth.verify(rs256(undefined)));
    expect([err.code, err.status, err.reason]).toEqual(['invalid_token', 401, 'kid-ambiguous']);
  });

  it('never verifies with a key published for encryption', async () => {
    const server = await jwksServer(() => [
      jwk(rsa.publicKey, { kid: 'k', use: 'enc' }),
      jwk(rsa2.publicKey, { kid: 'other' }),
    ]);
    const auth = jwksAuth(server.uri);
    expect((await failure(auth.verify(rs256('k')))).code).toBe('invalid_token');
  });

  it('refuses a key whose own alg differs from the token alg, and an RSA key for ES256', async () => {
    const server = await jwksServer(() => [
      jwk(rsa.publicKey, { kid: 'r', alg: 'RS384' }),
      jwk(rsa2.publicKey, { kid: 'r2' }),
    ]);
    const auth = jwksAuth(server.uri);
    const mismatch = await failure(auth.verify(rs256('r')));
    expect([mismatch.code, mismatch.reason]).toEqual(['invalid_token', 'kid-no-fit']);
    await expect(auth.verify(sign(shapeB(now), rsa.privateKey, 'RS384', { kid: 'r' }))).resolves.toMatchObject({
      iss: ISSUER,
    });
    const confused = await failure(auth.verify(sign(shapeB(now), ec.privateKey, 'ES256', { kid: 'r2' })));
    expect(confused.code).toBe('invalid_token');
    expect(server.requests).toBe(1);
  });

  it('accepts every asymmetric family by default but never HS256', async () => {
    const server = await jwksServer(() => [jwk(ec384.publicKey, { kid: 'p384' }), jwk(rsa.publicKey, { kid: 'r' })]);
    const auth = jwksAuth(server.uri);
    await expect(auth.verify(sign(shapeB(now), ec384.privateKey, 'ES384', { kid: 'p384' }))).resolves.toMatchObject({
      iss: ISSUER,
    });
    await expect(auth.verify(sign(shapeB(now), rsa.privateKey, 'PS256', { kid: 'r' }))).resolves.toMatchObject({
      iss: ISSUER,
    });
    const hmac = await failure(auth.verify(sign(shapeB(now), SECRET, 'HS256', { kid: 'r' })));
    expect([hmac.code, hmac.reason]).toEqual(['invalid_token', 'alg']);
  });

  it('limits accepted algorithms to the algorithms option', async () => {
    const server = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'r' })]);
    const auth = jwksAuth(server.uri, {}, { algorithms: ['RS256'] });
    const ps = await failure(auth.verify(sign(shapeB(now), rsa.privateKey, 'PS256', { kid: 'r' })));
    expect([ps.code, ps.reason]).toEqual(['invalid_token', 'alg']);
    expect(server.requests).toBe(0);
  });

  it('keeps verifying with known keys through an outage after warm-up', async () => {
    const server = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'known' })]);
    const auth = jwksAuth(server.uri, { cooldown: 0 });
    await auth.verify(rs256('known'));
    await server.stop();
    await expect(auth.verify(rs256('known'))).resolves.toMatchObject({ iss: ISSUER });
    const unknown = await failure(auth.verify(rs256('new')));
    expect([unknown.code, unknown.status, unknown.reason]).toEqual(['verification_unavailable', 503, 'jwks-network']);
    await expect(auth.verify(rs256('known'))).resolves.toMatchObject({ iss: ISSUER });
  });

  it('answers 503 with Retry-After when no key can be had at first use, then recovers after the cooldown', async () => {
    const server = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'k' })]);
    await server.stop();
    const auth = jwksAuth(server.uri);
    const token = rs256('k');
    const first = await failure(auth.verify(token));
    expect([first.code, first.status, first.message]).toEqual([
      'verification_unavailable',
      503,
      'Token verification unavailable',
    ]);
    expect(first.headers['Retry-After']).toBe('30');
    expect(first.headers['WWW-Authenticate']).toBeUndefined();

    await server.start();
    now += 10;
    const cooling = await failure(auth.verify(token));
    expect([cooling.code, cooling.headers['Retry-After']]).toEqual(['verification_unavailable', '20']);
    expect(server.requests).toBe(0);

    now += 20;
    await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
    expect(server.requests).toBe(1);
  });

  it('answers 503 when the JWKS server is too slow (timeout)', async () => {
    const server = await jwksServer(() => []);
    server.handler = hang;
    const auth = jwksAuth(server.uri, { timeout: '200ms' });
    const err = await failure(auth.verify(rs256('k')));
    expect([err.code, err.status, err.reason]).toEqual(['verification_unavailable', 503, 'jwks-timeout']);
  });

  it.each<[string, (res: import('node:http').ServerResponse) => void]>([
    ['garbage JSON', (res) => json(res, 200, '{"keys": [')],
    ['HTML', (res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html>login</html>')],
    ['keys not an array', (res) => json(res, 200, { keys: 'none' })],
    ['no usable key', (res) => json(res, 200, { keys: [jwk(rsa.publicKey, { use: 'enc' })] })],
    ['a 500', (res) => json(res, 500, { keys: [jwk(rsa.publicKey, { kid: 'k' })] })],
    ['a 404', (res) => res.writeHead(404).end()],
    ['a redirect', (res) => res.writeHead(302, { Location: '/elsewhere' }).end()],
    [
      'more than 1 MiB',
      (res) => json(res, 200, { keys: [jwk(rsa.publicKey, { kid: 'k', pad: 'x'.repeat(1024 * 1024) })] }),
    ],
    [
      'more than 1 MiB, chunked',
      (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write(`{"keys":[${JSON.stringify(jwk(rsa.publicKey, { kid: 'k' }))}],"pad":"`);
        for (let i = 0; i < 17; i++) res.write('x'.repeat(64 * 1024));
        res.end('"}');
      },
    ],
  ])('answers 503 for %s, never caching it', async (_what, answer) => {
    const server = await jwksServer(() => []);
    server.handler = (_req, res) => answer(res);
    const auth = jwksAuth(server.uri, { cooldown: 0 });
    const token = rs256('k');
    const err = await failure(auth.verify(token));
    expect([err.code, err.status]).toEqual(['verification_unavailable', 503]);
    expect(err.headers['Retry-After']).toMatch(/^[1-9]\d*$/);
    server.handler = (_req, res) => json(res, 200, { keys: [jwk(rsa.publicKey, { kid: 'k' })] });
    await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
  });

  it('keeps the known keys when a refetch brings a broken set', async () => {
    const server = await jwksServer(() => [jwk(rsa.publicKey, { kid: 'k' })]);
    const auth = jwksAuth(server.uri, { cooldown: 0 });
    await auth.verify(rs256('k'));
    server.handler = (_req, res) => json(res, 200, { keys: [] });
    expect((await failure(auth.verify(rs256('other')))).code).toBe('verification_unavailable');
    await expect(auth.verify(rs256('k'))).resolves.toMatchObject({ iss: ISSUER });
    expect(server.requests).toBe(2);
  });

  it('refreshes an old key set in the background, so a withdrawn key stops verifying', async () => {
    let published = [jwk(rsa.publicKey, { kid: 'old' })];
    const server = await jwksServer(() => published);
    const auth = jwksAuth(server.uri);
    await auth.verify(rs256('old'));
    published = [jwk(rsa2.publicKey, { kid: 'new' })];
    now += JWKS_MAX_AGE;
    // The stale set still answers at once; its use starts one refresh.
    await expect(auth.verify(rs256('old'))).resolves.toMatchObject({ iss: ISSUER });
    await until(
      async () =>
        await auth.verify(rs256('old')).then(
          () => false,
          () => true,
        ),
      'the withdrawn key to be dropped',
    );
    expect((await failure(auth.verify(rs256('old')))).code).toBe('invalid_token');
    await expect(auth.verify(rs256('new', rsa2.privateKey))).resolves.toMatchObject({ iss: ISSUER });
    expect(server.requests).toBe(2);
  });

  it('close() aborts a pending fetch with verification_unavailable', async () => {
    const server = await jwksServer(() => []);
    server.handler = hang;
    const auth = jwksAuth(server.uri);
    const pending = failure(auth.verify(rs256('k')));
    await until(() => server.requests === 1, 'the fetch to reach the server');
    auth.close();
    const err = await pending;
    expect([err.code, err.reason]).toEqual(['verification_unavailable', 'jwks-closed']);
    expect((await failure(auth.verify(rs256('k')))).code).toBe('verification_unavailable');
  });
});

describe('hostile and unusual key sets', () => {
  beforeEach(() => {
    now = Math.floor(Date.now() / 1000);
  });

  it('tries each key published under a duplicate kid, in order, a few at most', async () => {
    const named = Array.from({ length: 4 }, () => ecKeys());
    const server = await jwksServer(() => [
      jwk(rsa.publicKey, { kid: 'dup' }),
      jwk(rsa2.publicKey, { kid: 'dup' }),
      ...named.map((k) => jwk(k.publicKey, { kid: 'ec' })),
    ]);
    const auth = jwksAuth(server.uri);
    await expect(auth.verify(rs256('dup', rsa2.privateKey))).resolves.toMatchObject({ iss: ISSUER });
    await expect(auth.verify(rs256('dup', rsa.privateKey))).resolves.toMatchObject({ iss: ISSUER });
    const es256 = (key: KeyObject) => sign(shapeB(now), key, 'ES256', { kid: 'ec' });
    await expect(auth.verify(es256(named[2].privateKey))).resolves.toMatchObject({ iss: ISSUER });
    // The fourth key of one kid is never tried (MAX_KID_CANDIDATES): a set cannot multiply a forgery's cost.
    expect(await failure(auth.verify(es256(named[3].privateKey)))).toMatchObject({
      code: 'invalid_token',
      reason: 'signature',
    });
    expect(server.requests).toBe(1);
  });

  it("under a duplicate kid, tries only the keys whose own issuer fits the token's (iss-key when none does)", async () => {
    const server = await jwksServer(() => [
      jwk(rsa.publicKey, { kid: 'dup', issuer: 'https://elsewhere.example' }),
      jwk(rsa2.publicKey, { kid: 'dup', issuer: ISSUER }),
      jwk(rsa.publicKey, { kid: 'only', issuer: 'https://elsewhere.example' }),
    ]);
    const auth = jwksAuth(server.uri);
    await expect(auth.verify(rs256('dup', rsa2.privateKey))).resolves.toMatchObject({ iss: ISSUER });
    // Signed by the key bound elsewhere: it is not tried, so the one candidate's signature fails.
    expect(await failure(auth.verify(rs256('dup', rsa.privateKey)))).toMatchObject({ reason: 'signature' });
    expect(await failure(auth.verify(rs256('only', rsa.privateKey)))).toMatchObject({
      code: 'invalid_token',
      reason: 'iss-key',
    });
  });

  it(`reads at most ${MAX_JWKS_KEYS} entries of a set`, async () => {
    const server = await jwksServer(() =>
      Array.from({ length: MAX_JWKS_KEYS + 1 }, (_, i) => jwk(ec.publicKey, { kid: `k${i}` })),
    );
    const auth = jwksAuth(server.uri, { cooldown: 0 });
    const es256 = (kid: string) => sign(shapeB(now), ec.privateKey, 'ES256', { kid });
    await expect(auth.verify(es256(`k${MAX_JWKS_KEYS - 1}`))).resolves.toMatchObject({ iss: ISSUER });
    expect(await failure(auth.verify(es256(`k${MAX_JWKS_KEYS}`)))).toMatchObject({
      code: 'invalid_token',
      reason: 'kid-unknown',
    });
  });

  it('carries a set of keys without kid over a refetch in linear time, keeping the handles of keys still published', async () => {
    const many = Array.from({ length: 300 }, () => ecKeys());
    let published = many.map((k) => jwk(k.publicKey));
    const server = await jwksServer(() => published);
    const auth = jwksAuth(server.uri, { cooldown: 0 });
    const lone = ecKeys();
    const token = sign(shapeB(now), lone.privateKey, 'ES256', { kid: 'lone' });
    published = [...published, jwk(lone.publicKey, { kid: 'lone' })];
    await auth.verify(token);
    await auth.verify(token);
    expect(server.requests).toBe(1);
    const equals = jest.spyOn(KeyObject.prototype, 'equals');
    try {
      // The same keys spelled differently (members in another order): a refetch for an unknown kid keeps them all.
      published = published.map((entry) => Object.fromEntries(Object.entries(entry).reverse()));
      expect(await failure(auth.verify(sign(shapeB(now), lone.privateKey, 'ES256', { kid: 'nope' })))).toMatchObject({
        reason: 'kid-unknown',
      });
      expect(server.requests).toBe(2);
      // Before: every new key compared with every old one (45 000 KeyObject.equals calls for these 301 keys).
      expect(equals.mock.calls.length).toBeLessThan(published.length);
    } finally {
      equals.mockRestore();
    }
    const hits = auth.stats().hits;
    await expect(auth.verify(token)).resolves.toMatchObject({ iss: ISSUER });
    expect(auth.stats().hits).toBe(hits + 1);
  });
});

describe('EdDSA from a JWKS', () => {
  it('is in the default algorithms of a JWKS (and so of discovery)', () => {
    expect(JWKS_DEFAULT_ALGORITHMS).toEqual(expect.arrayContaining(['EdDSA', 'Ed25519']));
  });

  it('createTestIssuer signs EdDSA and serves its OKP key as a JWKS', async () => {
    const issuer = await createTestIssuer({ alg: 'EdDSA', jwks: true, issuer: ISSUER, audience: AUDIENCE, clock });
    try {
      const verifier = jwksAuth(issuer.jwksUri as string);
      const signed = issuer.sign();
      expect(JSON.parse(Buffer.from(signed.split('.')[0], 'base64url').toString())).toMatchObject({
        alg: 'EdDSA',
        kid: issuer.kid,
      });
      await expect(verifier.verify(signed)).resolves.toMatchObject({ iss: ISSUER });
    } finally {
      await issuer.close();
    }
  });
});
