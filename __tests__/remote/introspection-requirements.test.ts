// Route requirements on introspected tokens: an RFC 7662 answer's members are the token's claims, so roles, groups,
// permissions and RFC 9396 authorization_details (§9.2 puts them in introspection answers) are read from it as from
// a JWT. oidc-provider issues opaque tokens whose answers carry them (roles by extraTokenClaims, authorization details
// by its own RFC 9396 feature, asked for in the token request), through Express 4 and 5.
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthError } from '../../lib';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { EXPRESS_VERSIONS } from '../fixtures/express';

const DETAILS = [
  {
    type: 'account_information',
    actions: ['list_accounts', 'read_balances', 'read_transactions'],
    locations: ['https://example.com/accounts'],
  },
];

let as: AuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer({
    introspection: {},
    extraClaims: { roles: ['auditor'], realm_access: { roles: ['reader'] } },
    authorizationDetailsTypes: ['account_information', 'payment_initiation'],
  });
}, 30_000);
afterAll(async () => {
  await as?.close();
});

describe.each(EXPRESS_VERSIONS)('requirements on introspection answers through %s', (_name, express) => {
  const refusals: TokenAuthError[] = [];
  let auth: TokenAuth;
  let app: ReturnType<typeof express>;

  beforeAll(() => {
    auth = createTokenAuth({
      issuerBaseURL: as.issuer,
      audience: as.resource,
      introspection: { clientId: 'rs-basic', clientSecret: as.resourceServerSecret },
      groupClaim: ['realm_access', 'roles'],
      onError: (err) => refusals.push(err),
    });
    app = express();
    const ok = (_req: unknown, res: { json: (body: unknown) => void }) => res.json({});
    app.get('/audit', auth.requireVerifiedUser(['read'], { roles: ['auditor'], groups: ['reader'] }), ok);
    app.get('/admin', auth.requireVerifiedUser(['read'], { roles: ['admin'] }), ok);
    app.get(
      '/balances',
      auth.requireVerifiedUser([], {
        authorizationDetails: {
          type: 'account_information',
          actions: ['read_balances'],
          locations: ['https://example.com/accounts'],
        },
      }),
      ok,
    );
    app.get('/payments', auth.requireVerifiedUser([], { authorizationDetails: { type: 'payment_initiation' } }), ok);
  });
  afterAll(() => auth.close());
  beforeEach(() => {
    refusals.length = 0;
  });

  it('the answer carries the claims: its token is opaque, and its roles and details meet the routes that ask for them', async () => {
    const token = await as.token({ scope: 'read', authorizationDetails: DETAILS });
    expect(token).not.toContain('.');
    const bearer = `Bearer ${token}`;
    expect((await request(app).get('/audit').set('Authorization', bearer)).status).toBe(200);
    expect((await request(app).get('/balances').set('Authorization', bearer)).status).toBe(200);
    const admin = await request(app).get('/admin').set('Authorization', bearer);
    expect(admin.status).toBe(403);
    expect(admin.body).toEqual({ status: 'error', message: 'Forbidden' });
    const payments = await request(app).get('/payments').set('Authorization', bearer);
    expect(payments.status).toBe(403);
    expect(refusals.map((err) => err.reason)).toEqual(['role', 'authorization-details']);
    expect(refusals[1].hint).toMatch(/holds 1 entry, 0 of that type$/);
  });
});
