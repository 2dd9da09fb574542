// Scope hierarchies (`scopeImplies`: `{ 'mcp:admin': ['mcp:tools'] }`): a granted scope counts as every scope it
// implies, transitively; the closure is made once at set-up (cycles refused), and a token's scopes are widened by
// it only when a route's scopes are not met as granted.
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';

/** `scopeImplies`: each scope and the scopes granting it also grants. */
export type ScopeImpliesOption = Readonly<Record<string, readonly string[]>>;

/** The hierarchy, resolved: a token's granted scopes with everything they imply. */
export interface ScopeImplication {
  /** `granted` and every scope they imply (transitively), the same array when they imply nothing more. */
  widen(granted: readonly string[]): readonly string[];
}

const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/; // RFC 6749 §3.3 scope-token, as routes' scopes are checked

/** The first cycle through `start` (as scope names, start repeated at the end), if there is one. */
function cycleFrom(start: string, edges: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const path: string[] = [];
  const done = new Set<string>();
  const walk = (scope: string): string[] | undefined => {
    const at = path.indexOf(scope);
    if (at !== -1) return [...path.slice(at), scope];
    if (done.has(scope)) return undefined;
    path.push(scope);
    for (const next of edges.get(scope) ?? []) {
      const found = walk(next);
      if (found !== undefined) return found;
    }
    path.pop();
    done.add(scope);
    return undefined;
  };
  return walk(start);
}

/** Every scope `start` implies, transitively (the graph has no cycle). */
function closureOf(start: string, edges: ReadonlyMap<string, readonly string[]>): ReadonlySet<string> {
  const seen = new Set<string>();
  const stack = [...(edges.get(start) ?? [])];
  while (stack.length > 0) {
    const scope = stack.pop() as string;
    if (seen.has(scope)) continue;
    seen.add(scope);
    stack.push(...(edges.get(scope) ?? []));
  }
  return seen;
}

// Widened scopes of frozen arrays (claims shared by the verdict cache, and scope strings split once): a cache hit
// that needs an implied scope looks the widened list up instead of making it again.
type Widened = WeakMap<readonly string[], readonly string[]>;

/** Resolve `scopeImplies` (an OptionError at its dotted path for anything malformed, or naming a cycle). */
export function resolveScopeImplies(value: unknown): ScopeImplication | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value))
    optionError('scopeImplies', 'option "scopeImplies" must be an object { scope: [scopes it implies] }');
  const edges = new Map<string, readonly string[]>();
  for (const [scope, implied] of Object.entries(value)) {
    const path = `scopeImplies.${scope}`;
    if (!SCOPE_TOKEN.test(scope))
      optionError(
        path,
        `option "scopeImplies" names an invalid scope ${JSON.stringify(scope)} (no spaces, quotes or backslashes)`,
      );
    if (!Array.isArray(implied) || implied.length === 0)
      optionError(path, `option "${path}" must be a non-empty array of the scopes it implies`);
    implied.forEach((one: unknown, index) => {
      if (typeof one !== 'string' || !SCOPE_TOKEN.test(one))
        optionError(
          `${path}[${index}]`,
          `option "${path}[${index}]" must be a scope (no spaces, quotes or backslashes)`,
        );
    });
    edges.set(scope, Object.freeze([...new Set(implied as string[])]));
  }
  for (const scope of edges.keys()) {
    const cycle = cycleFrom(scope, edges);
    if (cycle !== undefined)
      optionError(
        `scopeImplies.${scope}`,
        `option "scopeImplies" has a cycle: ${cycle.map((one) => JSON.stringify(one)).join(' → ')} (a scope may not imply itself)`,
      );
  }
  const closure = new Map<string, readonly string[]>();
  for (const scope of edges.keys()) closure.set(scope, Object.freeze([...closureOf(scope, edges)]));
  const widened: Widened = new WeakMap();

  const widen = (granted: readonly string[]): readonly string[] => {
    let all: Set<string> | undefined;
    for (const scope of granted) {
      const implied = closure.get(scope);
      if (implied === undefined) continue;
      all ??= new Set(granted);
      for (const one of implied) all.add(one);
    }
    return all === undefined ? granted : Object.freeze([...all]);
  };
  return {
    widen(granted) {
      let made = widened.get(granted);
      if (made === undefined) {
        made = widen(granted);
        if (Object.isFrozen(granted)) widened.set(granted, made);
      }
      return made;
    },
  };
}
