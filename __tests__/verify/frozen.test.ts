import { deepFreeze } from '../../lib/verify/frozen';

// The claims the cache shares are frozen all the way down (issue 19 item 8); a payload nested deeper than any
// stack is frozen too, without a RangeError.
describe('deepFreeze', () => {
  it('freezes every object and array of a parsed payload, in place', () => {
    const payload = JSON.parse('{"scopes":["a"],"providers":{"g":{"id":"1","tags":[{"x":1}]}},"n":1,"s":"t","z":null}');
    expect(deepFreeze(payload)).toBe(payload);
    for (const part of [payload, payload.scopes, payload.providers, payload.providers.g, payload.providers.g.tags, payload.providers.g.tags[0]]) {
      expect(Object.isFrozen(part)).toBe(true);
    }
  });

  it('freezes a payload nested 100 000 deep (past any call stack)', () => {
    const depth = 100_000;
    const payload = JSON.parse(`{"a":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    expect(() => deepFreeze(payload)).not.toThrow();
    let part: unknown = payload.a;
    let seen = 0;
    while (Array.isArray(part)) {
      expect(Object.isFrozen(part)).toBe(true);
      part = part[0];
      seen++;
    }
    expect(seen).toBe(depth);
  });

  it('leaves primitives and null alone', () => {
    expect(deepFreeze(null)).toBeNull();
    expect(deepFreeze('x')).toBe('x');
    expect(deepFreeze(1)).toBe(1);
  });
});
