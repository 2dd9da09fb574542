'use strict';
/**
 * What the load scripts share (scripts/soak.js, scripts/soak-fleet.js, scripts/fuzz.js): their command-line
 * numbers, the private build of the package they load, and HS256 tokens minted by hand.
 */
const { execFileSync } = require('node:child_process');
const { createHmac } = require('node:crypto');
const path = require('node:path');

/** The compiled package, built privately from the working tree (dist/ is left alone). */
const DIST = path.join(__dirname, '.tmp', 'dist');

/** `--<name> <integer>` from the command line, else `fallback`; positive unless `allowZero`. */
function option(name, fallback, { allowZero = false } = {}) {
  const at = process.argv.indexOf(`--${name}`);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value < (allowZero ? 0 : 1)) {
    throw new Error(`--${name} wants a ${allowZero ? 'non-negative' : 'positive'} integer`);
  }
  return value;
}

/** Compile the package into DIST (scripts/.tmp/dist). */
function compilePackage() {
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', 'scripts/.tmp/dist'],
    {
      cwd: path.join(__dirname, '..'),
      stdio: 'inherit',
    },
  );
  return DIST;
}

const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A compact JWS of `payload`, HMAC-SHA256 with `key`. */
function signHs256(payload, key, header = { alg: 'HS256', typ: 'JWT' }) {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

const range = (n, make) => Array.from({ length: n }, (_, i) => make(i));

module.exports = { DIST, option, compilePackage, b64, signHs256, range };
