#!/usr/bin/env node
// The package.json that ships has no `prepare` script: npm 11 warns about a dependency's install scripts
// (`npm warn install-scripts express-verified-user@… (prepare: npm run build)`), and a consumer installs a built
// tarball that has nothing left to prepare. The repository keeps `prepare`, so that `npm ci` in a clone still builds.
//
//   node scripts/pack-manifest.js strip     (prepack)   package.json without scripts.prepare; the original kept aside
//   node scripts/pack-manifest.js restore   (postpack)  the original back, byte for byte
//
// npm pack and npm publish run prepack, read the files (this package.json included), then run postpack. A pack that
// failed in between leaves the original aside: the next strip (or restore) puts it back first.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const manifest = path.join(root, 'package.json');
const kept = path.join(root, 'scripts', '.tmp', 'package.json.prepack');

function restore() {
  if (!fs.existsSync(kept)) return;
  fs.copyFileSync(kept, manifest);
  fs.rmSync(kept);
}

function strip() {
  restore();
  const text = fs.readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  if (pkg.scripts?.prepare === undefined) return;
  fs.mkdirSync(path.dirname(kept), { recursive: true });
  fs.writeFileSync(kept, text);
  delete pkg.scripts.prepare;
  fs.writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
}

const command = process.argv[2];
if (command === 'strip') strip();
else if (command === 'restore') restore();
else {
  process.stderr.write('usage: node scripts/pack-manifest.js strip|restore\n');
  process.exitCode = 2;
}
