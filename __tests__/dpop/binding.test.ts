// `htu` against the configured `resource` (RFC 9449 §4.3 (9), RFC 9728): with a resource, a proof must name the
// resource's origin, whatever Host the request claims; through real Express apps, proofs by the testing holder.
import express5 from 'express';
import request from 'supertest';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { createTestIssuer, type TestIssuer } from '../../lib/testing';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { listen, type Listening } from '../fixtures/listen';

const RESOURCE = 'https://api.example.test';
const PROOF_BODY = { status: 'error', message: 'Invalid DPoP proof' };

let issuer: TestIssuer;
beforeAll(async () => {
  issuer = await createTestIssuer({ dpop: true, alg: 'ES256' });
});
afterAll(() => issuer.close());

describe.each(EXPRESS_VERSIONS)('DPoP htu with a configured resource, through %s', (_name, express) => {
  const open: Listening[] = [];
  const reasons: string[] = [];
  afterEach(async () => {
    reasons.splice(0);
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  async function serve(options: Partial<TokenAuthOptions>, mount = ''): Promise<Listening> {
    const auth = createTokenAuth({
      ...issuer.options,
      dpop: {},
      onError: (err) => void reasons.push(String(err.reason)),
      ...options,
    });
    const app = express();
    const router = express5.Router();
    router.get('/me', auth.requireVerifiedUser(), (_req, res) => {
      res.json({ ok: true });
    });
    app.use(mount === '' ? '/' : mount, router);
    const listening = await listen(app);
    open.push(listening);
    return listening;
  }

  /** GET `path` on `origin` with a fresh proof for `htu`, and `host` as the request's Host header. */
  function call(origin: string, path: string, htu: string, host?: string) {
    const token = issuer.sign();
    const proof = issuer.holder!.proof({ method: 'GET', url: htu, token });
    const req = request(origin)
      .get(path)
      .set({ Authorization: `DPoP ${token}`, DPoP: proof });
    return host === undefined ? req : req.set('Host', host);
  }

  it("refuses a proof made for another deployment replayed with a forged Host: the resource's origin decides", async () => {
    const { origin } = await serve({ resource: RESOURCE });
    // This app listens on plain http, so the other deployment's proof names http: only its Host differs.
    const res = await call(origin, '/me', 'http://other.example.test/me', 'other.example.test');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(PROOF_BODY);
    expect(res.headers['www-authenticate']).toContain('error="invalid_dpop_proof"');
    expect(reasons).toEqual(['dpop:htu']);
  });

  it("accepts a proof for the resource's URL, whatever Host the request came with", async () => {
    const { origin } = await serve({ resource: RESOURCE });
    expect((await call(origin, '/me', `${RESOURCE}/me`)).status).toBe(200);
    expect((await call(origin, '/me', 'HTTPS://API.example.test:443/./me', 'internal.local:8080')).status).toBe(200);
  });

  it('keeps the path: the mount path counts, another path or port of the resource does not pass', async () => {
    const { origin } = await serve({ resource: `${RESOURCE}/v1` }, '/v1');
    expect((await call(origin, '/v1/me', `${RESOURCE}/v1/me`)).status).toBe(200);
    expect((await call(origin, '/v1/me', `${RESOURCE}/me`)).status).toBe(401);
    expect((await call(origin, '/v1/me', 'https://api.example.test:8443/v1/me')).status).toBe(401);
    expect((await call(origin, '/v1/me', 'http://api.example.test/v1/me')).status).toBe(401);
    expect(reasons).toEqual(['dpop:htu', 'dpop:htu', 'dpop:htu']);
  });

  it('without a resource, still compares with the request (Host, and trust proxy for X-Forwarded-*)', async () => {
    const { origin } = await serve({});
    expect((await call(origin, '/me', `${origin}/me`)).status).toBe(200);
    expect((await call(origin, '/me', 'http://other.example.test/me', 'other.example.test')).status).toBe(200);
    expect((await call(origin, '/me', `${RESOURCE}/me`)).status).toBe(401);
  });
});
