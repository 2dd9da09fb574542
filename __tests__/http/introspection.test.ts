/**
 * Opaque tokens (RFC 7662 introspection; docs/introspection.md) through real Express 4 and 5 apps, against a real
 * oidc-provider 9 (opaque access tokens, JWTs for `jwtResource`): the introspected claims on req.auth, the route's
 * scopes, a hostile client's JWT of the issuer spelt with stray b64token characters, never introspected
 * (remote/dispatch.ts), plain JSON answers to a client not registered for signed ones (`introspection.signed`), and
 * answers about a token that is no access token (`token_type`). Calls are counted at the provider.
 */
import type { Express } from 'express';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import {
  introspectionsDuring,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../fixtures/authorization-server';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { forwardIntrospection } from '../fixtures/introspection-proxy';
import { startLoopbackServer } from '../fixtures/loopback-server';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

let as: AuthorizationServer;
const opened: TokenAuth[] = [];

beforeAll(async () => {
  as = await startAuthorizationServer({ introspection: {} });
}, 30_000);

afterAll(async () => {
  await as?.close();
});

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

function introspecting(overrides: Partial<TokenAuthOptions> = {}): TokenAuth {
  const auth = createTokenAuth({
    issuerBaseURL: as.issuer,
    audience: [as.resource, as.jwtResource],
    introspection: { clientId: 'rs-basic', clientSecret: as.resourceServerSecret },
    ...overrides,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

/** How many introspection requests `run` cost at the provider. */
const callsDuring = (run: () => Promise<unknown>) => introspectionsDuring(as, run);

/**
 * Another kind of JWT the provider signs: its RFC 9701 signed introspection answer about `token` (header `typ`
 * `token-introspection+jwt`, `iss` the provider), asked for directly as the resource server `rs-post`.
 */
async function signedAnswer(token: string): Promise<string> {
  const answer = await fetch(`${as.issuer}/token/introspection`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/token-introspection+jwt' },
    body: new URLSearchParams({ token, client_id: 'rs-post', client_secret: as.resourceServerSecret }),
  });
  const text = await answer.text();
  if (answer.status !== 200 || text.split('.').length !== 3)
    throw new Error(`introspection endpoint answered ${answer.status}`);
  return text;
}

const part = (jwt: string, i: number) =>
  JSON.parse(Buffer.from(jwt.split('.')[i], 'base64url').toString()) as Record<string, unknown>;

/** GET /read and GET /write, each behind its scope, answering req.auth. */
function readAndWrite(app: Express, auth: TokenAuth): void {
  app.get('/read', auth.requireVerifiedUser(['read']), (req, res) => res.json(req.auth));
  app.get('/write', auth.requireVerifiedUser(['write']), (req, res) => res.json(req.auth));
}

describe.each(EXPRESS_VERSIONS)('an opaque token through %s', (_name, express) => {
  const app = (auth: TokenAuth) => appWith(express, auth, { routes: readAndWrite });

  it('answers 200 with the introspected claims (all but active)', async () => {
    const token = await as.token({ scope: 'read' });
    const response = await request(app(introspecting())).get('/read').set(bearer(token));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      iss: as.issuer,
      aud: as.resource,
      client_id: as.clientId,
      scope: 'read',
      token_type: 'Bearer',
    });
    expect(response.body).not.toHaveProperty('active');
    expect(typeof response.body.exp).toBe('number');
  });

  it("answers 403 insufficient_scope when the introspected scope lacks the route's", async () => {
    const token = await as.token({ scope: 'read' });
    const response = await request(app(introspecting())).get('/write').set(bearer(token));
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(response.headers['www-authenticate']).toContain('scope="write"');
  });

  it('answers 401 invalid_token for a token the provider does not know', async () => {
    const errors: TokenAuthError[] = [];
    const response = await request(app(introspecting({ onError: (err) => errors.push(err) })))
      .get('/read')
      .set(bearer('made~up+opaque/token'));
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(errors.map((e) => e.reason)).toEqual(['introspection-inactive']);
  });
});

describe.each(EXPRESS_VERSIONS)('answers to a client not registered for signed ones, through %s', (_name, express) => {
  const app = (auth: TokenAuth) => appWith(express, auth, { routes: readAndWrite });
  const plain = (signed?: 'required') =>
    introspecting({ introspection: { clientId: 'rs-plain', clientSecret: as.resourceServerSecret, signed } });

  it("answers 200 with the provider's plain JSON answer ('preferred', the default)", async () => {
    const response = await request(app(plain()))
      .get('/read')
      .set(bearer(await as.token()));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ aud: as.resource, scope: 'read', token_type: 'Bearer' });
  });

  it("answers 503 with Retry-After under signed: 'required'", async () => {
    const response = await request(app(plain('required')))
      .get('/read')
      .set(bearer(await as.token()));
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ status: 'error', message: 'Token verification unavailable' });
    expect(response.headers['retry-after']).toBe('5');
  });

  it.each(['refresh_token', 'id_token', 'urn:ietf:params:oauth:token-type:refresh_token'])(
    'answers 401 invalid_token for an answer whose token_type is %s (no access token)',
    async (tokenType) => {
      const proxy = await startLoopbackServer((req, res) =>
        forwardIntrospection(req, res, `${as.issuer}/token/introspection`, (answer) => ({
          ...answer,
          body: JSON.stringify({ ...JSON.parse(answer.body), token_type: tokenType }),
        })),
      );
      try {
        const errors: TokenAuthError[] = [];
        const auth = introspecting({
          onError: (err) => errors.push(err),
          introspection: {
            clientId: 'rs-plain',
            clientSecret: as.resourceServerSecret,
            endpoint: `${proxy.origin}/token/introspection`,
          },
        });
        const response = await request(app(auth))
          .get('/read')
          .set(bearer(await as.token()));
        expect(response.status).toBe(401);
        expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
        expect(errors.map((e) => e.reason)).toEqual(['introspection-token-type']);
      } finally {
        await proxy.close();
      }
    },
  );
});

describe.each(EXPRESS_VERSIONS)(
  "a JWT of the issuer with stray b64token characters, through %s (introspect: 'opaque')",
  (_name, express) => {
    const app = (auth: TokenAuth) => appWith(express, auth, { routes: readAndWrite });

    it.each([
      ['=', (jwt: string) => `${jwt}=`],
      ['==', (jwt: string) => `${jwt}==`],
      ['~', (jwt: string) => `${jwt}~`],
      ['~~', (jwt: string) => `${jwt}~~`],
      ['+/', (jwt: string) => `${jwt}+/`],
      // Extra dots: a parser that drops empty segments reads the same JWT.
      ['a trailing dot', (jwt: string) => `${jwt}.`],
      ['two trailing dots', (jwt: string) => `${jwt}..`],
      ['a leading dot', (jwt: string) => `.${jwt}`],
      ['a doubled dot', (jwt: string) => jwt.replace('.', '..')],
    ])("refuses another kind of the provider's JWTs with %s: 401, and no introspection", async (_case, spell) => {
      const other = await signedAnswer(await as.token());
      expect(part(other, 0).typ).toBe('token-introspection+jwt');
      expect(part(other, 1).iss).toBe(as.issuer);
      const auth = introspecting({ typ: 'at+jwt' });
      const calls = await callsDuring(async () => {
        const response = await request(app(auth))
          .get('/read')
          .set('Authorization', `Bearer ${spell(other)}`);
        expect(response.status).toBe(401);
        expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
      });
      expect(calls).toBe(0);
    });

    it.each([
      ['~ inside its payload', (h: string, p: string, sig: string) => `${h}.${p.slice(0, 8)}~${p.slice(8)}.${sig}`],
      // Base64url decoders drop the padding, so this one would even pass its signature check: one token, two spellings.
      ['== after its signature', (h: string, p: string, sig: string) => `${h}.${p}.${sig}==`],
    ])("refuses the provider's own access-token JWT spelt with %s: 401, with no call", async (_case, spell) => {
      const jwt = await as.token({ resource: as.jwtResource });
      const auth = introspecting();
      const [header, payload, signature] = jwt.split('.');
      const calls = await callsDuring(async () => {
        expect(
          (
            await request(app(auth))
              .get('/read')
              .set('Authorization', `Bearer ${spell(header, payload, signature)}`)
          ).status,
        ).toBe(401);
        // The token as issued is still good, locally.
        expect((await request(app(auth)).get('/read').set('Authorization', `Bearer ${jwt}`)).status).toBe(200);
      });
      expect(calls).toBe(0);
    });

    it('still introspects an opaque token, and a JWT naming another issuer', async () => {
      const auth = introspecting();
      const opaque = await as.token();
      const foreign =
        [
          { alg: 'RS256', typ: 'at+jwt' },
          { iss: 'https://other-issuer.example.test', sub: 'x' },
        ]
          .map((value) => Buffer.from(JSON.stringify(value)).toString('base64url'))
          .join('.') + '.c2lnbmF0dXJl=';
      const calls = await callsDuring(async () => {
        expect((await request(app(auth)).get('/read').set('Authorization', `Bearer ${opaque}`)).status).toBe(200);
        expect((await request(app(auth)).get('/read').set('Authorization', `Bearer ${foreign}`)).status).toBe(401);
      });
      expect(calls).toBe(2);
    });
  },
);
