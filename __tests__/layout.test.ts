import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkLayout } = require('../scripts/layout-rules.js') as { checkLayout: (lib: string) => string[] };

/** A throwaway lib/ with the given files (path → text). */
function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'evu-layout-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('the layout of lib/ (docs/architecture.md)', () => {
  it('holds: imports run one way, no cycles, every room says what it is, no file over 300 lines', () => {
    expect(checkLayout(path.join(__dirname, '..', 'lib'))).toEqual([]);
  });

  it('refuses a folder importing a folder above it', () => {
    const lib = tree({
      'token/a.ts': "// a\nimport { b } from '../verify/b';\nexport const a = b;\n",
      'verify/b.ts': '// b\nexport const b = 1;\n',
    });
    expect(checkLayout(lib)).toEqual([expect.stringContaining('token/ may not import verify/')]);
  });

  it('refuses a folder importing a top-level file', () => {
    const lib = tree({
      'index.ts': '// i\nexport const i = 1;\n',
      'base/a.ts': "// a\nimport { i } from '../index';\nexport const a = i;\n",
    });
    expect(checkLayout(lib)).toEqual([expect.stringContaining('a folder imports a top-level file')]);
  });

  it('refuses an import cycle inside one folder, type-only imports included', () => {
    const lib = tree({
      'verify/a.ts': "// a\nimport type { B } from './b';\nexport type A = B;\n",
      'verify/b.ts': "// b\nimport type { A } from './a';\nexport type B = A | 1;\n",
    });
    expect(checkLayout(lib)).toEqual([
      expect.stringContaining('import cycle: verify/a.ts → verify/b.ts → verify/a.ts'),
    ]);
  });

  it('refuses a room that does not say what it is, and a file over 300 lines', () => {
    const lib = tree({ 'token/a.ts': 'export const a = 1;\n', 'token/b.ts': `// b\n${'export {};\n'.repeat(300)}` });
    expect(checkLayout(lib).sort()).toEqual([
      expect.stringContaining('token/a.ts: does not open with a line'),
      expect.stringContaining('token/b.ts: 302 lines'),
    ]);
  });

  it('refuses more than 8 files at the top', () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 9; i += 1) files[`e${i}.ts`] = `// e${i}\nexport const e${i} = ${i};\n`;
    expect(checkLayout(tree(files))).toEqual(['9 files at the top of lib/ (at most 8)']);
  });
});
