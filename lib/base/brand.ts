// A brand: a mark an object made elsewhere (a parsed JSON payload) can carry, that no one can forge, copy or see.
// The bottom of the house: imports nothing.

/** A base class whose constructor returns the object it is given, so a subclass's private field lands on that object. */
class Returns {
  constructor(target: object) {
    return target;
  }
}

/** Marks objects and recognises them; each brand is its own (see `createBrand`). */
export interface Brand {
  /** Mark `target`; marking it again does nothing. */
  mark(target: object): void;
  /** Whether `value` is an object this brand marked; false for anything else, primitives included. */
  has(value: unknown): boolean;
}

/**
 * A new brand. The mark is a private field (ES2022) added to the object, the way a class stamps its instances: it
 * is not a property (Object.keys, Reflect.ownKeys, JSON.stringify, spread and structuredClone never see or copy it),
 * only this brand can test for it, and it lives exactly as long as the object. Measured against the WeakSet it
 * replaces (docs/benchmarks.md, "The cold path"): adding a private field costs about what adding a property does,
 * a WeakSet entry about 0.25 µs more, and weak entries are work for every garbage collection. An object that
 * cannot take new fields (frozen, sealed) is remembered in a WeakSet instead.
 */
export function createBrand(): Brand {
  const fallback = new WeakSet<object>();
  class Stamp extends Returns {
    #marked = true;

    static carries(target: object): boolean {
      return #marked in target;
    }
  }
  return {
    mark(target) {
      if (Stamp.carries(target)) return;
      if (Object.isExtensible(target)) new Stamp(target);
      else fallback.add(target);
    },
    has(value) {
      if (typeof value !== 'object' || value === null) return false;
      return Stamp.carries(value) || fallback.has(value);
    },
  };
}
