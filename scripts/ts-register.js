'use strict';
/**
 * Lets a plain `node` process require this repository's TypeScript sources (lib/, __tests__/) directly:
 * each .ts file is transpiled on load with the project's own TypeScript, types stripped, no type check (tsc and
 * jest do that). Used by scripts/fuzz.js, scripts/soak.js and the memory-bound child process, so that they
 * exercise the working tree without a build step. Not for production use.
 */
const fs = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  sourceMap: false,
  inlineSourceMap: true,
};

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
