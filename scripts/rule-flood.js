'use strict';
/**
 * Child process of __tests__/security/rule-flood.test.ts (run with --expose-gc): a flood of subject rules into one
 * createMemoryRevocationStore, each rule's `sub` cut out of a text of its own of `--text` bytes (a slice, as a parser
 * may hand over a piece of a SET), every rule of another issuer; reports as JSON on stdout the rules stored, the
 * rejections by reason, and the heap growth after a full GC (the texts are let go: only the store can hold them).
 *
 *   node --expose-gc scripts/rule-flood.js --rules 20000 --max-rules 10000 --text 65536
 */
require('./ts-register');
const { createMemoryRevocationStore } = require('../lib');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}
const rules = option('rules', 20_000);
const maxRules = option('max-rules', 10_000);
const textBytes = option('text', 65_536);
if (typeof global.gc !== 'function') throw new Error('run with --expose-gc');

function heap() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

async function main() {
  const store = createMemoryRevocationStore({ maxRules });
  store.follow(() => undefined, { ruleLifetime: 3605 });
  const before = heap();
  const refused = {};
  for (let i = 0; i < rules; i++) {
    const text = JSON.stringify({ sub: `user-${i}`.padEnd(200, '.'), padding: `${i}`.padEnd(textBytes, 'p') });
    // The sub cut out of the text (as a parser may hand a slice of its input): it must not keep the text alive.
    const sub = text.slice(8, 208);
    try {
      await store.revokeSubject({ iss: `https://issuer-${i}.example`, sub });
    } catch (err) {
      refused[err.reason ?? err.name] = (refused[err.reason ?? err.name] ?? 0) + 1;
    }
  }
  const after = heap();
  const held = store.follow(() => undefined, { ruleLifetime: 3605 }).stats().rules;
  process.stdout.write(JSON.stringify({ held, refused, grown: after - before }));
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
