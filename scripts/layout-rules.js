// The layout of lib/ as rules a test can check (docs/architecture.md): folders by stage, imports one way, no
// cycles, a line saying what each room is (after a #! line, for the command), no file over 300 lines, at most 8
// files at the top.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

/** Folders from the top of the pipeline down: a file may import its own folder or any folder below its own. */
const FOLDER_ORDER = [
  'cli',
  'mcp',
  'edge',
  'testing',
  'stores',
  'events',
  'http',
  'config',
  'authorize',
  'dpop',
  'verify',
  'remote',
  'keys',
  'fetch',
  'observe',
  'extract',
  'token',
  'jose',
  'base',
];
const MAX_LINES = 300;
const MAX_TOP_FILES = 8;

function listTs(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out.sort();
}

/** Relative import specifiers of a file (static imports and re-exports, type-only ones included). */
function importsOf(text) {
  const specs = [];
  const pattern = /^\s*(?:import|export)\b[^'";]*?from\s*'(\.[^']*)'|^\s*import\s*'(\.[^']*)'/gm;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) specs.push(m[1] ?? m[2]);
  return specs;
}

function resolveSpec(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(candidate)) return candidate;
  return undefined;
}

/** The folder of a file inside lib/, or '' for a top-level file. */
function folderOf(lib, file) {
  const rel = path.relative(lib, file).split(path.sep);
  return rel.length === 1 ? '' : rel[0];
}

/** Every breach of the layout rules in the lib/ at `lib`, as readable lines (none: the layout holds). */
function checkLayout(lib) {
  const problems = [];
  const files = listTs(lib);
  const graph = new Map();
  const top = files.filter((f) => folderOf(lib, f) === '');
  if (top.length > MAX_TOP_FILES) problems.push(`${top.length} files at the top of lib/ (at most ${MAX_TOP_FILES})`);
  for (const file of files) {
    const rel = path.relative(lib, file);
    const text = fs.readFileSync(file, 'utf8');
    const lines = text.split('\n').length;
    if (lines > MAX_LINES) problems.push(`${rel}: ${lines} lines (at most ${MAX_LINES})`);
    if (!/^(#![^\n]*\n)?(\/\/|\/\*)/.test(text))
      problems.push(`${rel}: does not open with a line saying what the room is`);
    const folder = folderOf(lib, file);
    if (folder !== '' && !FOLDER_ORDER.includes(folder))
      problems.push(`${rel}: folder "${folder}" has no place in the order`);
    const targets = [];
    for (const spec of importsOf(text)) {
      const target = resolveSpec(file, spec);
      if (target === undefined) {
        problems.push(`${rel} imports ${spec}, which is no file in lib/`);
        continue;
      }
      targets.push(target);
      const to = folderOf(lib, target);
      const where = `${rel} imports ${path.relative(lib, target)}`;
      if (folder !== '' && to === '') problems.push(`${where}: a folder imports a top-level file`);
      else if (folder !== '' && to !== folder && FOLDER_ORDER.indexOf(to) < FOLDER_ORDER.indexOf(folder)) {
        problems.push(`${where}: ${folder}/ may not import ${to}/ (imports run ${FOLDER_ORDER.join(' → ')})`);
      }
    }
    graph.set(file, targets);
  }
  // Cycles between files, by depth-first search.
  const state = new Map();
  const stack = [];
  const visit = (file) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = stack
          .slice(stack.indexOf(next))
          .concat(next)
          .map((f) => path.relative(lib, f));
        problems.push(`import cycle: ${cycle.join(' → ')}`);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return problems;
}

module.exports = { checkLayout, FOLDER_ORDER, MAX_LINES, MAX_TOP_FILES };

if (require.main === module) {
  const problems = checkLayout(path.join(__dirname, '..', 'lib'));
  for (const line of problems) console.error(line);
  console.log(problems.length === 0 ? 'layout: ok' : `layout: ${problems.length} problem(s)`);
  process.exit(problems.length === 0 ? 0 : 1);
}
