// Verified claims are facts shared by every request that sends the same token (the cache hands out one object):
// frozen, all the way down, once per verification, so no caller can change what a later decision reads.

/**
 * Freeze a parsed JSON value and everything in it, in place; returns it. Iterative (a payload nested thousands
 * deep cannot exhaust the stack), and a frozen object is not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const item = stack.pop() as Record<string, unknown>;
    Object.freeze(item);
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) {
        const child: unknown = item[i];
        if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) stack.push(child);
      }
      continue;
    }
    for (const key of Object.keys(item)) {
      const child = item[key];
      if (typeof child === 'object' && child !== null && !Object.isFrozen(child)) stack.push(child);
    }
  }
  return value;
}
