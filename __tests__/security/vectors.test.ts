/**
 * Published test vectors, verified at their own time. Their tokens and keys are copied verbatim from the RFC
 * text (they are the only hard-coded JWTs in this suite, because no one but the RFC authors can regenerate
 * them):
 *
 * - RFC 7515 Appendix A.1 (HS256; the JWK "k" of A.1.1) — which RFC 7519 §3.1 reuses as its example JWT;
 * - RFC 7515 Appendix A.2 (RS256; the public part, "n" and "e", of the RSA JWK of A.2.1);
 * - RFC 7515 Appendix A.3 (ES256; "x" and "y" of the P-256 JWK of A.3.1; the signature is JOSE's raw R || S);
 * - RFC 7519 §6.1, the unsecured JWT (alg "none"), which must never verify.
 *
 * All carry the payload {"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}: no aud, no
 * iat, no Shape B, so they run with `claims: 'jwt'`, `issuer: 'joe'`, `audience: false`, and a clock fixed ten
 * seconds before their exp (2011-03-22T18:43:00Z).
 */
import { createPublicKey } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { expectRefused, getMe, protectedApp, withSegment, type ProtectedApp } from './harness';

const EXP = 1300819380;
const PAYLOAD = { iss: 'joe', exp: EXP, 'http://example.com/is_root': true };
const PAYLOAD_B64 = 'eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ';

/** RFC 7515 A.1 / RFC 7519 §3.1: header {"typ":"JWT",\r\n "alg":"HS256"}. */
const A1_TOKEN = `eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.${PAYLOAD_B64}.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk`;
const A1_KEY = 'AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow';

/** RFC 7515 A.2: header {"alg":"RS256"}. */
const A2_TOKEN =
  `eyJhbGciOiJSUzI1NiJ9.${PAYLOAD_B64}.` +
  'cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t' +
  '1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jz' +
  'DwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw';
const A2_JWK = {
  kty: 'RSA',
  n:
    'ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMs' +
    'D1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdV' +
    'MTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ',
  e: 'AQAB',
};

/** RFC 7515 A.3: header {"alg":"ES256"}. */
const A3_TOKEN = `eyJhbGciOiJFUzI1NiJ9.${PAYLOAD_B64}.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q`;
const A3_JWK = {
  kty: 'EC',
  crv: 'P-256',
  x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
  y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
};

/** RFC 7519 §6.1: header {"alg":"none"}, empty signature. */
const UNSECURED_TOKEN = `eyJhbGciOiJub25lIn0.${PAYLOAD_B64}.`;

const atTheirTime = { issuer: 'joe', audience: false, claims: 'jwt', clock: () => EXP - 10 } as const;

const VECTORS: Array<[string, string, TokenAuthOptions['key']]> = [
  ['RFC 7515 A.1 (HS256), the RFC 7519 §3.1 example', A1_TOKEN, { secret: Buffer.from(A1_KEY, 'base64url') }],
  ['RFC 7515 A.2 (RS256), key as a JWK', A2_TOKEN, { publicKey: A2_JWK }],
  [
    'RFC 7515 A.2 (RS256), key as a PEM',
    A2_TOKEN,
    { publicKey: String(createPublicKey({ key: A2_JWK, format: 'jwk' }).export({ type: 'spki', format: 'pem' })) },
  ],
  ['RFC 7515 A.3 (ES256), key as a JWK', A3_TOKEN, { publicKey: A3_JWK }],
];

describe('published test vectors', () => {
  it('decode to the payload the RFCs print (the copies above are faithful)', () => {
    const text = Buffer.from(PAYLOAD_B64, 'base64url').toString('utf8');
    expect(text).toBe('{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}');
    expect(Buffer.from(A1_TOKEN.split('.')[0], 'base64url').toString('utf8')).toBe('{"typ":"JWT",\r\n "alg":"HS256"}');
  });

  it.each(VECTORS)('%s verifies with verify() and gives the claims exactly as signed', async (_case, token, key) => {
    const auth = createTokenAuth({ key, ...atTheirTime });
    await expect(auth.verify(token)).resolves.toEqual(PAYLOAD);
  });

  it.each(VECTORS)('%s is token_expired at its exp plus the tolerance', async (_case, token, key) => {
    const auth = createTokenAuth({ key, ...atTheirTime, clock: () => EXP + 5 });
    await expect(auth.verify(token)).rejects.toMatchObject({ code: 'token_expired', status: 401 });
  });

  it.each(VECTORS)(
    '%s is refused under the default strict claims (it is not Shape B) and when an audience is required (it has none)',
    async (_case, token, key) => {
      await expect(createTokenAuth({ key, ...atTheirTime, claims: 'strict' }).verify(token)).rejects.toMatchObject({
        code: 'invalid_token',
      });
      await expect(createTokenAuth({ key, ...atTheirTime, audience: 'bob' }).verify(token)).rejects.toMatchObject({
        code: 'invalid_token',
      });
    },
  );

  it('A.1 with a one-character change anywhere is refused', async () => {
    const auth = createTokenAuth({ key: { secret: Buffer.from(A1_KEY, 'base64url') }, ...atTheirTime });
    for (const at of [0, 10, 40, 60, 120, A1_TOKEN.length - 2]) {
      if (A1_TOKEN[at] === '.') continue;
      const changed = A1_TOKEN.slice(0, at) + (A1_TOKEN[at] === 'A' ? 'B' : 'A') + A1_TOKEN.slice(at + 1);
      await expect(auth.verify(changed)).rejects.toMatchObject({ code: 'invalid_token' });
    }
  });

  it('the RFC 7519 §6.1 unsecured JWT never verifies, under any key', async () => {
    for (const [, , key] of VECTORS) {
      await expect(createTokenAuth({ key, ...atTheirTime }).verify(UNSECURED_TOKEN)).rejects.toMatchObject({
        code: 'invalid_token',
      });
    }
  });

  it('A.2 and A.3 signatures are not interchangeable, and A.1 under the A.2 key is key confusion', async () => {
    const rs = createTokenAuth({ key: { publicKey: A2_JWK }, ...atTheirTime });
    await expect(rs.verify(withSegment(A2_TOKEN, 2, A3_TOKEN.split('.')[2]))).rejects.toMatchObject({
      code: 'invalid_token',
    });
    await expect(rs.verify(A1_TOKEN)).rejects.toMatchObject({ code: 'invalid_token' });
  });
});

describe.each(EXPRESS_VERSIONS)('published test vectors through %s', (_name, express) => {
  let apps: ProtectedApp[];
  beforeAll(async () => {
    apps = await Promise.all(VECTORS.map(([, , key]) => protectedApp(express, { key, ...atTheirTime }, [])));
  });
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it.each(VECTORS.map((v, i) => [v[0], v[1], i] as const))(
    '%s answers 200 with the claims on req.auth',
    async (_case, token, index) => {
      const res = await getMe(apps[index].server, `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(PAYLOAD);
    },
  );

  it.each(VECTORS.map((v, i) => [v[0], i] as const))(
    '%s app refuses the RFC 7519 §6.1 unsecured JWT',
    async (_case, index) => {
      await expectRefused(apps[index].server, `Bearer ${UNSECURED_TOKEN}`, 'invalid');
    },
  );
});
