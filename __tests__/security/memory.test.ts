/**
 * Bounded memory (issue 6; docs/caching.md, docs/security-model.md): 200 000 distinct valid tokens, and 200 000
 * distinct invalid ones, through verify() in a child process started with --expose-gc (scripts/memory-bound.js). The
 * clock stands still, so no entry ever expires and only the bounds can hold the cache down: the worst case.
 *
 * Stated bounds, against the heap after a full GC before the first token:
 * - the cache never holds more than `max` entries (10 000, the default);
 * - the heap grows by at most 24 MiB: the default `cache.maxBytes` (16 MiB) plus 8 MiB of fixed overhead
 *   (measured on Node 20: 14.5 MiB for valid tokens); invalid ones live in the faults' own tenth of the bounds,
 *   at most 1 000 entries and 4 MiB (measured: 1.5 MiB; 15.2 MiB when they shared the successes' bounds);
 * - once the cache is full the heap is flat: the last tenth of the run adds under 2 MiB;
 * - with a huge `max` and `maxBytes` of 4 MiB, the byte bound alone holds the heap to 4 MiB plus 4 MiB.
 */
import { runGcScript } from '../fixtures/gc-child';

interface Report {
  kind: string;
  count: number;
  max: number;
  maxBytes: number;
  accepted: number;
  refused: number;
  largest: number;
  stats: { size: number; evictions: number };
  samples: Array<{ at: number; heap: number; size: number }>;
}

const MiB = 1024 * 1024;

const run = (args: string[]) => runGcScript<Report>('memory-bound.js', args);

function growth(report: Report): { total: number; lastTenth: number } {
  const { samples } = report;
  const start = samples[0].heap;
  const end = samples[samples.length - 1].heap;
  return { total: end - start, lastTenth: end - samples[samples.length - 2].heap };
}

describe('memory bound (child process, --expose-gc)', () => {
  let valid: Report;
  let invalid: Report;
  let bytes: Report;
  beforeAll(async () => {
    [valid, invalid, bytes] = await Promise.all([
      run(['--kind', 'valid', '--count', '200000']),
      run(['--kind', 'invalid', '--count', '200000']),
      run(['--kind', 'valid', '--count', '100000', '--max', '1000000', '--max-bytes', String(4 * MiB)]),
    ]);
  }, 110_000);

  it('verifies 200 000 distinct valid tokens with the cache never above max and the heap within 24 MiB, flat once full', () => {
    expect(valid.accepted).toBe(200_000);
    expect(valid.largest).toBe(10_000);
    expect(valid.stats.evictions).toBe(190_000);
    for (const sample of valid.samples) expect(sample.size).toBeLessThanOrEqual(10_000);
    const { total, lastTenth } = growth(valid);
    expect(total).toBeLessThan(24 * MiB);
    expect(lastTenth).toBeLessThan(2 * MiB);
  });

  it("refuses 200 000 distinct invalid tokens (forged, expired, wrong audience, not JSON) within the faults' tenth of the bounds", () => {
    expect(invalid.refused).toBe(200_000);
    // Faults have their own LRU: a tenth of max (1 000) and of maxBytes (1.6 MiB; measured 1.5 MiB of heap).
    expect(invalid.largest).toBeLessThanOrEqual(1_000);
    for (const sample of invalid.samples) expect(sample.size).toBeLessThanOrEqual(1_000);
    const { total, lastTenth } = growth(invalid);
    expect(total).toBeLessThan(4 * MiB);
    expect(lastTenth).toBeLessThan(2 * MiB);
  });

  it('holds the heap by cache.maxBytes alone when max is out of reach', () => {
    expect(bytes.accepted).toBe(100_000);
    // Every entry counts its token (over 800 characters) plus 256 bytes, so 4 MiB holds well under 4 096 of them.
    expect(bytes.largest).toBeLessThan(4096);
    const { total, lastTenth } = growth(bytes);
    expect(total).toBeLessThan(8 * MiB);
    expect(lastTenth).toBeLessThan(2 * MiB);
  });
});
