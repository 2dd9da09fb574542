// Which new `kid`s a key source that fetches one key per `kid` (AWS ALB's) may fetch now: at most MAX_KID_FETCHES per
// window, a window's slots going first to the kids requests keep asking for (a rotation) over one-off kids (a flood of
// made-up UUIDs), and kids the key server does not know remembered for a while. Its memory is fixed, whatever the flood.
import { createHmac, createSecretKey, randomBytes } from 'node:crypto';

/**
 * Most fetches of `kid`s not held that start within one window (the cooldown): a flood of made-up UUIDs costs the
 * key server this many requests per window.
 */
export const MAX_KID_FETCHES = 4;

/**
 * Kids the key server answered 403 or 404 for, remembered (answered 401 without a fetch) for UNKNOWN_KID_SECONDS,
 * at most this many, the oldest forgotten first. At most MAX_KID_FETCHES are learnt per window, so at the default
 * cooldown (30 s) every one is kept its whole time (40 per 300 s).
 */
export const UNKNOWN_KIDS = 64;
export const UNKNOWN_KID_SECONDS = 300;

/**
 * Kids refused a fetch for the budget and asked again, tracked by name for the next window's slots (the most asked
 * kept when more are): a rotated kid that requests keep asking for is among them, one-off kids are not. The next
 * window hands its slots to them by rank, MAX_KID_FETCHES at a time: each group of MAX_KID_FETCHES has slots held for
 * it during its turn, one of WAITING_KIDS / MAX_KID_FETCHES + 1 equal parts of the window (6 s at 30 s), the last part
 * open to all. A kid that no longer asks holds slots for one turn at most.
 */
export const WAITING_KIDS = 16;
const GROUPS = Math.ceil(WAITING_KIDS / MAX_KID_FETCHES);

/**
 * How often each refused kid was asked, for every kid at once in fixed memory: a count-min sketch (SKETCH_ROWS rows
 * of SKETCH_WIDTH 16-bit counters, 32 KiB), its cells chosen by a keyed hash (HMAC-SHA-256 under a secret made at
 * start), so no one can pick kids that share a rotated kid's cells, or each other's. Each window keeps 7/8 of every
 * count: a kid asked window after window (a rotation its requests keep asking for) builds up about eight windows'
 * asks, a kid fetched and answered 403 after one or two windows cannot. A flood only adds noise to every count alike.
 */
const SKETCH_ROWS = 4;
const SKETCH_WIDTH = 4096;
const MAX_COUNT = 0xffff;

/** Windows after which every count has decayed to nothing (7/8 a window: 65 535 → 0 within 72). */
const FORGOTTEN_AFTER = 72;

/** A kid asked at least this often (by the sketch, in the last windows) has its name tracked. */
const ASKED_AGAIN = 2;

/** What a new kid gets now: its fetch, a 401 (the key server said it does not know it), or a wait (503). */
export type KidTurn = 'fetch' | 'unknown' | 'wait';

/** The budget of new kids of one key source. */
export interface KidBudget {
  /** Whether `kid` (not held, no fetch of it under way) is fetched now; a `wait` is counted as an ask. */
  turn(kid: string, now: number): KidTurn;
  /** The key server answered that it does not know `kid` (403, 404): remembered for UNKNOWN_KID_SECONDS. */
  unknown(kid: string, now: number): void;
  /** Seconds until a kid refused now may be fetched (`Retry-After`). */
  retryAfter(now: number): number;
  /** What it holds, for tests of its bounds. */
  sizes(): { waiting: number; ranked: number; unknown: number };
}

/**
 * A budget of MAX_KID_FETCHES new kids per `cooldown` seconds. When a window opens, its slots go first to the kids
 * tracked as asked again in the window before, the most asked first, by turns (WAITING_KIDS); what the kids whose
 * turn it is leave goes to whoever asks first. A rotated kid asked in one window is so fetched in the next, however
 * many one-off kids flood in meanwhile. A flood holds it back only with kids of its own asked more often than
 * requests ask the real one: those that ask are fetched once, answered 403 and remembered; to keep it out of the
 * ranks by kids that then stay silent takes WAITING_KIDS of them, every window.
 */
export function kidBudget(cooldown: number): KidBudget {
  const secret = createSecretKey(randomBytes(32));
  const counts = new Uint16Array(SKETCH_ROWS * SKETCH_WIDTH);
  /** Kids asked again in this window, with the count the sketch gave at their last ask. */
  const waiting = new Map<string, number>();
  /** The kids asked again in the last window, most asked first, and those of them given a slot in this one. */
  let ranked: string[] = [];
  let rankOf = new Map<string, number>();
  const claimed = new Set<string>();
  const turnLength = cooldown / (GROUPS + 1);
  /** Kids the key server does not know, with when they are forgotten, oldest first. */
  const unknown = new Map<string, number>();
  let windowStart = -Infinity;
  let used = 0;

  function cellsOf(kid: string): number[] {
    const digest = createHmac('sha256', secret).update(kid).digest();
    const cells: number[] = [];
    for (let row = 0; row < SKETCH_ROWS; row++)
      cells.push(row * SKETCH_WIDTH + (digest.readUInt16BE(row * 2) & (SKETCH_WIDTH - 1)));
    return cells;
  }

  /** Count one ask of `kid` (conservative update: only its lowest cells grow) and answer its new count. */
  function ask(kid: string): number {
    const cells = cellsOf(kid);
    let least = MAX_COUNT;
    for (const cell of cells) least = Math.min(least, counts[cell]);
    if (least === MAX_COUNT) return least;
    for (const cell of cells) if (counts[cell] === least) counts[cell] = least + 1;
    return least + 1;
  }

  /** A refused ask: counted, and its kid tracked by name once asked again (the least asked giving way when full). */
  function note(kid: string): void {
    const count = ask(kid);
    if (waiting.has(kid)) {
      waiting.set(kid, count);
      return;
    }
    if (count < ASKED_AGAIN) return;
    if (waiting.size >= WAITING_KIDS) {
      let least: [string, number] | undefined;
      for (const entry of waiting) if (least === undefined || entry[1] < least[1]) least = entry;
      if (least === undefined || least[1] >= count) return;
      waiting.delete(least[0]);
    }
    waiting.set(kid, count);
  }

  function open(now: number): void {
    const windows = Number.isFinite(windowStart) ? Math.floor((now - windowStart) / cooldown) : Infinity;
    if (windows >= FORGOTTEN_AFTER) counts.fill(0);
    else for (let w = 0; w < windows; w++) for (let i = 0; i < counts.length; i++) counts[i] = (counts[i] * 7) >>> 3;
    // Only kids asked in the window that just ended rank: after a window with no ask at all, none does.
    ranked = windows === 1 ? [...waiting].sort((a, b) => b[1] - a[1]).map(([kid]) => kid) : [];
    rankOf = new Map(ranked.map((kid, rank) => [kid, rank]));
    claimed.clear();
    waiting.clear();
    windowStart = now;
    used = 0;
  }

  /** The first rank whose turn it is now (the turns run by groups of MAX_KID_FETCHES, then all may ask). */
  function turnOf(now: number): number {
    return Math.max(0, Math.floor((now - windowStart) / turnLength)) * MAX_KID_FETCHES;
  }

  /** Slots held now for the kids whose turn it is and who have not had one, of them those ranked above `rank`. */
  function held(now: number, rank: number): number {
    const first = turnOf(now);
    const end = Math.min(first + MAX_KID_FETCHES, ranked.length, rank);
    let count = 0;
    for (let r = first; r < end; r++) if (!claimed.has(ranked[r])) count++;
    return count;
  }

  return {
    turn(kid, now) {
      const until = unknown.get(kid);
      if (until !== undefined) {
        if (now < until) return 'unknown';
        unknown.delete(kid);
      }
      if (now - windowStart >= cooldown) open(now);
      // A ranked kid whose turn has come yields only to kids ranked above it; any other kid to all whose turn it is.
      const rank = rankOf.get(kid);
      const turnCame = rank !== undefined && rank < turnOf(now) + MAX_KID_FETCHES;
      if (used + held(now, turnCame ? rank : Infinity) < MAX_KID_FETCHES) {
        used++;
        if (rank !== undefined) claimed.add(kid);
        waiting.delete(kid);
        return 'fetch';
      }
      note(kid);
      return 'wait';
    },
    unknown(kid, now) {
      unknown.delete(kid);
      unknown.set(kid, now + UNKNOWN_KID_SECONDS);
      if (unknown.size > UNKNOWN_KIDS) unknown.delete(unknown.keys().next().value as string);
    },
    retryAfter(now) {
      if (now - windowStart >= cooldown || used + held(now, Infinity) < MAX_KID_FETCHES) return 1;
      return Math.max(1, Math.ceil(windowStart + cooldown - now));
    },
    sizes: () => ({ waiting: waiting.size, ranked: ranked.length, unknown: unknown.size }),
  };
}
