import { checkScopes, parseScopeRequirement } from '../../lib/token/scopes';

describe('scope requirements', () => {
  it('parses an array as all-of, de-duplicated', () => {
    expect(parseScopeRequirement(['email', 'identify', 'email'])).toMatchObject({ all: ['email', 'identify'], any: [], challenge: 'email identify' });
  });

  it('parses { all, any }', () => {
    const req = parseScopeRequirement({ all: ['identify'], any: ['google', 'roblox'] });
    expect(req.challenge).toBe('identify google roblox');
    expect(checkScopes(req, ['identify', 'roblox'])).toBe(true);
    expect(checkScopes(req, ['identify'])).toBe(false);
    expect(checkScopes(req, ['roblox'])).toBe(false);
  });

  it('an empty requirement is met by anything, even no scopes at all', () => {
    expect(checkScopes(parseScopeRequirement(undefined), undefined)).toBe(true);
    expect(checkScopes(parseScopeRequirement([]), [])).toBe(true);
  });

  it('a requirement is never met when the token carries no scopes', () => {
    expect(checkScopes(parseScopeRequirement(['identify']), undefined)).toBe(false);
  });

  it.each([
    ['a string', 'email'],
    ['a scope with a space', ['a b']],
    ['an empty scope', ['']],
    ['a scope with a quote', ['a"b']],
    ['a non-string', [1]],
    ['an unknown key', { every: ['a'] }],
    ['any not an array', { any: 'a' }],
    ['null', null],
  ])('throws a TypeError for %s', (_case, input) => {
    expect(() => parseScopeRequirement(input)).toThrow(TypeError);
  });
});
