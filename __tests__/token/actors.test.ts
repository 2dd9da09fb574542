/** `auth.actorsOf(claims)` (RFC 8693 §4.1): the `act` chain, outermost first, bounded. */
import { actorsOf, MAX_ACTORS } from '../../lib/token/actors';

describe('actorsOf', () => {
  it('answers [] for claims without act', () => {
    expect(actorsOf({ sub: 'alice' })).toEqual([]);
  });

  it('reads the chain outermost first, each actor without its nested act', () => {
    const claims = {
      sub: 'alice',
      act: { sub: 'mcp-server', iss: 'https://as.example', act: { sub: 'gateway', act: { sub: 'edge' } } },
    };
    expect(actorsOf(claims)).toEqual([
      { sub: 'mcp-server', iss: 'https://as.example' },
      { sub: 'gateway' },
      { sub: 'edge' },
    ]);
    expect(Object.isFrozen(actorsOf(claims)[0])).toBe(true);
  });

  it.each([
    ['a string', 'mcp-server'],
    ['an array', [{ sub: 'mcp-server' }]],
    ['null', null],
  ])('stops at an act that is %s', (_what, act) => {
    expect(actorsOf({ sub: 'alice', act: { sub: 'first', act } })).toEqual([{ sub: 'first' }]);
  });

  it(`reads at most ${MAX_ACTORS} actors of a hostile nesting`, () => {
    let act: Record<string, unknown> = { sub: 'deepest' };
    for (let i = 0; i < 10_000; i++) act = { sub: `actor-${i}`, act };
    const actors = actorsOf({ sub: 'alice', act });
    expect(actors).toHaveLength(MAX_ACTORS);
    expect(actors[0]).toEqual({ sub: 'actor-9999' });
  });
});
