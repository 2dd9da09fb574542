// scopeImplies: a granted scope counts as the scopes it implies, transitively, for routes (and requireMcpAuth, in
// __tests__/mcp/requirements.test.ts); cycles and malformed hierarchies are refused at createTokenAuth; challenges
// still name the scopes as the route lists them.
import request from 'supertest';
import { createTokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { resolveScopeImplies } from '../../lib/token/scope-implies';
import { checkScopes, parseScopeRequirement } from '../../lib/token/scopes';
import { EXPRESS_VERSIONS, jwtOptions } from '../fixtures/express';
import { jwtToken } from '../fixtures/issuer';
import { optionErrorOf } from '../fixtures/option-error';

describe('resolveScopeImplies', () => {
  const implies = resolveScopeImplies({
    admin: ['write'],
    write: ['read'],
    'orders:*': ['orders:read', 'orders:write'],
  })!;

  it('widens granted scopes transitively, and hands back the same array when nothing is implied', () => {
    expect([...implies.widen(['admin'])].sort()).toEqual(['admin', 'read', 'write']);
    const plain = ['read', 'other'];
    expect(implies.widen(plain)).toBe(plain);
  });

  it('widens a frozen array once and looks it up after', () => {
    const granted = Object.freeze(['admin']);
    expect(implies.widen(granted)).toBe(implies.widen(granted));
  });

  it('checkScopes: as granted first, then with what they imply', () => {
    const route = parseScopeRequirement({ all: ['read'], any: ['orders:read', 'x'] });
    expect(checkScopes(route, ['admin', 'orders:*'])).toBe(false);
    expect(checkScopes(route, ['admin', 'orders:*'], implies)).toBe(true);
    expect(checkScopes(route, ['read'], implies)).toBe(false);
  });

  it.each<[string, unknown]>([
    ['scopeImplies.a', { a: ['a'] }],
    ['scopeImplies.a', { a: ['b'], b: ['c'], c: ['a'] }],
    ['scopeImplies.b', { a: ['x'], b: ['c'], c: ['b'] }],
  ])('refuses a cycle, naming it (%s)', (path, value) => {
    const err = optionErrorOf(() => resolveScopeImplies(value));
    expect(err.option).toBe(path);
    expect(err.message).toMatch(/has a cycle: /);
  });

  it('names the cycle scope by scope', () => {
    expect(optionErrorOf(() => resolveScopeImplies({ a: ['b'], b: ['c'], c: ['a'] })).message).toBe(
      'express-verified-user: option "scopeImplies" has a cycle: "a" → "b" → "c" → "a" (a scope may not imply itself)',
    );
  });

  it.each<[string, unknown]>([
    ['scopeImplies', ['admin']],
    ['scopeImplies', 'admin:read'],
    ['scopeImplies.admin', { admin: 'read' }],
    ['scopeImplies.admin', { admin: [] }],
    ['scopeImplies.admin[1]', { admin: ['read', 'has space'] }],
    ['scopeImplies.bad"quote', { 'bad"quote': ['read'] }],
  ])('refuses a malformed hierarchy at %s', (path, value) => {
    expect(
      optionErrorOf(() => createTokenAuth(jwtOptions([], { scopeImplies: value } as Partial<TokenAuthOptions>))).option,
    ).toBe(path);
  });
});

describe.each(EXPRESS_VERSIONS)('scopeImplies on routes through %s', (_name, express) => {
  it('a token holding mcp:admin passes where mcp:tools is asked; the challenge of a short token names the route’s scopes', async () => {
    const refusals: TokenAuthError[] = [];
    const auth = createTokenAuth(
      jwtOptions(refusals, { scopeImplies: { 'mcp:admin': ['mcp:tools'], 'mcp:tools': ['mcp:read'] } }),
    );
    const app = express();
    app.get('/tools', auth.requireVerifiedUser(['mcp:read', 'mcp:tools']), (_req, res) => {
      res.json({});
    });
    const bearer = (scope: string) => ({
      Authorization: `Bearer ${jwtToken({ scope })}`,
    });
    expect((await request(app).get('/tools').set(bearer('mcp:admin'))).status).toBe(200);
    expect((await request(app).get('/tools').set(bearer('mcp:tools'))).status).toBe(200);
    const short = await request(app).get('/tools').set(bearer('mcp:read'));
    expect(short.status).toBe(403);
    expect(short.headers['www-authenticate']).toBe(
      'Bearer realm="api", error="insufficient_scope", scope="mcp:read mcp:tools"',
    );
    expect(refusals[0].hint).toBe(
      'expected scopes "mcp:read" and "mcp:tools" (a scope that implies one counts, option "scopeImplies") of the route (requireVerifiedUser\'s scopes), read from claim "scope", "scp" or "scopes" (option "scopeClaim")',
    );
    // What the token holds is read as granted: scopesOf does not widen it.
    expect(auth.scopesOf({ scope: 'mcp:admin' })).toEqual(['mcp:admin']);
    auth.close();
  });
});
