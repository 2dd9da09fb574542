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
    for (let i = 0; i < 900; i++)
      expect(() => store.claimOnce(`more-${i}`, 1065, 'flooder')).toThrow(ReplayShareExhausted);
    for (let i = 0; i < 100; i++) expect(store.claimOnce(`other-${i}`, 1065, `client-${i % 9}`)).toBe(true);
    expect(store.size).toBe(200);
    expect(store.claimOnce('flood-0', 1065, 'flooder')).toBe(false); // a replay is still a replay, not a 503
    now = 1066;
    expect(store.claimOnce('flood-again', 1126, 'flooder')).toBe(true);
  });

  it('keeps room for other keys when ten keys flood it together: a fresh key still claims, the flooders are refused', () => {
    const store = createMemoryReplayStore({ max: 1000, clock: () => 1000 });
    const flooders = new Set(Array.from({ length: 10 }, (_, i) => `flooder-${i}`));
    const accepted = new Map<string, number>();
    let sent = 0;
    for (let round = 0; round < 1000 && flooders.size > 0; round++) {
      for (const key of [...flooders]) {
        try {
          expect(store.claimOnce(`flood-${sent++}`, 1065, key)).toBe(true);
          accepted.set(key, (accepted.get(key) ?? 0) + 1);
        } catch (err) {
          expect(err).toBeInstanceOf(ReplayShareExhausted); // refused for its share, never because the store is full
          flooders.delete(key);
        }
      }
    }
    expect(flooders.size).toBe(0);
    expect(store.size).toBe(730); // ten keys of 73: at 730 held, 270 free, a key's share is 270 × 270 / 1 000 < 73
    expect([...accepted.values()]).toEqual(Array(10).fill(73));
    for (let i = 0; i < 20; i++) expect(store.claimOnce(`fresh-${i}`, 1065, 'fresh')).toBe(true);
    for (let i = 0; i < 10; i++) expect(store.claimOnce(`late-${i}`, 1065, `late-${i}`)).toBe(true);
    expect(() => store.claimOnce('flood-more', 1065, 'flooder-0')).toThrow(ReplayShareExhausted);
    expect(store.claimOnce('flood-0', 1065, 'flooder-0')).toBe(false); // a replay is still a replay, not a 503
  });

  it("shrinks a key's share as the store fills: with 100 of 1 000 free a key gets 9 ids, the next key 8", () => {
    const store = createMemoryReplayStore({ max: 1000, clock: () => 1000 });
    for (let i = 0; i < 900; i++) store.claimOnce(`keyless-${i}`, 1065); // a caller naming no key: bounded by max alone
    const claimUntilRefused = (key: string) => {
      let held = 0;
      for (; held < 100; held++) {
        try {
          store.claimOnce(`${key}-${held}`, 1065, key);
        } catch (err) {
          expect(err).toBeInstanceOf(ReplayShareExhausted);
          break;
        }
      }
      return held;
    };
    expect(claimUntilRefused('a')).toBe(9); // holding 9 with 91 free: 9 × 1 000 ≥ 91 × 91
    expect(claimUntilRefused('b')).toBe(8);
    expect(store.claimOnce('c-0', 1065, 'c')).toBe(true); // a key holding nothing is refused only by a full store
  });

  it('full of live ids (a thousand keys of one id each), still refuses rather than forget one', () => {
    let now = 1000;
    const store = createMemoryReplayStore({ max: 1000, clock: () => now });
    const claimed: string[] = [];
    let error: unknown;
    for (let i = 0; i < 1001 && error === undefined; i++) {
      try {
        expect(store.claimOnce(`id-${i}`, 1065, `key-${i}`)).toBe(true);
        claimed.push(`id-${i}`);
      } catch (err) {
        error = err;
      }
    }
    expect(claimed).toHaveLength(1000);
    expect(error).toEqual(new Error('in-process replay store is full'));
    for (const id of claimed) expect(store.claimOnce(id, 1065, `key-${id.slice(3)}`)).toBe(false);
    expect(store.size).toBe(1000);
    now = 1066;
    expect(store.claimOnce('id-1000', 1126, 'key-1000')).toBe(true);
  });

  it('takes maxPerKey, and refuses bounds that are not positive integers', () => {
    const store = createMemoryReplayStore({ max: 10, maxPerKey: 2, clock: () => 1000 });
    expect(store.claimOnce('a', 1060, 'k')).toBe(true);
    expect(store.claimOnce('b', 1060, 'k')).toBe(true);
    expect(() => store.claimOnce('c', 1060, 'k')).toThrow(ReplayShareExhausted);
    expect(store.claimOnce('c', 1060)).toBe(true); // a caller that names no key is bounded by max alone
    expect(() => createMemoryReplayStore({ max: 0 })).toThrow(
      new TypeError('express-verified-user: option "max" must be a positive integer'),
    );
    expect(() => createMemoryReplayStore({ maxPerKey: 1.5 })).toThrow(
      new TypeError('express-verified-user: option "maxPerKey" must be a positive integer'),
    );
  });
});
