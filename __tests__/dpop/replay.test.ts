import { createMemoryReplayStore, ReplayShareExhausted } from '../../lib/dpop/replay';

describe('the in-process replay store', () => {
  it('answers true the first time it sees an id and false after, through its expiry second inclusive', () => {
    let now = 1000;
    const store = createMemoryReplayStore({ clock: () => now });
    expect(store.claimOnce('a', 1060)).toBe(true);
    expect(store.claimOnce('a', 1060)).toBe(false);
    now = 1060;
    expect(store.claimOnce('a', 1120)).toBe(false);
    now = 1060.5;
    expect(store.claimOnce('a', 1120)).toBe(true);
    expect(store.claimOnce('a', 1120)).toBe(false);
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

  it('lets expired ids leave in expiry order, whatever order they came in', () => {
    let now = 1000;
    const store = createMemoryReplayStore({ max: 5000, clock: () => now });
    // One early id that lives long (a proof with a late iat), then 999 that expire soon: none may linger.
    expect(store.claimOnce('early', 1065)).toBe(true);
    for (let i = 0; i < 999; i++) expect(store.claimOnce(`id-${i}`, 1001 + (i % 3))).toBe(true);
    expect(store.size).toBe(1000);
    now = 1003.5;
    expect(store.claimOnce('late', 1063)).toBe(true);
    expect(store.size).toBe(2);
    expect(store.claimOnce('early', 1065)).toBe(false);
    now = 1066;
    expect(store.claimOnce('later', 1126)).toBe(true);
    expect(store.size).toBe(1);
  });

  it('keeps an id claimed again after it expired, when its old expiry second comes', () => {
    let now = 1000;
    const store = createMemoryReplayStore({ clock: () => now });
    expect(store.claimOnce('a', 1000.25)).toBe(true);
    now = 1000.5;
    expect(store.claimOnce('a', 1060)).toBe(true);
    now = 1002;
    expect(store.claimOnce('b', 1062)).toBe(true);
    expect(store.claimOnce('a', 1060)).toBe(false);
  });

  it('gives each proof key a tenth of the store by default: one key fills its share, others still claim', () => {
    let now = 1000;
    const store = createMemoryReplayStore({ max: 1000, clock: () => now });
    for (let i = 0; i < 100; i++) expect(store.claimOnce(`flood-${i}`, 1065, 'flooder')).toBe(true);
    for (let i = 0; i < 900; i++) expect(() => store.claimOnce(`more-${i}`, 1065, 'flooder')).toThrow(ReplayShareExhausted);
    for (let i = 0; i < 100; i++) expect(store.claimOnce(`other-${i}`, 1065, `client-${i % 9}`)).toBe(true);
    expect(store.size).toBe(200);
    expect(store.claimOnce('flood-0', 1065, 'flooder')).toBe(false); // a replay is still a replay, not a 503
    now = 1066;
    expect(store.claimOnce('flood-again', 1126, 'flooder')).toBe(true);
  });

  it('takes maxPerKey, and refuses bounds that are not positive integers', () => {
    const store = createMemoryReplayStore({ max: 10, maxPerKey: 2, clock: () => 1000 });
    expect(store.claimOnce('a', 1060, 'k')).toBe(true);
    expect(store.claimOnce('b', 1060, 'k')).toBe(true);
    expect(() => store.claimOnce('c', 1060, 'k')).toThrow(ReplayShareExhausted);
    expect(store.claimOnce('c', 1060)).toBe(true); // a caller that names no key is bounded by max alone
    expect(() => createMemoryReplayStore({ max: 0 })).toThrow(new TypeError('express-verified-user: option "max" must be a positive integer'));
    expect(() => createMemoryReplayStore({ maxPerKey: 1.5 })).toThrow(new TypeError('express-verified-user: option "maxPerKey" must be a positive integer'));
  });
});
