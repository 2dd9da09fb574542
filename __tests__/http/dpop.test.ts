import type { Express } from 'express';
import { createHmac } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { createMemoryReplayStore, type ReplayStore } from '../../lib/dpop/replay';
import { createDpopHolder, createTestIssuer, type DpopHolder, type TestIssuer } from '../../lib/testing';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { listen, type Listening } from '../fixtures/listen';

const ALGS = 'ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA Ed25519';
const PROOF_CHALLENGE = `DPoP realm="api", algs="${ALGS}", error="invalid_dpop_proof", error_description="Invalid DPoP proof", Bearer realm="api"`;
const PROOF_BODY = { status: 'error', message: 'Invalid DPoP proof' };
const NONCE_SECRET = 'a-nonce-secret-of-at-least-32-bytes-long';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const parts = (jws: string) => {
  const [h, p] = jws.split('.');
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString()),
    payload: JSON.parse(Buffer.from(p, 'base64url').toString()),
  };
};

describe.each(EXPRESS_VERSIONS)('DPoP-bound tokens through %s', (_name, express) => {
  let now = Math.floor(Date.now() / 1000);
  const clock = () => now;
  let issuer: TestIssuer;
  let holder: DpopHolder;
  const servers: Listening[] = [];

  beforeAll(async () => {
    issuer = await createTestIssuer({ dpop: true, alg: 'ES256', clock });
    holder = issuer.holder!;
  });
  beforeEach(() => {
    now = Math.floor(Date.now() / 1000);
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function serve(
    options: Partial<TokenAuthOptions> = {},
    configure?: (app: Express) => void,
  ): Promise<{ origin: string; auth: ReturnType<typeof createTokenAuth> }> {
    const auth = createTokenAuth({ ...issuer.options, clock, ...options });
    const app = express();
    configure?.(app);
    app.get('/me', auth.requireVerifiedUser(['identify']), (req, res) => {
      res.json({ jti: req.auth?.jti });
    });
    app.post('/items', auth.requireVerifiedUser(), (_req, res) => {
      res.status(201).json({ ok: true });
    });
    const listening = await listen(app);
    servers.push(listening);
    return { origin: listening.origin, auth };
  }

  const dpopHeaders = (token: string, proof: string) => ({ Authorization: `DPoP ${token}`, DPoP: proof });

  async function expectProofRefused(origin: string, headers: Record<string, string | string[]>, path = '/me') {
    const res = await request(origin).get(path).set(headers);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(PROOF_CHALLENGE);
    expect(res.body).toEqual(PROOF_BODY);
  }

  describe('accepting', () => {
    it('accepts a bound token with a proof for this method and URL, the scheme in any case', async () => {
      const { origin } = await serve({ dpop: {} });
      const token = issuer.sign();
      await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })))
        .expect(200);
      const res = await request(origin)
        .get('/me?page=2')
        .set({ Authorization: `dpop ${token}`, DPoP: holder.proof({ method: 'GET', url: `${origin}/me`, token }) });
      expect(res.status).toBe(200);
      await request(origin)
        .post('/items')
        .set(dpopHeaders(token, holder.proof({ method: 'POST', url: `${origin}/items`, token })))
        .expect(201);
    });

    it('accepts an htu that differs only by RFC 3986 normalisation', async () => {
      const { origin } = await serve({ dpop: {} });
      const token = issuer.sign();
      const proof = holder.proof({
        method: 'GET',
        url: `${origin}/me`,
        token,
        claims: { htu: `${origin.toUpperCase()}/./x/../%6De` },
      });
      await request(origin).get('/me').set(dpopHeaders(token, proof)).expect(200);
    });

    it('ignores a query or fragment in htu (RFC 9449 §4.3 (9))', async () => {
      const { origin } = await serve({ dpop: {} });
      const token = issuer.sign();
      for (const htu of [`${origin}/me?page=2`, `${origin}/me#top`, `${origin}/me?page=2#top`]) {
        await request(origin)
          .get('/me?page=2')
          .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token, claims: { htu } })))
          .expect(200);
      }
    });

    it('accepts EdDSA, RS256 and PS256 proofs', async () => {
      const { origin } = await serve({ dpop: {} });
      for (const alg of ['EdDSA', 'RS256', 'PS256'] as const) {
        const other = createDpopHolder(alg, clock);
        const token = issuer.sign({ cnf: { jkt: other.jkt } });
        await request(origin)
          .get('/me')
          .set(dpopHeaders(token, other.proof({ method: 'GET', url: `${origin}/me`, token })))
          .expect(200);
      }
    });

    it('still accepts plain Bearer tokens without cnf when DPoP is on but not required', async () => {
      const { origin } = await serve({ dpop: {} });
      await request(origin)
        .get('/me')
        .set({ Authorization: `Bearer ${issuer.sign({ cnf: undefined })}` })
        .expect(200);
    });

    it('checks the proof on every request while the token verdict is served from the cache', async () => {
      const { origin, auth } = await serve({ dpop: {} });
      const token = issuer.sign();
      const proof = holder.proof({ method: 'GET', url: `${origin}/me`, token });
      await request(origin).get('/me').set(dpopHeaders(token, proof)).expect(200);
      // The verdict enters the cache on the token's second sighting (the admission rule); the third is a hit.
      for (let i = 0; i < 2; i++) {
        await request(origin)
          .get('/me')
          .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })))
          .expect(200);
      }
      expect(auth.stats().hits).toBe(1);
      await expectProofRefused(origin, dpopHeaders(token, proof));
      expect(auth.stats().hits).toBe(2);
    });
  });

  describe('modes', () => {
    it('answers 401 invalid_token to a DPoP-bound token presented as Bearer (RFC 9449 §7.2)', async () => {
      const { origin } = await serve({ dpop: {} });
      const res = await request(origin)
        .get('/me')
        .set({ Authorization: `Bearer ${issuer.sign()}` });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", Bearer realm="api", error="invalid_token", error_description="Invalid access token"`,
      );
    });

    it("challenges each request by its own scheme, even when the token's fault is answered from the cache", async () => {
      const { origin } = await serve({ dpop: {} });
      const forged = `${issuer.sign().slice(0, -4)}AAAA`;
      const viaDpop = await request(origin)
        .get('/me')
        .set(dpopHeaders(forged, holder.proof({ method: 'GET', url: `${origin}/me`, token: forged })));
      expect(viaDpop.status).toBe(401);
      expect(viaDpop.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", error="invalid_token", error_description="Invalid access token", Bearer realm="api"`,
      );
      const viaBearer = await request(origin)
        .get('/me')
        .set({ Authorization: `Bearer ${forged}` });
      expect(viaBearer.status).toBe(401);
      expect(viaBearer.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", Bearer realm="api", error="invalid_token", error_description="Invalid access token"`,
      );
    });

    it('refuses a token read by getToken without DPoP when required: true', async () => {
      const { origin } = await serve({ dpop: { required: true }, getToken: (req) => req.get('x-token') });
      const res = await request(origin)
        .get('/me')
        .set({ 'x-token': issuer.sign({ cnf: undefined }) });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", error="invalid_token", error_description="Invalid access token"`,
      );
    });

    it('keeps the DPoP challenge for a token whose fault verify() met first (the cached fault is never changed)', async () => {
      const { origin, auth } = await serve({ dpop: { required: true } });
      const forged = `${issuer.sign().slice(0, -4)}AAAA`;
      await expect(auth.verify(forged)).rejects.toMatchObject({ code: 'invalid_token' });
      const res = await request(origin)
        .get('/me')
        .set(dpopHeaders(forged, holder.proof({ method: 'GET', url: `${origin}/me`, token: forged })));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", error="invalid_token", error_description="Invalid access token"`,
      );
    });

    it('refuses Bearer altogether with required: true, and challenges with DPoP only', async () => {
      const { origin } = await serve({ dpop: { required: true } });
      const res = await request(origin)
        .get('/me')
        .set({ Authorization: `Bearer ${issuer.sign({ cnf: undefined })}` });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", error="invalid_token", error_description="Invalid access token"`,
      );
      const missing = await request(origin).get('/me');
      expect(missing.headers['www-authenticate']).toBe(`DPoP realm="api", algs="${ALGS}"`);
    });

    it('offers both challenges when no token is sent', async () => {
      const { origin } = await serve({ dpop: {} });
      const res = await request(origin).get('/me').expect(401);
      expect(res.headers['www-authenticate']).toBe(`DPoP realm="api", algs="${ALGS}", Bearer realm="api"`);
      expect(res.body).toEqual({ status: 'error', message: 'Missing access token' });
    });

    it('treats the DPoP scheme as a missing token when dpop is not configured', async () => {
      const { origin } = await serve({ dpop: undefined });
      const token = issuer.sign();
      const res = await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
      expect(res.body).toEqual({ status: 'error', message: 'Missing access token' });
    });

    it('refuses the DPoP scheme for a token that is not DPoP-bound', async () => {
      const { origin } = await serve({ dpop: {} });
      const token = issuer.sign({ cnf: undefined });
      const res = await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })));
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(
        `DPoP realm="api", algs="${ALGS}", error="invalid_token", error_description="Invalid access token", Bearer realm="api"`,
      );
    });
  });

  it('answers 403 insufficient_scope in the DPoP challenge to a DPoP request lacking a scope', async () => {
    const { origin } = await serve({ dpop: {} });
    const token = issuer.sign({ scopes: ['email'] });
    const res = await request(origin)
      .get('/me')
      .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })));
    expect(res.status).toBe(403);
    expect(res.headers['www-authenticate']).toBe(
      `DPoP realm="api", algs="${ALGS}", error="insufficient_scope", error_description="Insufficient scope", scope="identify", Bearer realm="api"`,
    );
  });

  describe('refusing a proof (RFC 9449 §4.3), one check broken at a time', () => {
    let origin: string;
    let token: string;
    const url = () => `${origin}/me`;
    const good = (extra: Partial<Parameters<DpopHolder['proof']>[0]> = {}) =>
      holder.proof({ method: 'GET', url: url(), token, ...extra });
    beforeEach(async () => {
      ({ origin } = await serve({ dpop: {} }));
      token = issuer.sign();
    });

    it('without a DPoP header', () => expectProofRefused(origin, { Authorization: `DPoP ${token}` }));
    it('with two DPoP headers', () =>
      expectProofRefused(origin, { Authorization: `DPoP ${token}`, DPoP: [good(), good()] }));
    it('with typ JWT', () => expectProofRefused(origin, dpopHeaders(token, good({ header: { typ: 'JWT' } }))));
    it('with another method (htm)', () => expectProofRefused(origin, dpopHeaders(token, good({ method: 'POST' }))));
    it('with another host in htu', () =>
      expectProofRefused(origin, dpopHeaders(token, good({ claims: { htu: 'http://other.example/me' } }))));
    it('with another path in htu', () =>
      expectProofRefused(origin, dpopHeaders(token, good({ claims: { htu: `${origin}/you` } }))));
    it('with userinfo in htu', () =>
      expectProofRefused(
        origin,
        dpopHeaders(token, good({ claims: { htu: origin.replace('//', '//user@') + '/me' } })),
      ));
    it('with another path in htu, a query beside it', () =>
      expectProofRefused(origin, dpopHeaders(token, good({ claims: { htu: `${origin}/you?page=2` } }))));
    it('with iat before the window', () =>
      expectProofRefused(origin, dpopHeaders(token, good({ claims: { iat: now - 61 } }))));
    it('with iat in the future', () =>
      expectProofRefused(origin, dpopHeaders(token, good({ claims: { iat: now + 30 } }))));
    it('with ath of another token', () =>
      expectProofRefused(origin, dpopHeaders(token, good({ token: issuer.sign() }))));
    it('without ath', () => expectProofRefused(origin, dpopHeaders(token, good({ claims: { ath: undefined } }))));
    it('without jti', () => expectProofRefused(origin, dpopHeaders(token, good({ claims: { jti: undefined } }))));
    it('made by a key the token is not bound to (cnf.jkt)', () => {
      const stranger = createDpopHolder('ES256', clock);
      return expectProofRefused(origin, dpopHeaders(token, stranger.proof({ method: 'GET', url: url(), token })));
    });
    it('whose jwk holds private members', () => {
      const withPrivate = { ...holder.publicJwk, d: 'AAAA' };
      return expectProofRefused(origin, dpopHeaders(token, good({ header: { jwk: withPrivate } })));
    });
    it('signed by another key than its jwk', () => {
      const stranger = createDpopHolder('ES256', clock);
      const forged = stranger.proof({ method: 'GET', url: url(), token, header: { jwk: holder.publicJwk } });
      return expectProofRefused(origin, dpopHeaders(token, forged));
    });
    it('whose signature was made over other content (its jwk known from an earlier proof)', async () => {
      await request(origin).get('/me').set(dpopHeaders(token, good())).expect(200);
      const [h, , sig] = good().split('.');
      const { payload } = parts(good());
      return expectProofRefused(origin, dpopHeaders(token, `${h}.${b64({ ...payload, jti: 'another' })}.${sig}`));
    });
    it('with alg none', () => {
      const { payload } = parts(good());
      const unsigned = `${b64({ typ: 'dpop+jwt', alg: 'none', jwk: holder.publicJwk })}.${b64(payload)}.AAAA`;
      return expectProofRefused(origin, dpopHeaders(token, unsigned));
    });
    it('with alg HS256, keyed by the public key text', () => {
      const { payload } = parts(good());
      const input = `${b64({ typ: 'dpop+jwt', alg: 'HS256', jwk: holder.publicJwk })}.${b64(payload)}`;
      const mac = createHmac('sha256', JSON.stringify(holder.publicJwk)).update(input).digest('base64url');
      return expectProofRefused(origin, dpopHeaders(token, `${input}.${mac}`));
    });
    it('replayed (the same jti twice)', async () => {
      const proof = good();
      await request(origin).get('/me').set(dpopHeaders(token, proof)).expect(200);
      await expectProofRefused(origin, dpopHeaders(token, proof));
    });
  });

  describe('behind a proxy', () => {
    const forged = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'api.example.com' };

    it('builds htu from X-Forwarded-Proto and -Host when trust proxy is on', async () => {
      const { origin } = await serve({ dpop: {} }, (app) => app.set('trust proxy', 'loopback'));
      const token = issuer.sign();
      const proof = holder.proof({ method: 'GET', url: 'https://api.example.com/me', token });
      await request(origin)
        .get('/me')
        .set({ ...dpopHeaders(token, proof), ...forged })
        .expect(200);
      await expectProofRefused(origin, {
        ...dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })),
        ...forged,
      });
    });

    it('ignores forged X-Forwarded-Proto and -Host when trust proxy is off', async () => {
      const { origin } = await serve({ dpop: {} });
      const token = issuer.sign();
      await expectProofRefused(origin, {
        ...dpopHeaders(token, holder.proof({ method: 'GET', url: 'https://api.example.com/me', token })),
        ...forged,
      });
      const proof = holder.proof({ method: 'GET', url: `${origin}/me`, token });
      await request(origin)
        .get('/me')
        .set({ ...dpopHeaders(token, proof), ...forged })
        .expect(200);
    });
  });

  describe('nonces (RFC 9449 §9)', () => {
    const nonceChallenge = `DPoP realm="api", algs="${ALGS}", error="use_dpop_nonce", error_description="DPoP nonce required", Bearer realm="api"`;

    it('answers use_dpop_nonce with a DPoP-Nonce, then accepts a proof carrying it and hands out the next one', async () => {
      const { origin } = await serve({ dpop: { nonce: { secret: NONCE_SECRET, lifetime: '1m' } } });
      const token = issuer.sign();
      const first = await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })));
      expect(first.status).toBe(401);
      expect(first.headers['www-authenticate']).toBe(nonceChallenge);
      expect(first.body).toEqual({ status: 'error', message: 'DPoP nonce required' });
      const nonce = first.headers['dpop-nonce'];
      expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const ok = await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token, nonce })));
      expect(ok.status).toBe(200);
      expect(ok.headers['dpop-nonce']).toBe(nonce);
    });

    it('refuses a nonce made under another secret, and one from a window before the previous', async () => {
      const { origin } = await serve({ dpop: { nonce: { secret: NONCE_SECRET, lifetime: 60 } } });
      const elsewhere = await serve({ dpop: { nonce: { secret: `${NONCE_SECRET}-other`, lifetime: 60 } } });
      const token = issuer.sign();
      const foreign = (
        await request(elsewhere.origin)
          .get('/me')
          .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${elsewhere.origin}/me`, token })))
      ).headers['dpop-nonce'];
      const refused = await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token, nonce: foreign })));
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe(nonceChallenge);

      const nonce = refused.headers['dpop-nonce'];
      now += 60; // the previous window: still accepted
      await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token, nonce })))
        .expect(200);
      now += 60; // two windows on: refused
      const stale = await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token, nonce })));
      expect(stale.status).toBe(401);
      expect(stale.headers['www-authenticate']).toBe(nonceChallenge);
      expect(stale.headers['dpop-nonce']).not.toBe(nonce);
    });

    it("lets two instances sharing the secret accept each other's nonces", async () => {
      const a = await serve({ dpop: { nonce: { secret: NONCE_SECRET } } });
      const b = await serve({ dpop: { nonce: { secret: NONCE_SECRET } } });
      const token = issuer.sign();
      const nonce = (
        await request(a.origin)
          .get('/me')
          .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${a.origin}/me`, token })))
      ).headers['dpop-nonce'];
      await request(b.origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${b.origin}/me`, token, nonce })))
        .expect(200);
    });
  });

  describe('the replay store', () => {
    it('is asked once per proof with a 43-character id that lives until iat + iatWindow + clockTolerance, and the key', async () => {
      const calls: Array<[string, number, string | undefined]> = [];
      const inner = createMemoryReplayStore();
      const store: ReplayStore = {
        claimOnce: (id, expiresAt, jkt) => (calls.push([id, expiresAt, jkt]), inner.claimOnce(id, expiresAt, jkt)),
      };
      const { origin } = await serve({ dpop: { replay: store, iatWindow: '30s' }, clockTolerance: '7s' });
      const token = issuer.sign();
      await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })))
        .expect(200);
      expect(calls).toEqual([[expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), now + 37, holder.jkt]]);
    });

    it('refuses a replay at exactly iat + iatWindow, the last second the proof is accepted', async () => {
      const { origin } = await serve({
        dpop: { iatWindow: '30s', replay: createMemoryReplayStore({ clock }) },
        clockTolerance: 0,
      });
      const token = issuer.sign({ exp: now + 300 });
      const proof = holder.proof({ method: 'GET', url: `${origin}/me`, token });
      await request(origin).get('/me').set(dpopHeaders(token, proof)).expect(200);
      now += 30;
      await expectProofRefused(origin, dpopHeaders(token, proof));
      now += 1;
      await expectProofRefused(origin, dpopHeaders(token, proof)); // now refused by iat
    });

    it("keeps time by the TokenAuth's clock: with clock 120 s behind, a proof is accepted once only", async () => {
      now = Math.floor(Date.now() / 1000) - 120;
      const { origin } = await serve({ dpop: {} });
      const token = issuer.sign();
      const proof = holder.proof({ method: 'GET', url: `${origin}/me`, token });
      await request(origin).get('/me').set(dpopHeaders(token, proof)).expect(200);
      await expectProofRefused(origin, dpopHeaders(token, proof));
      await expectProofRefused(origin, dpopHeaders(token, proof));
    });

    it('gives one proof key only its share: a key flooding a store of 1 000 gets 503 after 100, others keep 200', async () => {
      const reasons = new Set<string | undefined>();
      const { origin } = await serve({
        dpop: { replay: createMemoryReplayStore({ max: 1000, clock }) },
        onError: (err) => reasons.add(err.reason),
      });
      const token = issuer.sign();
      const other = createDpopHolder('ES256', clock);
      const otherToken = issuer.sign({ cnf: { jkt: other.jkt } });
      const statuses: number[] = [];
      for (let sent = 0; sent < 1000; sent += 50) {
        const batch = Array.from({ length: 50 }, () =>
          request(origin)
            .get('/me')
            .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token }))),
        );
        statuses.push(...(await Promise.all(batch)).map((res) => res.status));
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(100);
      expect(statuses.filter((status) => status === 503)).toHaveLength(900);
      const refused = await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })));
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
      expect(refused.headers['retry-after']).toBe('5');
      expect([...reasons]).toEqual(['dpop:replay-share']);
      for (let i = 0; i < 20; i++) {
        await request(origin)
          .get('/me')
          .set(dpopHeaders(otherToken, other.proof({ method: 'GET', url: `${origin}/me`, token: otherToken })))
          .expect(200);
      }
      // Its share comes back as its proofs expire (iat + iatWindow + clockTolerance, then one second on).
      now += 66;
      await request(origin)
        .get('/me')
        .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })))
        .expect(200);
    });

    it('keeps serving a fresh key while ten keys flood a store of 1 000: the flooders get 503 past their share', async () => {
      const reasons = new Set<string | undefined>();
      const { origin } = await serve({
        dpop: { replay: createMemoryReplayStore({ max: 1000, clock }) },
        onError: (err) => reasons.add(err.reason),
      });
      const flooders = Array.from({ length: 10 }, () => {
        const key = createDpopHolder('ES256', clock);
        return { key, token: issuer.sign({ cnf: { jkt: key.jkt } }), ok: 0, refused: 0 };
      });
      const send = (key: DpopHolder, token: string) =>
        request(origin)
          .get('/me')
          .set(dpopHeaders(token, key.proof({ method: 'GET', url: `${origin}/me`, token })));
      // Rounds of 25 proofs a key, all keys at once, until every key is refused (at most 8 rounds: 200 a key).
      for (let round = 0; round < 8 && flooders.some((f) => f.refused === 0); round++) {
        await Promise.all(
          flooders.map(async (f) => {
            for (const res of await Promise.all(Array.from({ length: 25 }, () => send(f.key, f.token)))) {
              if (res.status === 200) f.ok++;
              else if (res.status === 503) f.refused++;
            }
          }),
        );
      }
      const fresh = createDpopHolder('ES256', clock);
      const freshToken = issuer.sign({ cnf: { jkt: fresh.jkt } });
      for (let i = 0; i < 20; i++) expect((await send(fresh, freshToken)).status).toBe(200);
      for (const f of flooders) {
        expect(f.refused).toBeGreaterThan(0);
        expect(f.ok).toBeLessThan(100); // under maxPerKey: the shrinking share refused them first
      }
      expect([...reasons]).toEqual(['dpop:replay-share']);
      expect((await send(flooders[0].key, flooders[0].token)).status).toBe(503);
    });

    it('answers 503 when the store throws or rejects', async () => {
      for (const claimOnce of [
        () => {
          throw new Error('down');
        },
        () => Promise.reject(new Error('down')),
      ]) {
        const { origin } = await serve({ dpop: { replay: { claimOnce } } });
        const token = issuer.sign();
        const res = await request(origin)
          .get('/me')
          .set(dpopHeaders(token, holder.proof({ method: 'GET', url: `${origin}/me`, token })));
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
      }
    });

    it('refuses a replay through an asynchronous store', async () => {
      const inner = createMemoryReplayStore();
      const { origin } = await serve({ dpop: { replay: { claimOnce: async (id, at) => inner.claimOnce(id, at) } } });
      const token = issuer.sign();
      const proof = holder.proof({ method: 'GET', url: `${origin}/me`, token });
      await request(origin).get('/me').set(dpopHeaders(token, proof)).expect(200);
      await expectProofRefused(origin, dpopHeaders(token, proof));
    });
  });
});
