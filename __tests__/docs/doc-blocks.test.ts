// How the docs harness reads a page: which blocks are programs, their ids, and the markers it cannot use.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { driverPage, readDocs } from '../fixtures/doc-blocks';

const PAGE = `# A page

<!-- doc-test: esm-server -->
\`\`\`ts
import express from 'express';
const app = express();
\`\`\`

<!-- doc-test: cjs-script -->

\`\`\`js
const { createTokenAuth } = require('express-verified-user');
\`\`\`

An excerpt, and a block in a list:

\`\`\`ts
const auth = createTokenAuth({ audience: 'api' });
\`\`\`

- step one:

  \`\`\`js
  const { x } = require('y').z;
  \`\`\`

\`\`\`sh
npm install
\`\`\`

Prose may name the marker, \`<!-- doc-test: <id> -->\`, in code.

<!-- doc-test: on-prose -->
Not a fence.

<!-- doc-test Missing-Colon -->
\`\`\`ts
import 'x';
\`\`\`

<!-- doc-test: on-shell -->
\`\`\`sh
echo
\`\`\`

<!-- doc-test: dangling -->
`;

describe('readDocs', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'evu-doc-blocks-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'README.md'), '# Title\n');
    writeFileSync(join(root, 'docs', 'page.md'), PAGE);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds the ts and js blocks with their line, id, format and whether they are programs', () => {
    const { blocks } = readDocs(root);
    expect(blocks.map(({ where, id, lang, program, format }) => ({ where, id, lang, program, format }))).toEqual([
      { where: 'docs/page.md:4', id: 'esm-server', lang: 'ts', program: true, format: 'esm' },
      { where: 'docs/page.md:11', id: 'cjs-script', lang: 'js', program: true, format: 'cjs' },
      { where: 'docs/page.md:17', id: undefined, lang: 'ts', program: false, format: 'esm' },
      { where: 'docs/page.md:23', id: undefined, lang: 'js', program: true, format: 'cjs' },
      { where: 'docs/page.md:37', id: undefined, lang: 'ts', program: true, format: 'esm' },
    ]);
    expect(blocks[3].text).toBe("const { x } = require('y').z;\n");
  });

  it('names each marker it cannot use, by file and line', () => {
    expect(readDocs(root).markerErrors).toEqual([
      'docs/page.md:33: marker "on-prose" is not on the line before a fence',
      'docs/page.md:36: malformed marker; write <!-- doc-test: an-id -->',
      'docs/page.md:41: marker "on-shell" is on a sh block',
      'docs/page.md:46: marker "dangling" has no block',
    ]);
  });

  it('maps a page to its driver file', () => {
    expect(driverPage('README.md')).toBe('readme');
    expect(driverPage('docs/mcp.md')).toBe('mcp');
  });
});
