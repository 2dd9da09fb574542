// Route requirements on tokens shaped as each identity provider issues them (docs/recipes.md cites where each puts
// roles, groups and permissions), through real Express 4 and 5 apps: the option that reads them, a route met and
// one not met, and the hint that says where the values were looked for, never what they were.
import request from 'supertest';
import { createTokenAuth, type RouteOptions, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS, jwtOptions } from '../fixtures/express';
import { jwtToken } from '../fixtures/issuer';

/** Keycloak: realm roles under realm_access.roles, client roles under resource_access.<client>.roles. */
const KEYCLOAK = {
  typ: 'Bearer',
  azp: 'orders-web',
  realm_access: { roles: ['offline_access', 'uma_authorization', 'default-roles-demo', 'admin'] },
  resource_access: { 'orders-api': { roles: ['orders:write'] }, account: { roles: ['manage-account'] } },
  scope: 'openid profile email',
};

/** Entra ID: app roles in `roles`, group object IDs in `groups`. */
const ENTRA = {
  roles: ['Orders.Admin'],
  groups: ['0760b6cf-170e-4a14-91b3-4b78e0739963', '3b2b0c93-acd8-4208-8eba-7a48db1cd4c0'],
  tid: 'bbbbcccc-1111-dddd-2222-eeee3333ffff',
  ver: '2.0',
};

/** Entra ID's groups overage: more groups than a token holds; `groups` is replaced by a distributed claim. */
const ENTRA_OVERAGE = {
  roles: ['Orders.Admin'],
  _claim_names: { groups: 'src1' },
  _claim_sources: { src1: { endpoint: 'https://graph.microsoft.com/v1.0/users/secret-user-id/getMemberObjects' } },
};

/** Auth0: RBAC's `permissions` array, and roles under a namespaced claim set by an Action. */
const AUTH0 = {
  permissions: ['read:orders', 'write:orders'],
  'https://orders.example.com/roles': ['Admin'],
  scope: 'read:orders write:orders',
};

/** Okta (custom authorization server): a `groups` claim the admin adds, filtered to the app's groups. */
const OKTA = { groups: ['Everyone', 'Orders-Admins'], scp: ['orders.read'], cid: '0oa1a2b3c4d5e6f7g8h9' };

/** Cognito: user pool groups in `cognito:groups`. */
const COGNITO = { 'cognito:groups': ['admins'], token_use: 'access', client_id: '1example23456789' };

/** Zitadel: a map of role key → { organization ID: organization domain }. */
const ZITADEL = {
  'urn:zitadel:iam:org:project:roles': {
    admin: { '164849854726292412': 'acme.zitadel.cloud' },
    viewer: { '164849854726292412': 'acme.zitadel.cloud' },
  },
};

const zitadelRoles = (claims: Readonly<Record<string, unknown>>) =>
  Object.keys((claims['urn:zitadel:iam:org:project:roles'] as Record<string, unknown> | undefined) ?? {});

interface Vendor {
  name: string;
  options: Partial<TokenAuthOptions>;
  claims: Record<string, unknown>;
  met: RouteOptions;
  unmet: RouteOptions;
  /** The hint of the unmet route names where the values were read. */
  from: RegExp;
}

const VENDORS: Vendor[] = [
  {
    name: 'Keycloak realm roles',
    options: { roleClaim: ['realm_access', 'roles'] },
    claims: KEYCLOAK,
    met: { roles: ['admin'] },
    unmet: { roles: ['auditor'] },
    from: /read from claim path \["realm_access","roles"\] \(option "roleClaim"\); the token's value is an array of 4 values$/,
  },
  {
    name: 'Keycloak client roles',
    options: { roleClaim: ['resource_access', 'orders-api', 'roles'] },
    claims: KEYCLOAK,
    met: { roles: ['orders:write'] },
    unmet: { roles: ['manage-account'] },
    from: /claim path \["resource_access","orders-api","roles"\]/,
  },
  {
    name: 'Entra ID app roles and groups',
    options: {},
    claims: ENTRA,
    met: { roles: ['Orders.Admin'], groups: { any: ['3b2b0c93-acd8-4208-8eba-7a48db1cd4c0'] } },
    unmet: { groups: ['ffffffff-0000-0000-0000-000000000000'] },
    from: /read from claim "groups" \(option "groupClaim"\); the token's value is an array of 2 values$/,
  },
  {
    name: 'Auth0 permissions (RBAC)',
    options: {},
    claims: AUTH0,
    met: { permissions: ['read:orders', 'write:orders'] },
    unmet: { permissions: ['delete:orders'] },
    from: /read from claim "permissions" \(option "permissionClaim"\)/,
  },
  {
    name: 'Auth0 namespaced roles',
    options: { roleClaim: 'https://orders.example.com/roles' },
    claims: AUTH0,
    met: { roles: ['Admin'] },
    unmet: { roles: ['Owner'] },
    from: /read from claim "https:\/\/orders.example.com\/roles" \(option "roleClaim"\)/,
  },
  {
    name: 'Okta groups',
    options: {},
    claims: OKTA,
    met: { groups: ['Orders-Admins'] },
    unmet: { groups: ['Finance'] },
    from: /read from claim "groups" \(option "groupClaim"\)/,
  },
  {
    name: 'Cognito groups',
    options: { groupClaim: 'cognito:groups' },
    claims: COGNITO,
    met: { groups: ['admins'] },
    unmet: { groups: ['auditors'] },
    from: /read from claim "cognito:groups" \(option "groupClaim"\)/,
  },
  {
    name: "Zitadel's role map",
    options: { roleClaim: zitadelRoles },
    claims: ZITADEL,
    met: { roles: { any: ['admin', 'owner'] } },
    unmet: { roles: ['owner'] },
    from: /read from the option "roleClaim" function; the token's value is an array of 2 values$/,
  },
];

describe.each(EXPRESS_VERSIONS)('tokens shaped as identity providers issue them, through %s', (_name, express) => {
  describe.each(VENDORS)('$name', ({ options, claims, met, unmet, from }) => {
    const refusals: TokenAuthError[] = [];
    const auth = createTokenAuth(jwtOptions(refusals, options));
    const app = express();
    app.get('/met', auth.requireVerifiedUser([], met), (_req, res) => {
      res.json({});
    });
    app.get('/unmet', auth.requireVerifiedUser([], unmet), (_req, res) => {
      res.json({});
    });
    const bearer = `Bearer ${jwtToken({ sub: 'u', ...claims })}`;
    afterAll(() => auth.close());

    it('meets the route that asks for what it carries, and not the other; the hint says where it looked', async () => {
      expect((await request(app).get('/met').set('Authorization', bearer)).status).toBe(200);
      const res = await request(app).get('/unmet').set('Authorization', bearer);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ status: 'error', message: 'Forbidden' });
      expect(refusals).toHaveLength(1);
      expect(refusals[0].hint).toMatch(from);
    });
  });

  it("Entra ID's groups overage: no groups to grant, 403, and the hint says the groups are elsewhere", async () => {
    const refusals: TokenAuthError[] = [];
    const auth = createTokenAuth(jwtOptions(refusals));
    const app = express();
    app.get(
      '/g',
      auth.requireVerifiedUser([], { roles: ['Orders.Admin'], groups: ['0760b6cf-170e-4a14-91b3-4b78e0739963'] }),
      (_req, res) => {
        res.json({});
      },
    );
    const token = jwtToken(ENTRA_OVERAGE);
    const res = await request(app).get('/g').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(403);
    expect(refusals.map((err) => err.reason)).toEqual(['group']);
    expect(refusals[0].hint).toMatch(/the token has no claim "groups", but "_claim_names" names it/);
    expect(refusals[0].hint).toMatch(/groups overage/);
    expect(refusals[0].hint).not.toMatch(/secret-user-id|graph\.microsoft/);
    auth.close();
  });
});
