// keys/kid-budget.ts on a deterministic clock: at most MAX_KID_FETCHES new kids per window, a window's slots going
// first to the kids requests keep asking for, so a rotated kid waits at most one window behind a flood of one-off
// kids of any size; kids the key server does not know remembered for a while; fixed memory whatever the flood.
import { randomUUID } from 'node:crypto';
import {
  kidBudget,
  MAX_KID_FETCHES,
  UNKNOWN_KID_SECONDS,
  UNKNOWN_KIDS,
  WAITING_KIDS,
  type KidBudget,
} from '../../lib/keys/kid-budget';

const COOLDOWN = 30;

/**
 * A flood of `perSecond` one-off kids (each asked once) from `start` (so each window's slots go at once), and a
 * rotated kid asked every 500 ms from `start + 0.25`, for at most `seconds`: when (seconds after its first ask) the
 * rotated kid was let through, if ever.
 */
function rotationUnderFlood(budget: KidBudget, perSecond: number, seconds = 40, start = 1_000): number | undefined {
  const rotated = randomUUID();
  const step = 1 / perSecond;
  let nextAsk = start + 0.25;
  for (let i = 0; i < seconds * perSecond; i++) {
    const now = start + i * step;
    budget.turn(randomUUID(), now);
    if (now >= nextAsk) {
      if (budget.turn(rotated, now) === 'fetch') return now - (start + 0.25);
      nextAsk += 0.5;
    }
  }
  return undefined;
}

describe('kidBudget', () => {
  it(`lets ${MAX_KID_FETCHES} new kids through per window, then says when the next window opens`, () => {
    const budget = kidBudget(COOLDOWN);
    for (let i = 0; i < MAX_KID_FETCHES; i++) expect(budget.turn(randomUUID(), 100)).toBe('fetch');
    expect(budget.retryAfter(110)).toBe(20);
    expect(budget.turn(randomUUID(), 110)).toBe('wait');
    expect(budget.turn(randomUUID(), 130)).toBe('fetch');
    expect(budget.retryAfter(130)).toBe(1);
  });

  it.each([20, 1_000])(
    'lets a kid asked every 500 ms through within one window, under a flood of %i one-off kids a second',
    (perSecond) => {
      const waited = rotationUnderFlood(kidBudget(COOLDOWN), perSecond);
      expect(waited).toBeDefined();
      expect(waited).toBeLessThanOrEqual(COOLDOWN + 1);
    },
  );

  it('holds a rotated kid back a few windows at most when a flood out-asks it with kids it replaces once fetched', () => {
    // 20 asks a second over 4 forged kids (5 a second each, against the rotated kid's 2), each forged kid replaced
    // the moment it is fetched (the key server then says it does not know it): about 90 s in bench/alb-rotation.js.
    const budget = kidBudget(COOLDOWN);
    const forged = Array.from({ length: 4 }, () => randomUUID());
    const rotated = randomUUID();
    let fetchedAt: number | undefined;
    for (let step = 0; step < 20 * 300 && fetchedAt === undefined; step++) {
      const now = 1_000 + step / 20;
      const slot = step % forged.length;
      if (budget.turn(forged[slot], now) === 'fetch') {
        budget.unknown(forged[slot], now);
        forged[slot] = randomUUID();
      }
      if (step % 10 === 5 && budget.turn(rotated, now) === 'fetch') fetchedAt = now - 1_000.25;
    }
    expect(fetchedAt).toBeDefined();
    expect(fetchedAt).toBeLessThanOrEqual(4 * COOLDOWN);
  });

  it('gives the slots to the kids asked most when more kids keep asking than a window has slots', () => {
    const budget = kidBudget(COOLDOWN);
    for (let i = 0; i < MAX_KID_FETCHES; i++) budget.turn(randomUUID(), 100); // the window's slots are gone
    const kids = Array.from({ length: MAX_KID_FETCHES + 2 }, () => randomUUID());
    // Kid i is asked i + 2 times in this window: the two asked least are left for a later window.
    kids.forEach((kid, i) => {
      for (let n = 0; n < i + 2; n++) expect(budget.turn(kid, 101 + n)).toBe('wait');
    });
    for (let i = 0; i < 50; i++) budget.turn(randomUUID(), 120); // one-off kids ask too
    expect(budget.turn(randomUUID(), 130)).toBe('wait'); // the new window's slots are held for the most asked
    expect(budget.sizes().ranked).toBe(kids.length);
    expect(kids.map((kid) => budget.turn(kid, 131))).toEqual(['wait', 'wait', 'fetch', 'fetch', 'fetch', 'fetch']);
  });

  it('holds slots for kids that no longer ask for one turn at most (6 s of a 30 s window)', () => {
    const budget = kidBudget(COOLDOWN);
    for (let i = 0; i < MAX_KID_FETCHES; i++) budget.turn(randomUUID(), 100);
    // Four kids asked far more than the rotated one in this window, then never again.
    const silent = Array.from({ length: MAX_KID_FETCHES }, () => randomUUID());
    for (const kid of silent) for (let n = 0; n < 20; n++) budget.turn(kid, 101 + n / 10);
    const rotated = randomUUID();
    for (let n = 0; n < 5; n++) budget.turn(rotated, 110 + n);
    // The next window: the silent kids' turn holds every slot, against the rotated kid and one-off kids alike.
    expect(budget.turn(randomUUID(), 130)).toBe('wait');
    expect(budget.turn(rotated, 131)).toBe('wait');
    expect(budget.turn(rotated, 135.5)).toBe('wait');
    expect(budget.retryAfter(135.5)).toBe(25);
    // Its group's turn (the second): a slot is held for it; once it has one, the rest go to whoever asks.
    expect(budget.turn(randomUUID(), 136)).toBe('fetch');
    expect(budget.turn(randomUUID(), 136)).toBe('fetch');
    expect(budget.turn(randomUUID(), 136)).toBe('fetch');
    expect(budget.turn(randomUUID(), 136)).toBe('wait');
    expect(budget.turn(rotated, 136.2)).toBe('fetch');
  });

  it('keeps no claim for a kid no longer asked: after a window without asks, whoever asks first is let through', () => {
    const budget = kidBudget(COOLDOWN);
    for (let i = 0; i < MAX_KID_FETCHES; i++) budget.turn(randomUUID(), 100);
    const gone = randomUUID();
    budget.turn(gone, 101);
    budget.turn(gone, 102);
    expect(budget.turn(randomUUID(), 161)).toBe('fetch');
    expect(budget.sizes().ranked).toBe(0);
  });

  it(`remembers a kid the key server does not know for ${UNKNOWN_KID_SECONDS} s, at most ${UNKNOWN_KIDS} of them`, () => {
    const budget = kidBudget(COOLDOWN);
    const kids = Array.from({ length: UNKNOWN_KIDS + 1 }, () => randomUUID());
    kids.forEach((kid) => budget.unknown(kid, 100));
    expect(budget.sizes().unknown).toBe(UNKNOWN_KIDS);
    expect(budget.turn(kids[UNKNOWN_KIDS], 100 + UNKNOWN_KID_SECONDS - 1)).toBe('unknown');
    expect(budget.turn(kids[0], 101)).toBe('fetch'); // the oldest was forgotten
    expect(budget.turn(kids[1], 100 + UNKNOWN_KID_SECONDS)).toBe('fetch');
  });

  it('holds fixed memory under a flood of 20 000 kids, each asked twice', () => {
    const budget = kidBudget(COOLDOWN);
    for (let i = 0; i < 20_000; i++) {
      const kid = randomUUID();
      const now = 100 + i / 200;
      budget.turn(kid, now);
      budget.turn(kid, now);
      if (i % 50 === 0) budget.unknown(kid, now);
    }
    const sizes = budget.sizes();
    expect(sizes.waiting).toBeLessThanOrEqual(WAITING_KIDS);
    expect(sizes.ranked).toBeLessThanOrEqual(WAITING_KIDS);
    expect(sizes.unknown).toBeLessThanOrEqual(UNKNOWN_KIDS);
  });
});
