// Docs are tested: every code block of README.md and docs/*.md that claims to run (a top-level import or require) is named by a
// `<!-- doc-test: id -->` marker, type-checked as a strict consumer compiles it, and run by its driver in
// `__tests__/docs/<page>.ts` against loopback servers. How to add one: docs/testing.md, "Docs are tested".
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { driverPage, readDocs, type DocBlock } from '../fixtures/doc-blocks';
import { docRun, prepareWork, type DocDriver, type DocDrivers } from '../fixtures/doc-run';
import { programOf, typeCheckBlocks, type CheckedBlock } from '../fixtures/doc-type-check';

/** Every page's driver table, by page name (`readme`, `mcp`, …): each `__tests__/docs/<page>.ts` but this file. */
const pages: Record<string, DocDrivers> = Object.fromEntries(
  readdirSync(__dirname)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .map((name) => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a page's drivers join by their file alone
      const { drivers } = require(join(__dirname, name)) as { drivers: DocDrivers };
      return [name.slice(0, -'.ts'.length), drivers];
    }),
);

const { blocks, markerErrors } = readDocs();
const driverOf = (block: DocBlock): DocDriver | undefined =>
  block.id === undefined ? undefined : pages[driverPage(block.file)]?.[block.id];
const driven: CheckedBlock[] = blocks.flatMap((block) => {
  const driver = driverOf(block);
  return driver === undefined ? [] : [{ block, driver }];
});

beforeAll(() => {
  prepareWork();
}, 300_000);

describe('the docs code blocks', () => {
  it('name every program block with a doc-test id whose driver runs it, and every driver has its block', () => {
    const problems = [...markerErrors];
    const seen = new Map<string, string>();
    for (const block of blocks) {
      const page = `__tests__/docs/${driverPage(block.file)}.ts`;
      if (block.id === undefined) {
        if (block.program)
          problems.push(
            `${block.where}: a ${block.lang} program (a top-level import or require) with no ` +
              `<!-- doc-test: <id> --> line before its fence: name it and add the id's driver to ${page}`,
          );
        continue;
      }
      const twin = seen.get(block.id);
      if (twin !== undefined) problems.push(`${block.where}: doc-test id "${block.id}" is also used at ${twin}`);
      seen.set(block.id, block.where);
      const driver = driverOf(block);
      if (driver === undefined) problems.push(`${block.where}: doc-test id "${block.id}" has no driver in ${page}`);
      else if (block.program && driver.run === undefined)
        problems.push(`${block.where}: "${block.id}" imports, so it claims to run: its driver in ${page} needs run()`);
    }
    for (const [page, drivers] of Object.entries(pages))
      for (const id of Object.keys(drivers))
        if (!blocks.some((b) => b.id === id && driverPage(b.file) === page))
          problems.push(
            `__tests__/docs/${page}.ts: driver "${id}" has no block (no <!-- doc-test: ${id} --> on its page)`,
          );
    expect(problems).toEqual([]);
  });

  it.each(['ts', 'js', 'mcp'] as const)(
    'type-check as a consumer compiles them (the %s program)',
    (program) => {
      const entries = driven.filter((entry) => entry.driver.noTypeCheck === undefined && programOf(entry) === program);
      expect(entries.length).toBeGreaterThan(0);
      expect(typeCheckBlocks(entries, program)).toEqual([]);
    },
    120_000,
  );

  const runs = driven
    .filter(({ driver }) => driver.run !== undefined)
    .map((entry) => [entry.block.where, entry.block.id, entry] as const);
  it.each(runs)(
    '%s (%s) runs as its page says',
    async (_where, _id, { block, driver }) => {
      const t = docRun(block, driver);
      try {
        await driver.run?.(t);
      } catch (err) {
        // What the block wrote on stderr (a stack, a refusal's reason) says why an answer was not the expected one.
        const stderr = t.stderr();
        if (err instanceof Error && stderr !== '') err.message += `\n\n${stderr}`;
        throw err;
      } finally {
        await t.close();
      }
    },
    120_000,
  );
});
