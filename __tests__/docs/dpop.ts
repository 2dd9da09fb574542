// Drivers of docs/dpop.md's code blocks (see __tests__/fixtures/doc-run.ts).
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  // The options excerpt: `store` is a shared ReplayStore (a fleet's createRedisStore).
  'dpop-options': excerpt(`import type { TLSSocket } from 'node:tls';
import type { ReplayStore } from 'express-verified-user';
declare const store: ReplayStore;
`),
  // The test lines as a script, against your app listening at `origin` (built from the block's issuer on its first
  // request, as your test would build it): the DPoP request must answer 200, or the script fails.
  'dpop-testing': {
    before: `import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { createTokenAuth } from 'express-verified-user';

function buildApp() {
  const auth = createTokenAuth(issuer.options);
  const app = express();
  app.get('/me', auth.requireVerifiedUser(), (req, res) => {
    res.json(auth.claims(req));
  });
  return app;
}
let app: express.Express | undefined;
const server = createServer((req, res) => (app ??= buildApp())(req, res));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = \`http://127.0.0.1:\${(server.address() as AddressInfo).port}\`;
const nonce: string | undefined = undefined; // the last DPoP-Nonce your app sent, with dpop.nonce on
`,
    after: 'server.close();\n',
    async run(t) {
      await t.script();
    },
  },
};
