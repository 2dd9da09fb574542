// The guides hold together: every relative link of README.md and docs/*.md names a file of the repository (and, for
// a page, a heading of it when it has an #anchor), docs/README.md, the reading order, lists every guide, and the
// README stays a door of at most 200 lines.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { docPages, REPO_ROOT } from '../fixtures/doc-blocks';

/** A page's text without its fenced blocks and inline code, where link-like text is code, not a link. */
function prose(text: string): string {
  return text.replace(/^\s*(`{3,}|~{3,})[\s\S]*?^\s*\1\s*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings (code spans keep their text, as GitHub's do). */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^\s*(`{3,}|~{3,})[\s\S]*?^\s*\1\s*$/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1].replace(/`/g, ''))));
}

/** Every relative link of a page: `[text](target)`, with its target's path and anchor. */
function linksOf(page: string): Array<{ target: string; path: string; anchor: string | undefined }> {
  const text = prose(readFileSync(join(REPO_ROOT, page), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/i.test(target))
    .map((target) => {
      const [file, anchor] = target.split('#');
      const path = file === '' ? join(REPO_ROOT, page) : normalize(join(REPO_ROOT, dirname(page), file));
      return { target, path, anchor };
    });
}

describe('the links of README.md and docs/', () => {
  it('name files of the repository, and headings of the pages they name', () => {
    const broken: string[] = [];
    for (const page of docPages()) {
      for (const { target, path, anchor } of linksOf(page)) {
        if (!existsSync(path)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(path).has(anchor))
          broken.push(`${page}: ${target} (no heading #${anchor} in ${relative(REPO_ROOT, path)})`);
      }
    }
    // The check finds links at all: a broken pattern would pass vacuously.
    expect(linksOf('README.md').length).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it('docs/README.md, the reading order, lists every guide of docs/', () => {
    const listed = new Set(linksOf('docs/README.md').map(({ path }) => relative(REPO_ROOT, path)));
    const guides = docPages().filter((page) => page.startsWith('docs/') && page !== 'docs/README.md');
    expect(guides.filter((guide) => !listed.has(guide))).toEqual([]);
  });
});

describe('README.md', () => {
  it('is the door, at most 200 lines: everything longer lives in docs/', () => {
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(200);
  });
});
