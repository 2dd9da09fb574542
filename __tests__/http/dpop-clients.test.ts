import request from 'supertest';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { PROOF_CHALLENGE, startDpopClient, type DpopClient, type Proof } from '../fixtures/dpop-client';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { listen, type Listening } from '../fixtures/listen';

// Real parts on both sides: DPoP-bound access tokens issued by oidc-provider 9 (the authorization-server fixture
// with `dpop: true`, client credentials), proofs made by oauth4webapi 3 with a non-extractable WebCrypto key;
// both ESM-only, so spawned.
jest.setTimeout(30_000);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  retried: boolean;
  error?: string;
}

let server: AuthorizationServer;
let client: DpopClient;
let token: string;
/** A token oidc-provider bound to an Ed25519 key of the client: oauth4webapi names its proofs' alg `Ed25519`. */
let edToken: string;

beforeAll(async () => {
  server = await startAuthorizationServer({ dpop: true });
  client = await startDpopClient(server);
  const issued = await client.token();
  expect(issued.tokenType.toLowerCase()).toBe('dpop');
  token = issued.token;
  const ed = await client.token('Ed25519');
  expect(ed.jwk.crv).toBe('Ed25519');
  edToken = ed.token;
});

afterAll(async () => {
  await client?.stop();
  await server?.close();
});

describe.each(EXPRESS_VERSIONS)('oidc-provider tokens and oauth4webapi proofs through %s', (_name, express) => {
  const open: Listening[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  async function serve(dpop: TokenAuthOptions['dpop'] = {}): Promise<string> {
    const auth = createTokenAuth({
      key: { jwksUri: server.jwksUri },
      issuer: server.issuer,
      audience: server.resource,
      algorithms: ['ES256'],
      claims: 'jwt',
      dpop,
    });
    const app = appWith(express, auth, {
      path: '/orders',
      scopes: ['identify'],
      answer: (claims) => ({ client: claims?.client_id }),
    });
    const listening = await listen(app);
    open.push(listening);
    return listening.origin;
  }

  const proofFor = (method: string, url: string, forToken = token) => client.proof(method, url, forToken);
  async function expectRefused(origin: string, proof: Proof) {
    const res = await request(origin).get('/orders').set({ Authorization: proof.authorization, DPoP: proof.dpop });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(PROOF_CHALLENGE);
    expect(res.body).toEqual({ status: 'error', message: 'Invalid DPoP proof' });
  }

  it("accepts the provider's bound token with the library's proof, sent by the library", async () => {
    const origin = await serve();
    const answer = await client.ask<Answer>({ op: 'request', method: 'GET', url: `${origin}/orders`, token });
    expect(answer.error).toBeUndefined();
    expect(answer.retried).toBe(false);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ client: 'dpop-client' });
  });

  it('accepts the library\'s Ed25519 proofs, whose alg is "Ed25519" (RFC 9864), and names it in algs', async () => {
    const origin = await serve();
    const sample = await proofFor('GET', `${origin}/orders`, edToken);
    expect(JSON.parse(Buffer.from(sample.dpop.split('.')[0], 'base64url').toString())).toMatchObject({
      alg: 'Ed25519',
      jwk: { kty: 'OKP', crv: 'Ed25519' },
    });
    await request(origin).get('/orders').set({ Authorization: sample.authorization, DPoP: sample.dpop }).expect(200);
    const answer = await client.ask<Answer>({ op: 'request', method: 'GET', url: `${origin}/orders`, token: edToken });
    expect(answer.error).toBeUndefined();
    expect(answer.status).toBe(200);
    const missing = await request(origin).get('/orders');
    expect(missing.headers['www-authenticate']).toContain(' EdDSA Ed25519"');
  });

  it("accepts Ed25519 wherever EdDSA is accepted: algorithms ['EdDSA'] brings it along", async () => {
    const origin = await serve({ algorithms: ['EdDSA'] });
    const answer = await client.ask<Answer>({ op: 'request', method: 'GET', url: `${origin}/orders`, token: edToken });
    expect(answer.status).toBe(200);
    expect(answer.headers['www-authenticate']).toBeUndefined();
    const missing = await request(origin).get('/orders');
    expect(missing.headers['www-authenticate']).toBe('DPoP realm="api", algs="EdDSA Ed25519", Bearer realm="api"');
  });

  it('serves the library its nonce: use_dpop_nonce first, then 200 on its retry', async () => {
    const origin = await serve({ nonce: { secret: 'a-nonce-secret-of-at-least-32-bytes-long' } });
    const answer = await client.ask<Answer>({ op: 'request', method: 'GET', url: `${origin}/orders`, token });
    expect(answer.retried).toBe(true);
    expect(answer.status).toBe(200);
    expect(answer.headers['dpop-nonce']).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("refuses the provider's bound token presented as Bearer", async () => {
    const origin = await serve();
    const res = await request(origin)
      .get('/orders')
      .set({ Authorization: `Bearer ${token}` });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ status: 'error', message: 'Invalid access token' });
  });

  it("refuses the library's proofs made for another method, host, path, or token, and a replay", async () => {
    const origin = await serve();
    await expectRefused(origin, await proofFor('POST', `${origin}/orders`));
    await expectRefused(origin, await proofFor('GET', `http://localhost:${new URL(origin).port}/orders`));
    await expectRefused(origin, await proofFor('GET', `${origin}/invoices`));
    const [h, p] = token.split('.');
    const other = await proofFor('GET', `${origin}/orders`, `${h}.${p}.x`);
    await expectRefused(origin, { authorization: `DPoP ${token}`, dpop: other.dpop });
    const once = await proofFor('GET', `${origin}/orders`);
    await request(origin).get('/orders').set({ Authorization: once.authorization, DPoP: once.dpop }).expect(200);
    await expectRefused(origin, once);
  });
});
