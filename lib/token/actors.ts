// Delegation (RFC 8693 §4.1): the `act` claim names who acts for the token's subject, each nested `act` an actor
// before it. Read outermost first, to a bounded depth.

/** One actor of a delegation chain: the claims of its `act` object (usually `sub`, maybe `iss`), without `act`. */
export type Actor = Readonly<Record<string, unknown>>;

/** Most actors read from one chain; a deeper nesting is cut here (Auth0 caps its own chains at 5). */
export const MAX_ACTORS = 10;

/**
 * The `act` chain of verified claims, outermost (the current actor) first; `[]` when there is none. Each actor is a
 * frozen copy of its object without the nested `act`. The walk stops at a value that is not a JSON object (an
 * array or a string is no actor) and after `MAX_ACTORS`, so a hostile nesting costs at most that many steps.
 * RFC 8693 §4.1: only the outermost actor and the top-level claims count for access decisions; prior actors
 * are informational.
 */
export function actorsOf(claims: Readonly<Record<string, unknown>>): Actor[] {
  const actors: Actor[] = [];
  let act: unknown = claims.act;
  while (actors.length < MAX_ACTORS && typeof act === 'object' && act !== null && !Array.isArray(act)) {
    const { act: prior, ...actor } = act as Record<string, unknown>;
    actors.push(Object.freeze(actor));
    act = prior;
  }
  return actors;
}
