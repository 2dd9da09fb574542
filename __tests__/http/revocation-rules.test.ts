/**
 * Subject and session rules (createMemoryRevocationStore; docs/fleet.md#subject-and-session-rules) through real
 * Express 4 and 5 apps: the 401 a refused token gets and the reason onError sees, and opaque tokens introspected at
 * a real oidc-provider refused by the same rules (through a loopback proxy that gives its answers a user, with and
 * without `iss`).
 */
import request from 'supertest';
import {
  createMemoryRevocationStore,
  createTokenAuth,
  type MemoryRevocationStore,
  type TokenAuth,
  type TokenAuthError,
  type TokenAuthOptions,
} from '../../lib';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { forwardIntrospection } from '../fixtures/introspection-proxy';
import { AUDIENCE, ISSUER, SECRET, sign } from '../fixtures/issuer';
import { startLoopbackServer } from '../fixtures/loopback-server';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const INVALID = { status: 'error', message: 'Invalid access token' };
const opened: TokenAuth[] = [];
let as: AuthorizationServer;

beforeAll(async () => {
  as = await startAuthorizationServer({ introspection: {} });
}, 30_000);

afterAll(async () => {
  await as?.close();
});

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

function tokenAuth(options: Partial<TokenAuthOptions>, errors: TokenAuthError[]): TokenAuth {
  const auth = createTokenAuth({
    maxLifetime: '1h',
    onError: (err) => errors.push(err),
    ...options,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

const now = () => Math.floor(Date.now() / 1000);
const jwt = (claims: Record<string, unknown>) =>
  sign({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', iat: now() - 60, exp: now() + 600, ...claims });

describe.each(EXPRESS_VERSIONS)('subject and session rules through %s', (_name, express) => {
  let store: MemoryRevocationStore;
  const errors: TokenAuthError[] = [];
  const app = () =>
    appWith(
      express,
      tokenAuth(
        { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, claims: 'jwt', revocation: store },
        errors,
      ),
    );

  beforeEach(() => {
    store = createMemoryRevocationStore();
    errors.length = 0;
  });

  it('answers 401 invalid_token to a revoked subject (onError: subject-revoked), 200 to the others', async () => {
    const server = app();
    await store.revokeSubject({ iss: ISSUER, sub: 'alice' });
    const refused = await request(server)
      .get('/me')
      .set(bearer(jwt({})));
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(INVALID);
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Invalid access token"',
    );
    expect(errors.map((e) => e.reason)).toEqual(['subject-revoked']);
    expect(errors[0].hint).toMatch(/option "revocation".*option "maxLifetime"/);
    expect(
      (
        await request(server)
          .get('/me')
          .set(bearer(jwt({ sub: 'bob' })))
      ).status,
    ).toBe(200);
    expect(
      (
        await request(server)
          .get('/me')
          .set(bearer(jwt({ iat: now() + 1 })))
      ).status,
    ).toBe(200);
  });

  it('answers 401 invalid_token to a token of a revoked session (onError: session-revoked)', async () => {
    const server = app();
    await store.revokeSession({ iss: ISSUER, sid: 'session-1', sub: 'alice' });
    for (const claims of [{ sid: 'session-1' }, {}]) {
      const refused = await request(server)
        .get('/me')
        .set(bearer(jwt(claims)));
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual(INVALID);
    }
    expect(errors.map((e) => e.reason)).toEqual(['session-revoked', 'session-revoked']);
    expect(
      (
        await request(server)
          .get('/me')
          .set(bearer(jwt({ sid: 'session-2' })))
      ).status,
    ).toBe(200);
  });

  it.each([
    ['names its user and iss', (answer: Record<string, unknown>) => ({ ...answer, sub: 'svc-user' })],
    [
      'names its user, and no iss (the AS is its issuer)',
      ({ iss: _iss, ...answer }: Record<string, unknown>) => ({
        ...answer,
        sub: 'svc-user',
      }),
    ],
  ])('refuses an introspected token whose answer %s, by a subject rule of its issuer', async (_case, alter) => {
    const proxy = await startLoopbackServer((req, res) =>
      forwardIntrospection(req, res, `${as.issuer}/token/introspection`, (answer) => ({
        ...answer,
        body: JSON.stringify(alter(JSON.parse(answer.body) as Record<string, unknown>)),
      })),
    );
    try {
      const auth = tokenAuth(
        {
          issuerBaseURL: as.issuer,
          audience: as.resource,
          introspection: {
            clientId: 'rs-plain',
            clientSecret: as.resourceServerSecret,
            endpoint: `${proxy.origin}/token/introspection`,
          },
          revocation: store,
        },
        errors,
      );
      const server = appWith(express, auth);
      const token = await as.token();
      const accepted = await request(server).get('/me').set(bearer(token));
      expect(accepted.status).toBe(200);
      expect(accepted.body).toMatchObject({ iss: as.issuer, sub: 'svc-user' });
      await store.revokeSubject({ iss: as.issuer, sub: 'svc-user' });
      // The verdict is cached: the rule is checked after the cache, on every request.
      const refused = await request(server).get('/me').set(bearer(token));
      expect(refused.status).toBe(401);
      expect(errors.map((e) => e.reason)).toEqual(['subject-revoked']);
    } finally {
      await proxy.close();
    }
  });
});
