import { deepFreeze } from '../../lib/verify/frozen';

// The claims the cache shares are frozen all the way down (issue 19 item 8); a payload nested deeper than any
// stack is frozen too, without a RangeError.
describe('deepFreeze', () => {
  it('freezes every object and array of a parsed payload, in place', () => {
    const payload = JSON.parse('{"scopes":["a"],"providers":{"g":{"id":"1","tags":[{"x":1}]}},"n":1,"s":"t","z":null}');
    expect(deepFreeze(payload)).toBe(payload);
    for (const part of [
      payload,
      payload.scopes,
      payload.providers,
      payload.providers.g,
      payload.providers.g.tags,
      payload.providers.g.tags[0],
    ]) {
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

describe('claims shared by requests are frozen', () => {
  it('walks the whole tree even when the root was frozen already (a validateClaims hook may freeze only the top)', () => {
    const payload = Object.freeze(JSON.parse('{"scopes":["a"],"providers":{"g":{"id":"1"}}}'));
    deepFreeze(payload);
    expect(Object.isFrozen(payload.scopes)).toBe(true);
    expect(Object.isFrozen(payload.providers.g)).toBe(true);
  });

  it('hands frozen claims to every verify() waiting on one verification (an async key: in-flight sharing)', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createTokenAuth } = require('../../lib') as typeof import('../../lib');
    const { SECRET, ISSUER, AUDIENCE, NOW, shapeB, sign } =
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('../fixtures/issuer') as typeof import('../fixtures/issuer');
    const { createSecretKey } = await import('node:crypto');
    const key = createSecretKey(Buffer.from(SECRET));
    const auth = createTokenAuth({
      key: async () => key,
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
    });
    const token = sign(shapeB(NOW));
    const [a, b] = await Promise.all([auth.verify(token), auth.verify(token)]);
    expect(a).toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen((a as unknown as { scopes: string[] }).scopes)).toBe(true);
    auth.close();
  });
});

describe('deepFreeze and objects that point back', () => {
  it('ends on a cycle (a validateClaims hook may attach an object that refers to the claims)', () => {
    const claims: Record<string, unknown> = JSON.parse('{"scopes":["a"]}');
    claims.session = { owner: claims, list: [claims] };
    deepFreeze(claims);
    expect(Object.isFrozen(claims)).toBe(true);
    expect(Object.isFrozen(claims.session)).toBe(true);
  });
});
