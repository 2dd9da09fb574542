// Where roles, groups and permissions are read, and a claim's value as values: strings and SCIM objects grant, every
// other shape grants nothing, and a long array costs one walk per frozen array (a verdict's claims), not per request.
import { TokenAuthError } from '../../lib';
import { claimValues, describeShape, holds, resolveValueSource } from '../../lib/authorize/claim-values';

describe('claimValues', () => {
  it('an array of strings is answered as it is; a single string is one value', () => {
    const roles = ['a', 'b'];
    expect(claimValues(roles)).toBe(roles);
    expect(claimValues('admin')).toEqual(['admin']);
    expect(claimValues([])).toEqual([]);
  });

  it('SCIM objects (RFC 7643 §2.4) count by their string value, alone or among strings', () => {
    const values = claimValues([{ value: 'admin', display: 'Admins', primary: true }, 'user']);
    expect(values).toBeInstanceOf(Set);
    expect([...(values as Set<string>)]).toEqual(['admin', 'user']);
  });

  it.each<[string, unknown]>([
    ['an object', { admin: true }],
    ['a number', 7],
    ['a boolean', true],
    ['null', null],
    ['absent', undefined],
    ['nested arrays', [['admin']]],
    ['a number among strings', ['admin', 1]],
    ['a SCIM object whose value is not a string', [{ value: 1 }]],
    ['a SCIM object without value', [{ display: 'admin' }]],
    ['null among strings', ['admin', null]],
  ])('%s grants nothing', (_shape, value) => {
    expect(claimValues(value)).toBeUndefined();
  });

  it('a long frozen array becomes a set once, and is looked up again after', () => {
    const many = Object.freeze(Array.from({ length: 100_000 }, (_, i) => `role-${i}`));
    const first = claimValues(many);
    expect(first).toBeInstanceOf(Set);
    expect(claimValues(many)).toBe(first);
    expect(holds(first!, 'role-99999')).toBe(true);
    expect(holds(first!, 'role-100000')).toBe(false);
  });

  it('a long array that is not frozen (no verdict shares it) is walked each time, and kept nowhere', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `role-${i}`);
    expect(claimValues(many)).not.toBe(claimValues(many));
  });

  it('a long array with one element of another shape grants nothing, frozen or not', () => {
    const many = [...Array.from({ length: 50_000 }, (_, i) => `role-${i}`), 42];
    expect(claimValues(many)).toBeUndefined();
    expect(claimValues(Object.freeze(many))).toBeUndefined();
  });
});

describe('describeShape says the shape and the count, never a value', () => {
  it.each<[unknown, string]>([
    [undefined, 'absent'],
    [null, 'null'],
    ['secret-role', 'a single string (1 value)'],
    [['secret-a', 'secret-b'], 'an array of 2 values'],
    [[{ value: 'secret' }], 'an array of 1 value'],
    [['secret', 3], 'an array of 2 elements, not all strings or objects with a string "value", which grants nothing'],
    [{ secret: ['x'] }, 'an object, which grants nothing'],
    [12, 'a number, which grants nothing'],
  ])('%p', (value, said) => {
    expect(describeShape(value)).toBe(said);
    expect(describeShape(value)).not.toContain('secret');
  });
});

describe('resolveValueSource', () => {
  const claims = { roles: ['r'], realm_access: { roles: ['realm'] }, 'cognito:groups': ['g'], str: 'x' };

  it('a string is a top-level claim named exactly (a colon or a URL in it included)', () => {
    expect(resolveValueSource('group', 'cognito:groups').read(claims)).toEqual(['g']);
    expect(
      resolveValueSource('role', 'https://example.com/roles').read({ 'https://example.com/roles': ['a'] }),
    ).toEqual(['a']);
    expect(resolveValueSource('role', undefined).read(claims)).toEqual(['r']);
  });

  it('an array is a key path into nested objects; a step that is not an object reads nothing', () => {
    const source = resolveValueSource('role', ['realm_access', 'roles']);
    expect(source.read(claims)).toEqual(['realm']);
    expect(source.read({ realm_access: 'roles' })).toBeUndefined();
    expect(source.read({ realm_access: ['roles'] })).toBeUndefined();
    expect(source.read({})).toBeUndefined();
    expect(source.described).toBe('claim path ["realm_access","roles"] (option "roleClaim")');
  });

  it('a function answers; one that throws is a 500 internal with the cause, never a refusal', () => {
    expect(resolveValueSource('permission', () => ['p']).read(claims)).toEqual(['p']);
    const thrown = new Error('boom');
    let caught: unknown;
    try {
      resolveValueSource('permission', () => {
        throw thrown;
      }).read(claims);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TokenAuthError);
    expect(caught).toMatchObject({ code: 'internal', reason: 'permissionClaim-threw', cause: thrown });
  });
});
