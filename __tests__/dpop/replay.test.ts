import { createMemoryReplayStore } from '../../lib/dpop/replay';

describe('the in-process replay store', () => {
  it('answers true the first time it sees an id and false after, until the id expires', () => {
    let now = 1000;
    const store = createMemoryReplayStore({ clock: () => now });
    expect(store.claimOnce('a', 1060)).toBe(true);
    expect(store.claimOnce('a', 1060)).toBe(false);
    now = 1059;
    expect(store.claimOnce('a', 1119)).toBe(false);
    now = 1060;
    expect(store.claimOnce('a', 1120)).toBe(true);
  });

  it('is bounded: full of live ids it throws (a 503) rather than forget one, and makes room as they expire', () => {
    let now = 1000;
    const store = createMemoryReplayStore({ max: 3, clock: () => now });
    for (const id of ['a', 'b', 'c']) expect(store.claimOnce(id, 1060)).toBe(true);
    expect(() => store.claimOnce('d', 1060)).toThrow('full');
    expect(store.claimOnce('a', 1060)).toBe(false);
    now = 1061;
    expect(store.claimOnce('d', 1121)).toBe(true);
    expect(store.claimOnce('e', 1121)).toBe(true);
    expect(store.claimOnce('d', 1121)).toBe(false);
  });
});
