// Verified claims are facts shared by every request that sends the same token (the cache hands out one object):
// frozen, all the way down, when they become shared, so no caller can change what a later decision reads.

/**
 * Freeze a parsed JSON value and everything in it, in place; returns it. Paid when claims become shared (verify/
 * cache.ts: admission, in-flight waiters), never on a hit or a first sighting. One walk with an explicit stack and a
 * set of what it has seen: a signed payload can nest thousands deep (no recursion), the whole tree is walked even
 * when the root is frozen already (a validateClaims hook may freeze only the top), and an object a hook attached
 * that points back to the claims is walked once, so the walk always ends.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const stack: object[] = [value];
  const seen = new Set<object>(stack);
  while (stack.length > 0) {
    const item = stack.pop() as Record<string, unknown>;
    for (const key in item) {
      const child = item[key];
      if (typeof child === 'object' && child !== null && !seen.has(child)) {
        seen.add(child);
        stack.push(child);
      }
    }
    Object.freeze(item);
  }
  return value;
}
