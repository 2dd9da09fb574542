// The recipes of docs/recipes.md, each with tokens shaped like its vendor's access tokens. A recipe there uses
// `issuerBaseURL` (discovery); here the same claim options run with `key` and `issuer`, so that only the claim rules
// are under test: 200 for the vendor's access token, the right 401 or 403 for the others.
import type { Express } from 'express';
import request from 'supertest';
import { createTokenAuth, type ScopeRequirementInput, type TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { NOW, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';

const { privateKey, publicKey } = rsaKeys();
const rs256 = (payload: Record<string, unknown>, header: Record<string, unknown> = {}) =>
  sign(payload, privateKey, 'RS256', { kid: 'k1', ...header });
const times = { iat: NOW, exp: NOW + 3600 };

const INVALID = { status: 'error', message: 'Invalid access token' };
const FORBIDDEN = { status: 'error', message: 'Insufficient scope' };

interface Recipe {
  /** The recipe's claim options (what docs/recipes.md passes besides issuerBaseURL). */
  options: Partial<TokenAuthOptions>;
  issuer: string;
  scopes: ScopeRequirementInput;
  /** The vendor's access tokens, answered 200. */
  good: Array<[string, string]>;
  /** Tokens refused with 401 invalid_token. */
  invalid: Array<[string, string]>;
  /** Tokens refused with 403 insufficient_scope. */
  forbidden: Array<[string, string]>;
}

const AUTH0_ISS = 'https://example-tenant.us.auth0.com/';
const auth0 = (overrides: Record<string, unknown> = {}) => ({
  iss: AUTH0_ISS,
  sub: 'auth0|64d1',
  aud: ['https://api.example.com', `${AUTH0_ISS}userinfo`],
  azp: 'spa-client',
  ...times,
  scope: 'openid profile read:messages',
  permissions: ['read:messages'],
  ...overrides,
});

const OKTA_ISS = 'https://dev-123456.okta.com/oauth2/default';
const okta = (overrides: Record<string, unknown> = {}) => ({
  ver: 1,
  jti: 'AT.abc',
  iss: OKTA_ISS,
  aud: 'api://default',
  ...times,
  cid: '0oa1client',
  uid: '00u1user',
  scp: ['openid', 'read:messages'],
  sub: 'user@example.com',
  ...overrides,
});

const KEYCLOAK_ISS = 'https://sso.example.com/realms/demo';
const keycloak = (overrides: Record<string, unknown> = {}) => ({
  ...times,
  jti: 'kc-1',
  iss: KEYCLOAK_ISS,
  aud: 'orders-api',
  sub: 'f1d2',
  typ: 'Bearer',
  azp: 'web-app',
  scope: 'openid profile orders:read',
  realm_access: { roles: ['user'] },
  ...overrides,
});

const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const ENTRA_ISS = `https://login.microsoftonline.com/${TENANT}/v2.0`;
const ENTRA_APP = '6e74172b-be56-4843-9ff4-e66a39bb12e3';
const entra = (overrides: Record<string, unknown> = {}) => ({
  aud: ENTRA_APP,
  iss: ENTRA_ISS,
  ...times,
  nbf: NOW,
  azp: 'c44b4083-3bb0-49c1-b47d-974e53cbdf3c',
  oid: 'a1',
  sub: 'pairwise-sub',
  tid: TENANT,
  ver: '2.0',
  scp: 'Orders.Read User.Read',
  ...overrides,
});

const COGNITO_ISS = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123';
const COGNITO_CLIENT = '3n4b5urk1ft4fl3mg5e62d9ado';
const cognito = (overrides: Record<string, unknown> = {}) => ({
  sub: 'aaaaaaaa-bbbb',
  'cognito:groups': ['admins'],
  iss: COGNITO_ISS,
  client_id: COGNITO_CLIENT,
  origin_jti: 'o1',
  event_id: 'e1',
  token_use: 'access',
  scope: 'aws.cognito.signin.user.admin orders/read',
  auth_time: NOW,
  ...times,
  jti: 'c1',
  username: 'alice',
  ...overrides,
});

const RECIPES: Array<[string, Recipe]> = [
  [
    'Auth0 (access_token profile, RBAC permissions)',
    {
      options: { claims: 'jwt', audience: 'https://api.example.com', scopeClaim: ['permissions', 'scope'] },
      issuer: AUTH0_ISS,
      scopes: ['read:messages'],
      good: [['its access token', rs256(auth0())]],
      invalid: [
        ['an ID token (aud is the client)', rs256({ ...auth0(), aud: 'spa-client', nonce: 'n' })],
        ['a token of another tenant', rs256(auth0({ iss: 'https://other.us.auth0.com/' }))],
      ],
      forbidden: [['a token without the permission', rs256(auth0({ permissions: ['write:messages'] }))]],
    },
  ],
  [
    'Auth0 (rfc9068_profile)',
    {
      options: { claims: 'at+jwt', audience: 'https://api.example.com', scopeClaim: ['permissions', 'scope'] },
      issuer: AUTH0_ISS,
      scopes: ['read:messages'],
      good: [['its access token', rs256({ ...auth0(), client_id: 'spa-client', jti: 'j1' }, { typ: 'at+jwt' })]],
      invalid: [
        ['a token of the access_token profile (typ JWT)', rs256({ ...auth0(), client_id: 'spa-client', jti: 'j1' })],
        ['a token without client_id', rs256({ ...auth0(), jti: 'j1' }, { typ: 'at+jwt' })],
      ],
      forbidden: [
        [
          'a token without the permission',
          rs256({ ...auth0({ permissions: [] }), client_id: 'c', jti: 'j1' }, { typ: 'at+jwt' }),
        ],
      ],
    },
  ],
  [
    'Okta (custom authorization server)',
    {
      options: { claims: 'jwt', audience: 'api://default', scopeClaim: 'scp' },
      issuer: OKTA_ISS,
      scopes: ['read:messages'],
      good: [['its access token', rs256(okta())]],
      invalid: [['a token of the org authorization server', rs256(okta({ iss: 'https://dev-123456.okta.com' }))]],
      forbidden: [
        ['a token without the scope', rs256(okta({ scp: ['openid'] }))],
        ['a token with scope instead of scp', rs256(okta({ scp: undefined, scope: 'read:messages' }))],
      ],
    },
  ],
  [
    'Keycloak',
    {
      options: {
        claims: 'jwt',
        audience: 'orders-api',
        scopeClaim: 'scope',
        validateClaims: (claims) => claims.typ === 'Bearer',
      },
      issuer: KEYCLOAK_ISS,
      scopes: ['orders:read'],
      good: [['its access token', rs256(keycloak())]],
      invalid: [
        ['an ID token (typ ID)', rs256(keycloak({ typ: 'ID' }))],
        ['a token for the account console only', rs256(keycloak({ aud: 'account' }))],
      ],
      forbidden: [['a token without the scope', rs256(keycloak({ scope: 'openid profile' }))]],
    },
  ],
  [
    'Microsoft Entra ID (v2.0 tokens)',
    {
      options: { claims: 'jwt', audience: ENTRA_APP, scopeClaim: ['scp', 'roles'] },
      issuer: ENTRA_ISS,
      scopes: { any: ['Orders.Read', 'Orders.Read.All'] },
      good: [
        ['a delegated token (scp)', rs256(entra())],
        ['an app-only token (roles)', rs256(entra({ scp: undefined, roles: ['Orders.Read.All'] }))],
      ],
      invalid: [
        [
          'a v1.0 token (sts.windows.net issuer)',
          rs256(entra({ iss: `https://sts.windows.net/${TENANT}/`, ver: '1.0' })),
        ],
        ['a token for Microsoft Graph', rs256(entra({ aud: '00000003-0000-0000-c000-000000000000' }))],
      ],
      forbidden: [
        ['a delegated token without the scope', rs256(entra({ scp: 'User.Read' }))],
        ['an app-only token without the role', rs256(entra({ scp: undefined, roles: ['Orders.Write.All'] }))],
      ],
    },
  ],
  [
    'Amazon Cognito',
    {
      options: {
        claims: 'jwt',
        audience: false,
        scopeClaim: 'scope',
        validateClaims: (claims) => claims.token_use === 'access' && claims.client_id === COGNITO_CLIENT,
      },
      issuer: COGNITO_ISS,
      scopes: ['orders/read'],
      good: [['its access token', rs256(cognito())]],
      invalid: [
        [
          'an ID token (token_use id, aud the client)',
          rs256(cognito({ token_use: 'id', client_id: undefined, aud: COGNITO_CLIENT })),
        ],
        ['a token of another app client', rs256(cognito({ client_id: 'another-client' }))],
      ],
      forbidden: [['a token without the scope', rs256(cognito({ scope: 'aws.cognito.signin.user.admin' }))]],
    },
  ],
];

describe.each(EXPRESS_VERSIONS)('vendor recipes through %s', (_name, express) => {
  describe.each(RECIPES)('%s', (_vendor, recipe) => {
    let app: Express;
    beforeAll(() => {
      const auth = createTokenAuth({
        key: { publicKey },
        issuer: recipe.issuer,
        audience: false,
        clock: () => NOW,
        ...recipe.options,
      } as TokenAuthOptions);
      app = express();
      app.get('/orders', auth.requireVerifiedUser(recipe.scopes), (req, res) => {
        res.json({ sub: req.auth?.sub });
      });
    });

    it.each(recipe.good)('answers 200 for %s', async (_case, token) => {
      const res = await request(app).get('/orders').set('Authorization', `Bearer ${token}`).expect(200);
      expect(typeof res.body.sub).toBe('string');
    });

    it.each(recipe.invalid)('answers 401 invalid_token for %s', async (_case, token) => {
      const res = await request(app).get('/orders').set('Authorization', `Bearer ${token}`).expect(401);
      expect(res.body).toEqual(INVALID);
    });

    it.each(recipe.forbidden)('answers 403 insufficient_scope for %s', async (_case, token) => {
      const res = await request(app).get('/orders').set('Authorization', `Bearer ${token}`).expect(403);
      expect(res.body).toEqual(FORBIDDEN);
    });
  });

  describe("the identity service of the seed (claims: 'strict', the default)", () => {
    const auth = createTokenAuth({
      key: { secret: SECRET },
      issuer: 'auth.example.com',
      audience: 'api.example.com',
      clock: () => NOW,
    });
    const app = express();
    app.get('/me', auth.requireVerifiedUser(['identify']), (req, res) => {
      res.json({ id: auth.claims(req).providers.discord?.id });
    });

    it('answers 200 for a Shape B token, and 401 for a token of another shape', async () => {
      await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${sign(shapeB(NOW))}`)
        .expect(200, { id: '80351110224678912' });
      const res = await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${sign({ ...shapeB(NOW), providers: undefined })}`)
        .expect(401);
      expect(res.body).toEqual(INVALID);
      await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${sign(shapeB(NOW, { scopes: ['email'] }))}`)
        .expect(403);
    });
  });
});
