/**
 * The result cache's admission rule: a success enters the cache on its token's second sighting, so cold traffic
 * (every token new) costs no more with the cache on than with `cache: false`: no SHA-256 key, no LRU lookup, no
 * insertion and eviction for a token that is never seen again.
 *
 * `Sightings` remembers which tokens were seen recently in a fixed table of 32-bit fingerprints taken from the
 * token's last characters (its signature: random for any signed token). It is a hint, never a cache key: a
 * collision only makes a first sighting look like a second, which costs what every sighting cost before this
 * rule (a key, a lookup, an admission); it can never make a token pass. The table forgets everything after
 * one to two `horizon`s of sightings it had to record: a token seen again only after more new tokens than the
 * cache holds would have been pushed out of it anyway, so admitting it would buy nothing. The cache keeps one
 * table for successes and one for faults, each aged only by its own kind, so a flood of bad tokens never makes a
 * cached user look new.
 */

/** The fingerprint of a token that `Sightings` works with: computed once per request, shared by both tables. */
export function fingerprint(token: string): number {
  const end = token.length;
  let h = 0x811c9dc5 ^ end;
  for (let i = end > 16 ? end - 16 : 0; i < end; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
  // FNV-1a's low bits are weak; a final avalanche (murmur3's) spreads every character over the slot index.
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Recent sightings of tokens, as fingerprints in two generations of a fixed table (see the file comment). */
export class Sightings {
  private current: Uint32Array;
  private previous: Uint32Array;
  private readonly mask: number;
  private marked = 0;

  constructor(private readonly horizon: number) {
    let slots = 1024;
    // Twice the horizon keeps collisions rare; 2^20 slots (4 MiB a table) is the most it ever takes.
    while (slots < horizon * 2 && slots < 2 ** 20) slots *= 2;
    this.current = new Uint32Array(slots);
    this.previous = new Uint32Array(slots);
    this.mask = slots - 1;
  }

  /** Record a sighting of `token`; true when it was (probably) seen before within the horizon. */
  sight(token: string): boolean {
    const h = fingerprint(token);
    if (this.seen(h)) return true;
    this.record(h);
    return false;
  }

  /**
   * Whether a token with this fingerprint was (probably) recorded within the horizon. One found only in the older
   * generation is recorded again: a token seen at least once per horizon (a hot one) is never forgotten.
   */
  seen(h: number): boolean {
    // Four-way sets (16 bytes, one cache line): a token's print may sit in any slot of its set, so a few
    // collisions do not push it out; measured, 98.9 % of 10 000 tokens are recognised on their second sighting.
    const set = h & this.mask & ~3;
    const print = (Math.imul(h, 0x9e3779b1) | 1) >>> 0;
    if (inSet(this.current, set, print)) return true;
    if (!inSet(this.previous, set, print)) return false;
    this.store(set, print);
    return true;
  }

  /** Record a token's first sighting, by its fingerprint. */
  record(h: number): void {
    const set = h & this.mask & ~3;
    const print = (Math.imul(h, 0x9e3779b1) | 1) >>> 0;
    if (!inSet(this.current, set, print)) this.store(set, print);
  }

  private store(set: number, print: number): void {
    if (++this.marked > this.horizon) {
      const emptied = this.previous;
      emptied.fill(0);
      this.previous = this.current;
      this.current = emptied;
      this.marked = 1;
    }
    const table = this.current;
    let free = set + (print & 3);
    for (let i = set; i < set + 4; i++) {
      if (table[i] === 0) {
        free = i;
        break;
      }
    }
    table[free] = print;
  }
}

function inSet(table: Uint32Array, set: number, print: number): boolean {
  return table[set] === print || table[set + 1] === print || table[set + 2] === print || table[set + 3] === print;
}
