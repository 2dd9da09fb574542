// Verified claims are facts shared by every request that sends the same token (the cache hands out one object):
// frozen, all the way down, when they become shared, so no caller can change what a later decision reads.

/** Nesting walked by recursion (fast); deeper parts are walked with an explicit stack (a signed payload can nest thousands deep). */
const RECURSION_LIMIT = 64;

/** Freeze everything under `root` and `root` itself, without recursion. */
function freezeDeepNested(root: object): void {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const item = stack.pop() as Record<string, unknown>;
    for (const key in item) {
      const child = item[key];
      if (typeof child === 'object' && child !== null) stack.push(child);
    }
    Object.freeze(item);
  }
}

function freeze(value: object, depth: number): void {
  if (depth > RECURSION_LIMIT) {
    freezeDeepNested(value);
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child === 'object' && child !== null) freeze(child, depth + 1);
    }
  } else {
    // for…in over a parsed JSON object sees its own keys only; children first, then the object (measured faster).
    for (const key in value) {
      const child = (value as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) freeze(child, depth + 1);
    }
  }
  Object.freeze(value);
}

/**
 * Freeze a parsed JSON value and everything in it, in place; returns it. About 0.3 µs for a Shape B payload
 * (seven objects and arrays), paid when claims become shared (verify/cache.ts), never on a hit. The whole tree is
 * walked even when the root is frozen already: a validateClaims hook may have frozen only the top.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) freeze(value, 0);
  return value;
}
