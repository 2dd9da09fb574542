/**
 * A small fuzzing run inside `npm test` (a few hundred cases per Express version; `npm run fuzz` runs 100 000+):
 * random Authorization headers and random damage to genuine tokens, through real Express 5 and 4 apps. Never a
 * 2xx unless the header carries exactly a genuine token, never a 5xx, never an unhandled rejection.
 */
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { runFuzz } from './fuzzing';

describe.each(EXPRESS_VERSIONS)('fuzzing through %s', (_name, express) => {
  it('refuses every random header and every damaged token with the exact 401, and accepts only genuine tokens', async () => {
    const figures = await runFuzz({ express, numRuns: 150 });
    expect(figures.unhandledRejections).toBe(0);
    expect(Object.keys(figures.statuses).sort()).toEqual(expect.arrayContaining(['200', '401']));
    expect(Object.keys(figures.statuses).filter((status) => status !== '200' && status !== '401')).toEqual([]);
    expect(Object.values(figures.cases).reduce((a, b) => a + b, 0)).toBe(4 * 150);
  }, 60_000);

  it('does the same with the result cache on (remembered verdicts must be the same verdicts)', async () => {
    const figures = await runFuzz({ express, numRuns: 100, cache: { max: 64 } });
    expect(figures.unhandledRejections).toBe(0);
    expect(Object.keys(figures.statuses).filter((status) => status !== '200' && status !== '401')).toEqual([]);
  }, 60_000);
});
