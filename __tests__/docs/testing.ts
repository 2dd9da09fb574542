// Drivers of docs/testing.md's code blocks (see __tests__/fixtures/doc-run.ts).
import type { DocDrivers } from '../fixtures/doc-run';

/** The app the page's test imports from '../src/app': a factory taking a TokenAuth, /me needing `email`. */
export const YOUR_APP = {
  'src/app.mts': `import express from 'express';
import type { TokenAuth } from 'express-verified-user';

export function buildApp(auth: TokenAuth) {
  const app = express();
  app.get('/me', auth.requireVerifiedUser(['email']), (req, res) => {
    res.json(auth.claims(req));
  });
  return app;
}
`,
};

export const drivers: DocDrivers = {
  // The page's jest test, run by node:test (the same test(name, fn)): 200 with all scopes, 403 with identify only.
  'testing-supertest': {
    before: "import { test } from 'node:test';",
    files: YOUR_APP,
    // An ES module names the file it imports; a test compiled to CommonJS (ts-jest) finds '../src/app' as is.
    replace: { "'../src/app'": "'./src/app.mjs'" },
    async run(t) {
      const { stdout } = await t.script();
      expect(stdout).toMatch(/^# pass 1$/m);
      expect(stdout).toMatch(/^# fail 0$/m);
    },
  },
  // The discovery lines as a script: the issuer serves discovery and JWKS; /me must answer 200, or the script fails.
  'testing-discovery': {
    before: `import request from 'supertest';
import { createTokenAuth } from 'express-verified-user';
import { createTestIssuer } from 'express-verified-user/testing';
import { buildApp } from './src/app.mjs';
`,
    files: YOUR_APP,
    async run(t) {
      await t.script();
    },
  },
  // The exchange lines as a script: its assert throws, and the script fails, unless the issued token names the client.
  'testing-exchange': {
    before: `import assert from 'node:assert/strict';
import { createTokenAuth } from 'express-verified-user';
import { createTestIssuer } from 'express-verified-user/testing';
`,
    after: 'auth.close();\nci.close();\n',
    async run(t) {
      await t.script();
    },
  },
};
