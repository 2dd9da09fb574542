import { toProfile, type VerifiedClaims } from '../../lib';
import { isProfileResult } from '../../lib/token/profile';
import { NOW, shapeB } from '../fixtures/issuer';

const claimsWith = (providers: unknown): VerifiedClaims => shapeB(NOW, { providers }) as unknown as VerifiedClaims;
const google = {
  id: '110248495921238986420',
  email: 'test.user@example.com',
  name: 'Test User',
  picture: 'https://example.com/test-user.png',
};

describe('toProfile', () => {
  it('builds Shape A from the linked google account', () => {
    expect(toProfile(shapeB(NOW) as unknown as VerifiedClaims)).toEqual({ status: 'success', user: google });
  });

  it('copies only id, name, email and picture, in that order', () => {
    const profile = toProfile(claimsWith({ google: { ...google, locale: 'en', hd: 'example.com' } }));
    expect(profile).toEqual({ status: 'success', user: google });
    expect(Object.keys(profile?.user ?? {})).toEqual(['id', 'name', 'email', 'picture']);
  });

  it('ignores the other providers: no google account means no profile', () => {
    expect(
      toProfile(
        claimsWith({ discord: { id: '1', username: 'nelly', avatar: null }, roblox: { id: '2', username: 'n' } }),
      ),
    ).toBeUndefined();
    expect(toProfile(claimsWith({}))).toBeUndefined();
  });

  it.each(['id', 'name', 'email', 'picture'])('returns undefined when the google entry lacks %s', (field) => {
    const partial: Record<string, unknown> = { ...google };
    delete partial[field];
    expect(toProfile(claimsWith({ google: partial }))).toBeUndefined();
  });

  it.each([
    ['a non-string field', { ...google, email: 42 }],
    ['a null field', { ...google, picture: null }],
    ['an empty id', { ...google, id: '' }],
    ['a non-object entry', 'google'],
  ])('returns undefined for %s (possible with claims: "jwt")', (_case, entry) => {
    expect(toProfile(claimsWith({ google: entry }))).toBeUndefined();
  });

  it('keeps empty strings the token carries instead of inventing values', () => {
    expect(toProfile(claimsWith({ google: { ...google, name: '' } }))?.user.name).toBe('');
  });

  it('returns undefined when providers is missing or not an object (claims: "jwt")', () => {
    const { providers: _p, ...bare } = shapeB(NOW);
    expect(toProfile(bare as unknown as VerifiedClaims)).toBeUndefined();
    expect(toProfile(claimsWith(null))).toBeUndefined();
    expect(toProfile(claimsWith(['google']))).toBeUndefined();
  });
});

describe('isProfileResult', () => {
  it('accepts a complete Shape A, extra user fields included', () => {
    expect(isProfileResult({ status: 'success', user: google })).toBe(true);
    expect(isProfileResult({ status: 'success', user: { ...google, role: 'admin' } })).toBe(true);
  });

  it.each([
    ['no status', { user: google }],
    ['another status', { status: 'error', user: google }],
    ['no user', { status: 'success' }],
    ['a user without picture', { status: 'success', user: { id: '1', name: 'n', email: 'e' } }],
    ['a bare user object', google],
    ['null', null],
  ])('rejects %s', (_case, value) => {
    expect(isProfileResult(value)).toBe(false);
  });
});
