import { entryOf, ruleMember, RuleSet, type RuleEntry } from '../../lib/verify/rule-set';

// The rules a process holds (lib/verify/rule-set.ts): what each kind refuses, and nothing else.
const ISS = 'https://idp.example/realms/acme';
const OTHER_ISS = 'https://idp.example/realms/other';
const NOW = 1_800_000_000;
const LIFETIME = 3605; // maxLifetime 1 h + clockTolerance 5 s

function set(...entries: RuleEntry[]): RuleSet {
  const rules = new RuleSet();
  for (const entry of entries) rules.note(entry);
  return rules;
}

const token = (claims: Record<string, unknown>) => ({ iss: ISS, sub: 'alice', iat: NOW - 100, ...claims });

describe('RuleSet', () => {
  it('refuses nothing, and reads no claim, while it holds no rule', () => {
    const claims = new Proxy(
      {},
      {
        get: () => {
          throw new Error('a claim was read');
        },
      },
    );
    expect(new RuleSet().refusal(claims, NOW, LIFETIME)).toBeUndefined();
  });

  describe('a subject rule', () => {
    const rules = set({ kind: 's', iss: ISS, key: 'alice', before: NOW - 50 });

    it('refuses the tokens of that iss and sub issued at or before before, and one without iat', () => {
      expect(rules.refusal(token({ iat: NOW - 100 }), NOW, LIFETIME)).toBe('subject-revoked');
      expect(rules.refusal(token({ iat: NOW - 50 }), NOW, LIFETIME)).toBe('subject-revoked');
      expect(rules.refusal(token({ iat: undefined }), NOW, LIFETIME)).toBe('subject-revoked');
      expect(rules.refusal(token({ sid: 'any-session' }), NOW, LIFETIME)).toBe('subject-revoked');
    });

    it('accepts a later iat, another subject, another issuer, and a token without iss or sub', () => {
      expect(rules.refusal(token({ iat: NOW - 49 }), NOW, LIFETIME)).toBeUndefined();
      expect(rules.refusal(token({ sub: 'bob' }), NOW, LIFETIME)).toBeUndefined();
      expect(rules.refusal(token({ iss: OTHER_ISS }), NOW, LIFETIME)).toBeUndefined();
      expect(rules.refusal(token({ iss: undefined }), NOW, LIFETIME)).toBeUndefined();
      expect(rules.refusal(token({ sub: undefined }), NOW, LIFETIME)).toBeUndefined();
    });

    it('lasts until before + the lifetime asked with, not a second more', () => {
      expect(rules.refusal(token({ iat: undefined }), NOW - 50 + LIFETIME, LIFETIME)).toBe('subject-revoked');
      expect(rules.refusal(token({ iat: undefined }), NOW - 50 + LIFETIME + 1, LIFETIME)).toBeUndefined();
      // Another TokenAuth of the same store, with a shorter maxLifetime, is done with it sooner.
      expect(rules.refusal(token({ iat: undefined }), NOW + 100, 120)).toBeUndefined();
    });
  });

  describe('a session rule', () => {
    const rules = set({ kind: 'x', iss: ISS, key: 'session-1', before: NOW - 50 });

    it('refuses the tokens whose sid names it, whatever their iat or sub', () => {
      expect(rules.refusal(token({ sid: 'session-1' }), NOW, LIFETIME)).toBe('session-revoked');
      expect(rules.refusal(token({ sid: 'session-1', iat: NOW }), NOW, LIFETIME)).toBe('session-revoked');
      expect(rules.refusal(token({ sid: 'session-1', sub: 'bob' }), NOW, LIFETIME)).toBe('session-revoked');
    });

    it('refuses a token whose sid is an array naming it, and accepts one naming other sessions or another type', () => {
      expect(rules.refusal(token({ sid: ['session-9', 'session-1'] }), NOW, LIFETIME)).toBe('session-revoked');
      expect(rules.refusal(token({ sid: ['session-2', 7, null] }), NOW, LIFETIME)).toBeUndefined();
      expect(rules.refusal(token({ sid: { 'session-1': true } }), NOW, LIFETIME)).toBeUndefined();
    });

    it('accepts another sid, another issuer, and the tokens of that user without sid (no sub given)', () => {
      expect(rules.refusal(token({ sid: 'session-2' }), NOW, LIFETIME)).toBeUndefined();
      expect(rules.refusal(token({ sid: 'session-1', iss: OTHER_ISS }), NOW, LIFETIME)).toBeUndefined();
      expect(rules.refusal(token({}), NOW, LIFETIME)).toBeUndefined();
    });

    it("with sub: also refuses that subject's tokens without sid issued at or before before, and no others", () => {
      const withSub = set(
        { kind: 'x', iss: ISS, key: 'session-1', before: NOW - 50 },
        { kind: 'n', iss: ISS, key: 'alice', before: NOW - 50 },
      );
      expect(withSub.refusal(token({}), NOW, LIFETIME)).toBe('session-revoked');
      expect(withSub.refusal(token({ sid: 7 }), NOW, LIFETIME)).toBe('session-revoked'); // a sid that names nothing
      expect(withSub.refusal(token({ iat: undefined }), NOW, LIFETIME)).toBe('session-revoked');
      expect(withSub.refusal(token({ iat: NOW - 49 }), NOW, LIFETIME)).toBeUndefined();
      expect(withSub.refusal(token({ sid: 'session-2' }), NOW, LIFETIME)).toBeUndefined(); // shows another session
      expect(withSub.refusal(token({ sub: 'bob' }), NOW, LIFETIME)).toBeUndefined();
      expect(withSub.refusal(token({ iss: OTHER_ISS }), NOW, LIFETIME)).toBeUndefined();
    });
  });

  it('keeps the latest before of a key, counts keys, prunes by before and lists what it holds', () => {
    const rules = set(
      { kind: 's', iss: ISS, key: 'alice', before: NOW - 50 },
      { kind: 's', iss: ISS, key: 'alice', before: NOW - 500 },
      { kind: 'x', iss: ISS, key: 'session-1', before: NOW - 10 },
    );
    expect(rules.size).toBe(2);
    expect(rules.before({ kind: 's', iss: ISS, key: 'alice' })).toBe(NOW - 50);
    expect(rules.note({ kind: 's', iss: ISS, key: 'alice', before: NOW - 20 })).toBe(true);
    expect(rules.earliest()).toBe(NOW - 20);
    expect(rules.prune(NOW - 15)).toBe(1);
    expect([...rules.entries()]).toEqual([{ kind: 'x', iss: ISS, key: 'session-1', before: NOW - 10 }]);
    expect(rules.size).toBe(1);
  });

  it('reads back what it names, and nothing malformed', () => {
    const entry: RuleEntry = { kind: 'n', iss: ISS, key: 'a"l\\ice', before: NOW };
    expect(entryOf(ruleMember(entry), NOW)).toEqual(entry);
    for (const member of ['', 'null', '["s","a"]', '["z","a","b"]', '["s",1,"b"]', '{"0":"s"}'])
      expect(entryOf(member, NOW)).toBeUndefined();
    expect(entryOf(ruleMember(entry), Number.NaN)).toBeUndefined();
  });
});
