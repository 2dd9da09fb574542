// Drivers of docs/remote-keys.md's code blocks (see __tests__/fixtures/doc-run.ts): the JWKS block runs against the
// test issuer's key set (ready) and its root (refused at start-up); the upstream block is an excerpt, type-checked.
import { createTestIssuer } from '../../lib/testing';
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

const JWKS = "'https://auth.example.com/.well-known/jwks.json'";

export const drivers: DocDrivers = {
  // `await auth.ready()` resolves for a JWK set, and stops the script for an issuer's root (no JWK set there).
  'remote-keys-jwks': {
    before: "import { createTokenAuth } from 'express-verified-user';\n",
    after: "console.log('ready');\nauth.close();\n",
    async run(t) {
      const issuer = t.own(await createTestIssuer({ alg: 'ES256', jwks: true }));
      const { stdout } = await t.script({ replace: { [JWKS]: `'${issuer.jwksUri}'` } });
      expect(stdout.trim()).toBe('ready');
      const root = (issuer.jwksUri as string).replace('/.well-known/jwks.json', '/');
      await expect(t.script({ replace: { [JWKS]: `'${root}'` } })).rejects.toThrow(/exited with code 1/);
    },
  },
  'remote-keys-jwks-inline': excerpt(),
  'remote-keys-upstream': excerpt(),
};
