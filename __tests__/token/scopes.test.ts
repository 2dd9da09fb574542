import { checkScopes, parseScopeRequirement, scopeChallenge } from '../../lib/token/scopes';

describe('scope requirements', () => {
  it('parses an array as all-of, de-duplicated', () => {
    expect(parseScopeRequirement(['email', 'identify', 'email'])).toMatchObject({
      all: ['email', 'identify'],
      any: [],
      challenge: 'email identify',
    });
  });

  it('parses { all, any }', () => {
    const req = parseScopeRequirement({ all: ['identify'], any: ['google', 'roblox'] });
    expect(req.challenge).toBe('identify google');
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

  describe('scopeChallenge: every scope the operation needs, one alternative of `any`', () => {
    const requirement = parseScopeRequirement({ all: ['identify'], any: ['google', 'roblox'] });
    it('names the first alternative when the token holds none, or nothing is known of it', () => {
      expect(scopeChallenge(requirement, ['email'])).toBe('identify google');
      expect(scopeChallenge(requirement, undefined)).toBe('identify google');
    });
    it('names the alternative the token holds, so a step-up keeps it', () => {
      expect(scopeChallenge(requirement, ['roblox'])).toBe('identify roblox');
    });
    it('names only `all` when one of them is also an alternative', () => {
      expect(scopeChallenge(parseScopeRequirement({ all: ['a', 'b'], any: ['b', 'c'] }), [])).toBe('a b');
    });
    it('names `all` alone for a plain array', () => {
      expect(scopeChallenge(parseScopeRequirement(['a', 'b']), ['c'])).toBe('a b');
    });
  });
});
