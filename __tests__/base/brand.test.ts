import { createBrand } from '../../lib/base/brand';

// The mark `auth.claims(req)` reads to know that claims passed this TokenAuth's checks.
describe('createBrand', () => {
  it('recognises what it marked, and no copy of it, and nothing another brand marked', () => {
    const brand = createBrand();
    const other = createBrand();
    const claims = JSON.parse('{"sub":"alice","scope":"a b","accounts":[{"id":1}]}') as Record<string, unknown>;
    brand.mark(claims);
    brand.mark(claims); // again: nothing happens, nothing throws
    expect(brand.has(claims)).toBe(true);
    expect(other.has(claims)).toBe(false);
    expect(brand.has({ ...claims })).toBe(false);
    expect(brand.has(structuredClone(claims))).toBe(false);
    expect(brand.has(Object.assign(Object.create(claims) as object, claims))).toBe(false);
  });

  it('leaves the object as it was to every reader: keys, symbols, JSON, equality', () => {
    const brand = createBrand();
    const text = '{"sub":"alice","exp":1}';
    const claims = JSON.parse(text) as Record<string, unknown>;
    brand.mark(claims);
    expect(Reflect.ownKeys(claims)).toEqual(['sub', 'exp']);
    expect(JSON.stringify(claims)).toBe(text);
    expect(claims).toStrictEqual(JSON.parse(text));
  });

  it('marks an object that takes no new fields (frozen, sealed, not extensible) too', () => {
    const brand = createBrand();
    const frozen = Object.freeze({ sub: 'a' });
    const sealed = Object.seal({ sub: 'b' });
    const closed = Object.preventExtensions({ sub: 'c' });
    for (const target of [frozen, sealed, closed]) {
      brand.mark(target);
      expect(brand.has(target)).toBe(true);
    }
    expect(brand.has(Object.freeze({ sub: 'a' }))).toBe(false);
  });

  it.each([undefined, null, 'claims', 42, true, Symbol('x')])('answers false for %p, never throws', (value) => {
    expect(createBrand().has(value)).toBe(false);
  });
});
