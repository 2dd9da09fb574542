// Route requirements refused when the route is built: every malformed one is an OptionError naming its dotted path
// (for requireVerifiedUser's second argument and for requireMcpAuth's per-tool form), and the options that say where
// roles, groups and permissions are read are checked at createTokenAuth.
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { requireMcpAuth } from '../../lib/mcp';
import { optionErrorOf } from '../fixtures/option-error';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';

const options: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, claims: 'jwt' };
const auth = createTokenAuth(options);
afterAll(() => auth.close());

const route = (requirement: unknown) => () =>
  auth.requireVerifiedUser([], requirement as Parameters<typeof auth.requireVerifiedUser>[1]);

describe('requireVerifiedUser refuses a malformed requirement when the route is built', () => {
  it.each<[string, unknown]>([
    ['roles', 'admin'],
    ['roles', []],
    ['roles[1]', ['admin', 7]],
    ['roles[0]', ['']],
    ['roles.all', { all: [] as string[] }],
    ['roles.all', { all: 'admin' }],
    ['roles.any[1]', { any: ['a', null] }],
    ['roles', {}],
    ['roles.some', { some: ['a'] }],
    ['permissions[0]', [{ value: 'p' }]],
    ['groups.any', { any: [] as string[] }],
  ])('%s', (path, value) => {
    const field = path.split(/[.[]/)[0];
    expect(optionErrorOf(route({ [field]: value })).option).toBe(path);
  });

  it.each<[string, unknown]>([
    ['claims', 'tid'],
    ['claims', {}],
    ['claims', ['tid']],
    ['claims.tid', { value: 't' }],
    ['claims.tid', null],
    ['claims.tid', Number.NaN],
    ['claims.tid', []],
    ['claims.tid[1]', ['t', { t: 1 }]],
    ['claims.level', Number.POSITIVE_INFINITY],
  ])('%s', (path, value) => {
    const claims = path === 'claims' ? value : { [path.split(/[.[]/)[1]]: value };
    expect(optionErrorOf(route({ claims })).option).toBe(path);
  });

  it.each<[string, unknown]>([
    ['authorizationDetails', 'payment_initiation'],
    ['authorizationDetails', []],
    ['authorizationDetails.type', {}],
    ['authorizationDetails.type', { type: '' }],
    ['authorizationDetails[1].type', [{ type: 'a' }, { actions: ['x'] }]],
    ['authorizationDetails[0].actions', [{ type: 'a', actions: 'initiate' }]],
    ['authorizationDetails.locations', { type: 'a', locations: [] }],
    ['authorizationDetails.datatypes', { type: 'a', datatypes: [1] }],
    ['authorizationDetails.privileges', { type: 'a', privileges: [''] }],
    ['authorizationDetails.identifier', { type: 'a', identifier: 42 }],
    ['authorizationDetails.instructedAmount', { type: 'payment_initiation', instructedAmount: { currency: 'EUR' } }],
  ])('%s', (path, value) => {
    expect(optionErrorOf(route({ authorizationDetails: value })).option).toBe(path);
  });

  it.each<[string, Record<string, unknown>]>([
    ['issuers', { issuers: '' }],
    ['issuers', { issuers: [] }],
    ['issuers[1]', { issuers: [ISSUER, 5] }],
    ['allow', { allow: true }],
    ['rolez', { rolez: ['a'] }],
    ['', 'admin' as unknown as Record<string, unknown>],
  ])('%s', (path, value) => {
    expect(optionErrorOf(route(value)).option).toBe(path);
  });

  it('names the path and what is wrong in the message', () => {
    expect(optionErrorOf(route({ roles: { any: ['a', 2] } })).message).toBe(
      'express-verified-user: requireVerifiedUser option "roles.any[1]" must be a non-empty string',
    );
    expect(optionErrorOf(route({ rolez: [] })).message).toMatch(
      /requireVerifiedUser has no option "rolez" \(known: acr, maxAge, roles, permissions, groups, claims, authorizationDetails, issuers, allow\)/,
    );
  });

  it('accepts every well-formed kind together', () => {
    expect(
      route({
        acr: ['urn:mfa'],
        maxAge: '10m',
        roles: ['a'],
        permissions: { all: ['p'], any: ['q', 'r'] },
        groups: { any: ['g'] },
        claims: { tid: 't', level: [1, 2], verified: true },
        authorizationDetails: [{ type: 'payment_initiation', actions: ['initiate'], locations: ['https://x'] }],
        issuers: [ISSUER],
        allow: () => true,
      }),
    ).not.toThrow();
  });
});

describe("requireMcpAuth's per-tool requirements", () => {
  it.each<[string, Record<string, unknown>]>([
    ['tools.deploy.roles[0]', { tools: { deploy: { roles: [1] } } }],
    ['tools.deploy.scopes', { tools: { deploy: { scopes: 'mcp:admin' } } }],
    ['tools.deploy.claims.tid', { tools: { deploy: { claims: { tid: {} } } } }],
    [
      'resources.file:///a.authorizationDetails[0].type',
      { resources: { 'file:///a': { authorizationDetails: [{}] } } },
    ],
    ['prompts.p.allow', { prompts: { p: { allow: 'yes' } } }],
    ['tools.deploy.acr', { tools: { deploy: { acr: ['urn:mfa'] } } }],
  ])('%s', (path, given) => {
    expect(optionErrorOf(() => requireMcpAuth(auth, given)).option).toBe(path);
  });
});

describe('roleClaim, groupClaim and permissionClaim at createTokenAuth', () => {
  it.each([
    ['roleClaim', ''],
    ['roleClaim', []],
    ['groupClaim', ['realm_access', '']],
    ['permissionClaim', 42],
    ['permissionClaim', { path: 'x' }],
  ])('%s: %p is refused', (option, value) => {
    expect(optionErrorOf(() => createTokenAuth({ ...options, [option]: value })).option).toBe(option);
  });
});
