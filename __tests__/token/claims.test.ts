import { shapeBViolation } from '../../lib/token/claims';
import { NOW, shapeB } from '../fixtures/issuer';

const withCreatedAt = (createdAt: string) => shapeB(NOW, { metadata: { createdAt, authorizer: 'x' } });

describe('the Shape B calendar check of metadata.createdAt', () => {
  it.each([
    '2024-02-29T00:00:00Z',
    '2000-02-29T23:59:59.999Z',
    '2023-12-31T00:00:00Z',
    '2023-04-30T00:00:00Z',
    '0000-02-29T00:00:00Z',
  ])('accepts %s, a day that exists', (createdAt) => expect(shapeBViolation(withCreatedAt(createdAt))).toBeUndefined());

  it.each([
    '2023-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-06-31T00:00:00Z',
    '2024-11-31T00:00:00.5Z',
  ])('refuses %s, a day that does not exist', (createdAt) =>
    expect(shapeBViolation(withCreatedAt(createdAt))).toBe('metadata.createdAt'),
  );
});

describe('the Shape B check of linked accounts', () => {
  const google = { id: 'g1', email: 'a@example.com', name: 'A', picture: 'https://example.com/a.png' };
  const withProviders = (providers: unknown) => shapeB(NOW, { providers });

  it('accepts known accounts with every known field, extra string fields, and a null Discord avatar', () => {
    const providers = {
      google: { ...google, locale: 'en' },
      discord: { id: 'd1', username: 'a', avatar: null },
      github: { id: 'h1', login: 'a' },
    };
    expect(shapeBViolation(withProviders(providers))).toBeUndefined();
  });

  it.each([
    ['a missing known field', { google: { id: 'g1', name: 'A', picture: 'p' } }, 'providers.google.email'],
    [
      'a missing known field before a wrong value',
      { google: { id: 'g1', name: 'A', picture: 5 } },
      'providers.google.email',
    ],
    ['a known field that is not a string', { google: { ...google, picture: 5 } }, 'providers.google.picture'],
    // Fields and providers the package does not know are named by position, never by the token's own text.
    ['an extra field that is not a string', { google: { ...google, age: 3 } }, 'providers.google[4]'],
    ['the first of two wrong values', { google: { ...google, a: 1, b: 2 } }, 'providers.google[4]'],
    ['null outside the Discord avatar', { roblox: { id: 'r1', username: null } }, 'providers.roblox.username'],
    ['an empty id', { roblox: { id: '', username: 'a' } }, 'providers.roblox.id'],
    ['an account that is not an object', { github: ['h1'] }, 'providers[0]'],
    ['an unknown provider without id', { google, 'evil\r\nrefused 401 fake': { name: 'x' } }, 'providers[1].id'],
    ['an unknown field of an unknown provider', { github: { id: 'h1', 'a\u2028b': 5 } }, 'providers[0][1]'],
    ['the second account when the first is good', { google, roblox: { id: 'r1' } }, 'providers.roblox.username'],
  ])('refuses %s, naming its path', (_case, providers, path) => {
    expect(shapeBViolation(withProviders(providers))).toBe(path);
  });

  it('reads a provider named like an Object.prototype member as any other (named by its position)', () => {
    const providers = JSON.parse('{"constructor":{"id":"c1"},"__proto__":{"id":"p1","n":1}}') as unknown;
    expect(shapeBViolation(withProviders(providers))).toBe('providers[1][1]');
  });
});
