// express-verified-user/edge through real Express 4 and 5 apps, against loopback stand-ins that serve each vendor's
// documented formats (fixtures/edge-proxies.ts): each preset's header → 200 with the claims; the same token as
// Authorization → 401; another aud, iss, signer, client or algorithm → 401; combined options take effect.
import { generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, TokenAuthError, type TokenAuthOptions } from '../../lib';
import { awsAlb, cloudflareAccess, googleIap } from '../../lib/edge';
import { appWith, EXPRESS_VERSIONS, type ExpressFactory } from '../fixtures/express';
import {
  ALB_ARN,
  ALB_CLIENT,
  ALB_ISSUER,
  startAwsAlb,
  startCloudflareAccess,
  startGoogleIap,
  type AlbStandIn,
  type CloudflareStandIn,
  type IapStandIn,
} from '../fixtures/edge-proxies';
import { sign } from '../fixtures/issuer';

const MISSING = { status: 'error', message: 'Missing access token' };

/** The hint of a request without the proxy's header: that header, who alone sets it, and no Authorization or getToken. */
function expectProxyHint(err: TokenAuthError, header: string, proxy: string, preset: string): void {
  expect(err.hint).toBe(
    `expected header ${header}, which only ${proxy} sets, on the requests it lets through (the ${preset} preset reads no other header, Authorization included): this request did not come through the proxy, or the proxy does not cover this path`,
  );
  expect(err.hint).not.toMatch(/getToken|"Bearer <token>"/);
}
const INVALID = { status: 'error', message: 'Invalid access token' };

/** A TokenAuth from `options` whose refusals are recorded, and an app around it. */
function recorded(express: ExpressFactory, options: TokenAuthOptions) {
  const refusals: TokenAuthError[] = [];
  const auth = createTokenAuth({ ...options, onError: (err) => refusals.push(err) } as TokenAuthOptions);
  return { app: appWith(express, auth), auth, refusals, reasons: () => refusals.map((err) => err.reason) };
}

describe.each(EXPRESS_VERSIONS)('cloudflareAccess (%s)', (_name, express) => {
  let cf: CloudflareStandIn;
  beforeAll(async () => {
    cf = await startCloudflareAccess();
  });
  afterAll(() => cf.close());

  const preset = () => cloudflareAccess({ teamDomain: cf.teamDomain, audience: cf.aud });
  const get = (app: ReturnType<typeof recorded>['app'], token: string, header = 'Cf-Access-Jwt-Assertion') =>
    request(app).get('/me').set(header, token);

  it('answers 200 with the claims for the application token in Cf-Access-Jwt-Assertion, signed by either listed key', async () => {
    const { app, auth } = recorded(express, preset());
    const token = cf.mint();
    const res = await get(app, token).expect(200);
    expect(res.body).toMatchObject({ aud: [cf.aud], iss: cf.teamDomain, email: 'user@example.com', type: 'app' });
    // The previous key of the two in `keys` (public_cert names only the current one; it is not read).
    const previous = cf.mint({}, { key: cf.previousKey, header: { kid: cf.previousKid } });
    await get(app, previous).expect(200);
    // A service token: sub empty, no email.
    const service = cf.mint({ sub: '', email: undefined, nbf: undefined, common_name: `${'a'.repeat(32)}.access` });
    await get(app, service).expect(200);
    auth.close();
  });

  it('with jwksUri, takes the keys from that server and still requires iss to be the team domain', async () => {
    const team = 'https://acme.cloudflareaccess.com';
    const jwksUri = `${cf.teamDomain}/cdn-cgi/access/certs`;
    const { app, auth, reasons } = recorded(express, cloudflareAccess({ teamDomain: team, audience: cf.aud, jwksUri }));
    const res = await get(app, cf.mint({ iss: team })).expect(200);
    expect(res.body).toMatchObject({ iss: team, aud: [cf.aud] });
    await get(app, cf.mint()).expect(401);
    expect(reasons()).toEqual(['iss']);
    auth.close();
  });

  it('answers 401 missing_token for the same token as Authorization: Bearer (its own header only)', async () => {
    const { app, auth, refusals } = recorded(express, preset());
    const res = await get(app, `Bearer ${cf.mint()}`, 'Authorization').expect(401);
    expect(res.body).toEqual(MISSING);
    expect(refusals.map((err) => err.code)).toEqual(['missing_token']);
    expectProxyHint(refusals[0], 'Cf-Access-Jwt-Assertion', 'Cloudflare Access', 'cloudflareAccess');
    auth.close();
  });

  it("answers 401 for another application's aud, an iss with a trailing slash, RS384, and an HS256 key confusion", async () => {
    const { app, auth, reasons } = recorded(express, preset());
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const secret = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    for (const token of [
      cf.mint({ aud: ['b'.repeat(64)] }),
      cf.mint({ iss: `${cf.teamDomain}/` }),
      cf.mint({}, { alg: 'RS384', header: { alg: 'RS384' } }),
      sign({ aud: [cf.aud], iss: cf.teamDomain, exp: Math.floor(Date.now() / 1000) + 60 }, secret, 'HS256', {
        kid: cf.currentKid,
      }),
    ]) {
      expect((await get(app, token).expect(401)).body).toEqual(INVALID);
    }
    expect(reasons()).toEqual(['aud', 'iss', 'alg', 'alg']);
    auth.close();
  });

  it('combines with other options: requiredClaims refuses the service token, onError sees it, cache: false still verifies', async () => {
    const { app, auth, reasons } = recorded(express, { ...preset(), requiredClaims: ['email'], cache: false });
    await get(app, cf.mint()).expect(200);
    await get(app, cf.mint({ sub: '', email: undefined })).expect(401);
    expect(reasons()).toEqual(['required:email']);
    expect(auth.stats().size).toBe(0);
    auth.close();
  });
});

describe.each(EXPRESS_VERSIONS)('googleIap (%s)', (_name, express) => {
  let iap: IapStandIn;
  beforeAll(async () => {
    iap = await startGoogleIap();
  });
  afterAll(() => iap.close());

  const preset = () => googleIap({ audience: iap.audience, jwksUri: iap.jwksUri });
  const get = (app: ReturnType<typeof recorded>['app'], token: string, header = 'x-goog-iap-jwt-assertion') =>
    request(app).get('/me').set(header, token);

  it('answers 200 with the claims for the assertion in x-goog-iap-jwt-assertion', async () => {
    const { app, auth } = recorded(express, preset());
    const res = await get(app, iap.mint()).expect(200);
    expect(res.body).toMatchObject({
      aud: iap.audience,
      iss: 'https://cloud.google.com/iap',
      email: 'user@example.com',
      google: { access_levels: ['accessPolicies/1/accessLevels/corp'] },
    });
    auth.close();
  });

  it('answers 401 missing_token for the same token as Authorization: Bearer', async () => {
    const { app, auth, refusals } = recorded(express, preset());
    expect((await get(app, `Bearer ${iap.mint()}`, 'Authorization').expect(401)).body).toEqual(MISSING);
    expectProxyHint(refusals[0], 'x-goog-iap-jwt-assertion', 'Google Cloud IAP', 'googleIap');
    auth.close();
  });

  it("answers 401 for another backend's aud, Google's sign-in issuer, and RS256", async () => {
    const { app, auth, reasons } = recorded(express, preset());
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    for (const token of [
      iap.mint({ aud: '/projects/123456/global/backendServices/790' }),
      iap.mint({ iss: 'https://accounts.google.com' }),
      iap.mint({}, { alg: 'RS256', key: rsa.privateKey, header: { alg: 'RS256' } }),
    ]) {
      expect((await get(app, token).expect(401)).body).toEqual(INVALID);
    }
    expect(reasons()).toEqual(['aud', 'iss', 'alg']);
    auth.close();
  });

  it('combines with validateClaims: a token of another hosted domain is refused', async () => {
    const { app, auth, reasons } = recorded(express, {
      ...preset(),
      validateClaims: (claims) => claims.hd === 'example.com',
    });
    await get(app, iap.mint()).expect(200);
    await get(app, iap.mint({ hd: 'elsewhere.example' })).expect(401);
    expect(reasons()).toEqual(['validate']);
    auth.close();
  });
});

describe.each(EXPRESS_VERSIONS)('awsAlb (%s)', (_name, express) => {
  let alb: AlbStandIn;
  beforeEach(async () => {
    alb = await startAwsAlb();
  });
  afterEach(() => alb.close());

  const preset = (clientId: string | null = ALB_CLIENT) =>
    awsAlb({ signer: ALB_ARN, clientId, issuer: ALB_ISSUER, keysBaseURL: alb.keysBaseURL });
  const get = (app: ReturnType<typeof recorded>['app'], token: string, header = 'x-amzn-oidc-data') =>
    request(app).get('/me').set(header, token);

  it('answers 200 with the claims for the padded assertion in x-amzn-oidc-data, its key fetched once by kid', async () => {
    const { app, auth } = recorded(express, preset());
    const token = alb.mint();
    expect(token.split('.')[2]).toMatch(/==$/); // the ALB's padding, as sent
    const res = await get(app, token).expect(200);
    expect(res.body).toMatchObject({ sub: '6f7c2a3e-8d1b', email: 'user@example.com', iss: ALB_ISSUER });
    for (let i = 0; i < 3; i++) await get(app, alb.mint({ username: `user-${i}` })).expect(200);
    expect(alb.fetches(`/${alb.kid}`)).toBe(1);
    expect(alb.fetches()).toBe(1);
    auth.close();
  });

  it('fetches a new kid once for concurrent first requests', async () => {
    const { app, auth } = recorded(express, preset());
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => get(app, alb.mint({ username: `user-${i}` }))),
    );
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(alb.fetches()).toBe(1);
    auth.close();
  });

  it('answers 401 missing_token for the same token as Authorization: Bearer', async () => {
    const { app, auth, refusals } = recorded(express, preset());
    expect((await get(app, `Bearer ${alb.mint()}`, 'Authorization').expect(401)).body).toEqual(MISSING);
    expectProxyHint(refusals[0], 'x-amzn-oidc-data', "an AWS ALB's authenticate action", 'awsAlb');
    auth.close();
  });

  it('answers 401 for another signer, client or issuer before fetching any key, with hints naming the configuration', async () => {
    const { app, auth, refusals } = recorded(express, preset());
    const otherArn = ALB_ARN.replace('my-alb', 'other-alb');
    for (const token of [
      alb.mint({}, { header: { signer: otherArn } }),
      alb.mint({}, { header: { signer: undefined } }),
      alb.mint({}, { header: { client: 'billing' } }),
      alb.mint({}, { header: { iss: 'https://idp.example.org' } }),
    ]) {
      expect((await get(app, token).expect(401)).body).toEqual(INVALID);
    }
    expect(refusals.map((err) => err.reason)).toEqual(['signer', 'signer', 'client', 'iss']);
    expect(refusals[0].hint).toBe(`expected signer "${ALB_ARN}", from awsAlb option "signer"`);
    expect(refusals[2].hint).toBe(`expected client "${ALB_CLIENT}", from awsAlb option "clientId"`);
    expect(refusals[3].hint).toContain(`expected iss "${ALB_ISSUER}"`);
    expect(alb.fetches()).toBe(0);
    auth.close();
  });

  it('leaves client unchecked with clientId: null, on purpose', async () => {
    const { app, auth } = recorded(express, preset(null));
    await get(app, alb.mint({}, { header: { client: 'billing' } })).expect(200);
    auth.close();
  });

  it('answers 401 for claims of another issuer, RS256, HS256, and a key the server serves under another kid', async () => {
    const { app, auth, reasons } = recorded(express, preset());
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    for (const token of [
      alb.mint({ iss: 'https://idp.example.org' }),
      alb.mint({}, { alg: 'RS256', key: rsa.privateKey, header: { alg: 'RS256' } }),
      alb.mint({}, { alg: 'HS256', key: Buffer.from('s'.repeat(32)), header: { alg: 'HS256' } }),
      alb.mint({}, { key: alb.otherKey }),
    ]) {
      expect((await get(app, token).expect(401)).body).toEqual(INVALID);
    }
    expect(reasons()).toEqual(['iss', 'alg', 'alg', 'signature']);
    auth.close();
  });

  it('verifies the signature over the bytes as received: padded segments signed unpadded, or wrong padding, are 401', async () => {
    const { app, auth, reasons } = recorded(express, preset());
    await get(app, alb.mint({}, { signOver: 'unpadded' })).expect(401);
    // Padding that is not what the length needs: one `=` too many on the signature.
    await get(app, `${alb.mint()}=`).expect(401);
    // The forms never mix: padded header and payload with the signature's padding taken off.
    // Of three payloads one byte apart, at least two need padding.
    const mixed = ['a', 'ab', 'abc'].map((username) => alb.mint({ username })).find((t) => /=\./.test(t));
    await get(app, (mixed ?? '').replace(/=+$/, '')).expect(401);
    expect(reasons()).toEqual(['signature', 'signature-encoding', 'signature-encoding']);
    auth.close();
  });

  it('accepts the standard unpadded form too (the day the ALB drops the padding), its signature over those bytes', async () => {
    const { app, auth } = recorded(express, preset());
    const token = alb.mint({}, { padded: false });
    expect(token).not.toContain('=');
    const res = await get(app, token).expect(200);
    expect(res.body).toMatchObject({ sub: '6f7c2a3e-8d1b', iss: ALB_ISSUER });
    await get(app, alb.mint()).expect(200);
    expect(alb.fetches()).toBe(1);
    auth.close();
  });

  it('answers 401 kid-unknown for a UUID the key server does not know (403), after one fetch', async () => {
    const { app, auth, reasons } = recorded(express, preset());
    const kid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    await get(app, alb.mint({}, { header: { kid } })).expect(401);
    expect(reasons()).toEqual(['kid-unknown']);
    expect(alb.fetches(`/${kid}`)).toBe(1);
    auth.close();
  });

  it('refuses padding everywhere else: the padded assertion under a plain createTokenAuth is 401, its unpadded twin 200', async () => {
    const plain: TokenAuthOptions = {
      key: { publicKey: alb.publicKeyPem },
      algorithms: ['ES256'],
      issuer: ALB_ISSUER,
      audience: false,
      claims: 'jwt',
    };
    const fromHeader = recorded(express, { ...plain, getToken: (req) => req.get('x-amzn-oidc-data') });
    await get(fromHeader.app, alb.mint({}, { padded: false })).expect(200);
    await get(fromHeader.app, alb.mint()).expect(401);
    const bearer = recorded(express, plain);
    await get(bearer.app, `Bearer ${alb.mint()}`, 'Authorization').expect(401);
    await expect(bearer.auth.verify(alb.mint())).rejects.toMatchObject({ code: 'invalid_token', reason: 'syntax' });
    expect([...fromHeader.reasons(), ...bearer.reasons()]).toEqual(['syntax', 'syntax', 'syntax']);
    fromHeader.auth.close();
    bearer.auth.close();
  });
});
