/**
 * A flood of subject rules (docs/fleet.md#bounds-and-the-full-store-answer), through createMemoryRevocationStore in a
 * child process started with --expose-gc (scripts/rule-flood.js): 3 000 rules, each of another issuer, each `sub` a
 * slice of a 64 KiB text of its own, into a store bounded at 2 000. The store keeps 2 000 and rejects the rest as
 * full; it keeps its own copy of each string, so the texts go (measured: 1.4 MiB kept; 126.5 MiB when it kept the
 * slices, which held their texts).
 */
import { runGcScript } from '../fixtures/gc-child';

interface Report {
  held: number;
  refused: Record<string, number>;
  grown: number;
}

const flood = (args: string[]) => runGcScript<Report>('rule-flood.js', args);

describe('a flood of rules (child process, --expose-gc)', () => {
  it('holds maxRules, rejects the rest as full, and keeps none of the texts their strings were cut from', async () => {
    const report = await flood(['--rules', '3000', '--max-rules', '2000', '--text', '65536']);
    expect(report.held).toBe(2000);
    expect(report.refused).toEqual({ 'revocation-store-full': 1000 });
    // 2 000 rules of a 200-character sub: at most 4 KiB each, where the texts alone would be 125 MiB.
    expect(report.grown).toBeLessThan(2000 * 4096);
  }, 60_000);
});
