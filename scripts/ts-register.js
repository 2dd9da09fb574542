'use strict';
/**
 * Lets a plain `node` process require this repository's TypeScript sources (lib/, __tests__/) directly:
 * each .ts file is transpiled on load with the project's own TypeScript, types stripped, no type check (tsc and
 * jest do that). Used by scripts/fuzz.js, scripts/soak.js and the memory-bound child process, so that they
 * exercise the working tree without a build step. Not for production use.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const compilerOptions = {
  module: 'commonjs',
  target: 'es2022',
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};

// Transpiled output is kept by content hash, so that the fleet's many child processes load TypeScript (slow on a
// busy machine) only for a file they are the first to see.
const CACHE = path.join(os.tmpdir(), `evu-ts-register-${process.getuid?.() ?? 'user'}`);
let ts;

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const hash = crypto.createHash('sha256').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(CACHE, `${hash}.js`);
  let outputText;
  try {
    outputText = fs.readFileSync(cached, 'utf8');
  } catch {
    ts ??= require('typescript');
    outputText = ts.transpileModule(source, {
      compilerOptions: ts.convertCompilerOptionsFromJson(compilerOptions, '').options,
      fileName: filename,
    }).outputText;
    try {
      fs.mkdirSync(CACHE, { recursive: true });
      const temporary = `${cached}.${process.pid}`;
      fs.writeFileSync(temporary, outputText);
      fs.renameSync(temporary, cached);
    } catch {
      // a cache that cannot be written only costs the next process a transpile
    }
  }
  module._compile(outputText, filename);
};
