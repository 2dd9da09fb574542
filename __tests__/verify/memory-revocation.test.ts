import { randomUUID } from 'node:crypto';
import {
  createMemoryRevocationStore,
  createTokenAuth,
  OptionError,
  TokenAuthError,
  type MemoryRevocationStore,
  type TokenAuth,
  type TokenAuthOptions,
} from '../../lib';
import { optionErrorOf } from '../fixtures/option-error';
import { rejection } from '../fixtures/rejection';
import { AUDIENCE, ISSUER, SECRET, sign } from '../fixtures/issuer';

// createMemoryRevocationStore (lib/verify/memory-revocation.ts): the rules of one process, through auth.verify().
const OTHER_ISSUER = 'other.example.com';
const T0 = 1_800_000_000;
let now = T0;
const clock = () => now;
const opened: TokenAuth[] = [];

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
  now = T0;
});

/** A TokenAuth of two issuers on `store`, maxLifetime 1 h, clockTolerance 5 s, on the test's clock. */
function follower(store: MemoryRevocationStore, options: Partial<TokenAuthOptions> = {}): TokenAuth {
  const auth = createTokenAuth({
    key: { secret: SECRET },
    issuer: [ISSUER, OTHER_ISSUER],
    audience: AUDIENCE,
    claims: 'jwt',
    maxLifetime: '1h',
    clockTolerance: 5,
    clock,
    revocation: store,
    ...options,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

const token = (claims: Record<string, unknown> = {}) =>
  sign({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', iat: now - 60, exp: now + 600, jti: randomUUID(), ...claims });

/** The reason `verify` refuses `t` with, or 'accepted'. */
async function verdict(auth: TokenAuth, t: string): Promise<string> {
  try {
    await auth.verify(t);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof TokenAuthError)) throw err;
    return `${err.status} ${err.code} ${err.reason}`;
  }
}

const SUBJECT = '401 invalid_token subject-revoked';
const SESSION = '401 invalid_token session-revoked';

describe('createMemoryRevocationStore: subject rules', () => {
  it("refuses that subject's tokens issued at or before before, and no other subject, issuer or later iat", async () => {
    const store = createMemoryRevocationStore({ clock });
    const auth = follower(store);
    const [old, same, later, bob, other] = [
      token({ iat: now - 60 }),
      token({ iat: now - 30 }),
      token({ iat: now - 29 }),
      token({ sub: 'bob' }),
      token({ iss: OTHER_ISSUER }),
    ];
    for (const t of [old, same, later, bob, other]) expect(await verdict(auth, t)).toBe('accepted');
    await store.revokeSubject({ iss: ISSUER, sub: 'alice' }, { before: now - 30 });
    expect(await verdict(auth, old)).toBe(SUBJECT);
    expect(await verdict(auth, same)).toBe(SUBJECT);
    expect(await verdict(auth, later)).toBe('accepted');
    expect(await verdict(auth, bob)).toBe('accepted');
    expect(await verdict(auth, other)).toBe('accepted');
    expect(auth.stats().revocation).toEqual({ loaded: true, available: true, size: 0, rules: 1 });
  });

  it('takes before as a Date, and now when absent', async () => {
    const store = createMemoryRevocationStore({ clock });
    const auth = follower(store);
    await store.revokeSubject({ iss: ISSUER, sub: 'alice' }, { before: new Date((now - 30) * 1000) });
    expect(await verdict(auth, token({ iat: now - 30 }))).toBe(SUBJECT);
    expect(await verdict(auth, token({ iat: now - 29 }))).toBe('accepted');
    await store.revokeSubject({ iss: ISSUER, sub: 'bob' });
    expect(await verdict(auth, token({ sub: 'bob', iat: now }))).toBe(SUBJECT);
  });

  it('lasts until before + maxLifetime + clockTolerance, then leaves', async () => {
    const store = createMemoryRevocationStore({ clock });
    const auth = follower(store, { maxLifetime: '10m' });
    await store.revokeSession({ iss: ISSUER, sid: 'session-1' }, { before: now - 10 });
    // A token of that session issued after the rule, valid for 10 min: refused while the rule lasts (until 595 s).
    const t = token({ sid: 'session-1', iat: now, exp: now + 600 });
    now += 595;
    expect(await verdict(auth, t)).toBe(SESSION);
    now += 1;
    expect(await verdict(auth, t)).toBe('accepted');
    now += 20; // past the store's margin: the next write drops it
    await store.revokeSubject({ iss: ISSUER, sub: 'carol' });
    expect(auth.stats().revocation?.rules).toBe(1);
  });
});

describe('createMemoryRevocationStore: session rules', () => {
  it('refuses the tokens naming the session, and no other sid, issuer, or sid-less token (no sub given)', async () => {
    const store = createMemoryRevocationStore({ clock });
    const auth = follower(store);
    await store.revokeSession({ iss: ISSUER, sid: 'session-1' }, { before: now - 30 });
    expect(await verdict(auth, token({ sid: 'session-1', iat: now }))).toBe(SESSION);
    expect(await verdict(auth, token({ sid: 'session-2' }))).toBe('accepted');
    expect(await verdict(auth, token({ sid: 'session-1', iss: OTHER_ISSUER }))).toBe('accepted');
    expect(await verdict(auth, token())).toBe('accepted');
  });

  it("with sub: refuses that subject's tokens without sid issued at or before before, and no others", async () => {
    const store = createMemoryRevocationStore({ clock });
    const auth = follower(store);
    await store.revokeSession({ iss: ISSUER, sid: 'session-1', sub: 'alice' }, { before: now - 30 });
    expect(await verdict(auth, token({ iat: now - 30 }))).toBe(SESSION);
    expect(await verdict(auth, token({ iat: now - 29 }))).toBe('accepted');
    expect(await verdict(auth, token({ sid: 'session-2', iat: now - 60 }))).toBe('accepted');
    expect(await verdict(auth, token({ sub: 'bob', iat: now - 60 }))).toBe('accepted');
    expect(auth.stats().revocation?.rules).toBe(2);
  });
});

describe('createMemoryRevocationStore: bounds', () => {
  it('rejects a rule past maxRules with revocation-store-full and Retry-After, all or nothing, and keeps what it holds', async () => {
    const store = createMemoryRevocationStore({ clock, maxRules: 3 });
    const auth = follower(store);
    await store.revokeSubject({ iss: ISSUER, sub: 'alice' }, { before: now - 100 });
    await store.revokeSubject({ iss: ISSUER, sub: 'bob' });
    // Two entries (sid and sub) for one place left: neither is stored.
    const full = await rejection(store.revokeSession({ iss: ISSUER, sid: 'session-1', sub: 'carol' }));
    expect(full).toMatchObject({ code: 'verification_unavailable', status: 503, reason: 'revocation-store-full' });
    // The earliest rule (before now − 100) leaves at before + 3605 + 10: that is what Retry-After says, at most 300.
    expect(full.headers['Retry-After']).toBe('300');
    expect(await verdict(auth, token({ sid: 'session-1', sub: 'carol' }))).toBe('accepted');
    await store.revokeSession({ iss: ISSUER, sid: 'session-1' });
    const again = await rejection(store.revokeSubject({ iss: ISSUER, sub: 'dave' }));
    expect(again.reason).toBe('revocation-store-full');
    // What it holds is still refused, and a rule it holds can be written again (it takes no new place).
    expect(await verdict(auth, token({ iat: now - 200 }))).toBe(SUBJECT);
    expect(await verdict(auth, token({ sub: 'bob' }))).toBe(SUBJECT);
    await store.revokeSubject({ iss: ISSUER, sub: 'bob' });
    // Once the earliest rule's lifetime is over, its place is free again.
    now += 3605 + 10 - 100 + 1;
    await store.revokeSubject({ iss: ISSUER, sub: 'erin' });
    expect(await verdict(auth, token({ sub: 'erin' }))).toBe(SUBJECT);
  });

  it('answers Retry-After with the seconds until its earliest rule leaves', async () => {
    const store = createMemoryRevocationStore({ clock, maxRules: 1 });
    follower(store, { maxLifetime: 60, clockTolerance: 0 });
    await store.revokeSubject({ iss: ISSUER, sub: 'alice' }, { before: now - 20 });
    expect((await rejection(store.revokeSubject({ iss: ISSUER, sub: 'bob' }))).headers['Retry-After']).toBe('50');
    now += 51;
    await store.revokeSubject({ iss: ISSUER, sub: 'bob' });
  });

  it('checks maxRules and its options at set-up', () => {
    for (const maxRules of [0, -1, 1.5, '10', Number.NaN])
      expect(optionErrorOf(() => createMemoryRevocationStore({ maxRules: maxRules as number })).option).toBe(
        'maxRules',
      );
    expect(optionErrorOf(() => createMemoryRevocationStore({ max: 1 } as never)).option).toBe('max');
    expect(optionErrorOf(() => createMemoryRevocationStore({ clock: 5 as never })).option).toBe('clock');
  });

  it.each([
    ['no iss', () => ({ sub: 'alice' })],
    ['an empty sub', () => ({ iss: ISSUER, sub: '' })],
    ['a sub over 256 characters', () => ({ iss: ISSUER, sub: 'a'.repeat(257) })],
    ['an iss over 256 characters', () => ({ iss: 'i'.repeat(257), sub: 'alice' })],
    ['a sid (a session is revoked with revokeSession)', () => ({ iss: ISSUER, sub: 'alice', sid: 's' })],
  ])('rejects revokeSubject with %s with a TypeError, storing nothing', async (_case, target) => {
    const store = createMemoryRevocationStore({ clock });
    await expect(store.revokeSubject(target() as never)).rejects.toThrow(TypeError);
    expect(store.rulesWritten()).toBe(false);
  });

  it.each([
    ['a before 301 s ahead', { before: T0 + 301 }],
    ['a NaN before', { before: Number.NaN }],
    ['an invalid Date', { before: new Date('no date') }],
    ['a before as text', { before: String(T0) }],
    ['an unknown option', { after: T0 }],
  ])('rejects %s with a TypeError', async (_case, options) => {
    const store = createMemoryRevocationStore({ clock });
    await expect(store.revokeSession({ iss: ISSUER, sid: 'session-1' }, options as never)).rejects.toThrow(TypeError);
    await expect(store.revokeSession({ iss: ISSUER, sub: 'alice' } as never)).rejects.toThrow(/needs sid/);
  });
});

describe('createMemoryRevocationStore: maxLifetime', () => {
  it('is required at createTokenAuth once the store holds rules (OptionError, option maxLifetime)', async () => {
    const store = createMemoryRevocationStore({ clock });
    await store.revokeSubject({ iss: ISSUER, sub: 'alice' });
    const err = optionErrorOf(() => follower(store, { maxLifetime: undefined }));
    expect(err.option).toBe('maxLifetime');
  });

  it('rejects a rule with an OptionError while a TokenAuth without maxLifetime follows the store', async () => {
    const store = createMemoryRevocationStore({ clock });
    const legacy = follower(store, { maxLifetime: undefined });
    await expect(store.revokeSubject({ iss: ISSUER, sub: 'alice' })).rejects.toThrow(OptionError);
    await expect(store.revokeSession({ iss: ISSUER, sid: 's' })).rejects.toMatchObject({ option: 'maxLifetime' });
    legacy.close();
    await store.revokeSubject({ iss: ISSUER, sub: 'alice' });
  });

  it('is not needed to revoke by jti, as before rules existed', async () => {
    const store = createMemoryRevocationStore({ clock });
    const auth = follower(store, { maxLifetime: undefined });
    const jti = randomUUID();
    const t = token({ jti });
    expect(await verdict(auth, t)).toBe('accepted');
    await store.revoke(jti, now + 600);
    expect(await verdict(auth, t)).toBe('401 invalid_token revoked');
    await expect(store.revoke({ exp: now + 600 })).rejects.toThrow(TypeError);
  });
});
