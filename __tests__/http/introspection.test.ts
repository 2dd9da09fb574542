/**
 * `introspection` against a hostile client (SPEC §16), with a real oidc-provider 9 (opaque access tokens, JWTs for
 * `jwtResource`) and real Express apps: a JWT of the issuer spelt with stray b64token characters is never
 * introspected (verify/dispatch.ts), and `introspection.maxInflight` caps the calls under way (keys/inflight.ts).
 * Calls are counted at the provider, or at a loopback server that holds them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { startLoopbackServer, until, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';

let as: AuthorizationServer;
const opened: TokenAuth[] = [];

beforeAll(async () => {
  as = await startAuthorizationServer({ introspection: {} });
}, 30_000);

afterAll(async () => {
  await as?.close();
});

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

function introspecting(overrides: Partial<TokenAuthOptions> = {}): TokenAuth {
  const auth = createTokenAuth({
    issuerBaseURL: as.issuer,
    audience: [as.resource, as.jwtResource],
    introspection: { clientId: 'rs-basic', clientSecret: as.resourceServerSecret },
    ...overrides,
  } as TokenAuthOptions);
  opened.push(auth);
  return auth;
}

/** How many introspection requests `run` cost at the provider. */
async function callsDuring(run: () => Promise<unknown>): Promise<number> {
  const before = await as.introspections();
  await run();
  return (await as.introspections()) - before;
}

/**
 * Another kind of JWT the provider signs: its RFC 9701 signed introspection answer about `token` (header `typ`
 * `token-introspection+jwt`, `iss` the provider), asked for directly as the resource server `rs-post`.
 */
async function signedAnswer(token: string): Promise<string> {
  const answer = await fetch(`${as.issuer}/token/introspection`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/token-introspection+jwt' },
    body: new URLSearchParams({ token, client_id: 'rs-post', client_secret: as.resourceServerSecret }),
  });
  const text = await answer.text();
  if (answer.status !== 200 || text.split('.').length !== 3)
    throw new Error(`introspection endpoint answered ${answer.status}`);
  return text;
}

const part = (jwt: string, i: number) =>
  JSON.parse(Buffer.from(jwt.split('.')[i], 'base64url').toString()) as Record<string, unknown>;

describe.each(EXPRESS_VERSIONS)(
  "a JWT of the issuer with stray b64token characters, through %s (introspect: 'opaque')",
  (_name, express) => {
    function app(auth: TokenAuth) {
      const made = express();
      made.get('/read', auth.requireVerifiedUser(['read']), (req, res) => res.json(req.auth));
      return made;
    }

    it.each([
      ['=', (jwt: string) => `${jwt}=`],
      ['==', (jwt: string) => `${jwt}==`],
      ['~', (jwt: string) => `${jwt}~`],
      ['~~', (jwt: string) => `${jwt}~~`],
      ['+/', (jwt: string) => `${jwt}+/`],
      // Extra dots: a parser that drops empty segments reads the same JWT.
      ['a trailing dot', (jwt: string) => `${jwt}.`],
      ['two trailing dots', (jwt: string) => `${jwt}..`],
      ['a leading dot', (jwt: string) => `.${jwt}`],
      ['a doubled dot', (jwt: string) => jwt.replace('.', '..')],
    ])("refuses another kind of the provider's JWTs with %s: 401, and no introspection", async (_case, spell) => {
      const other = await signedAnswer(await as.token());
      expect(part(other, 0).typ).toBe('token-introspection+jwt');
      expect(part(other, 1).iss).toBe(as.issuer);
      const auth = introspecting({ typ: 'at+jwt' });
      const calls = await callsDuring(async () => {
        const response = await request(app(auth))
          .get('/read')
          .set('Authorization', `Bearer ${spell(other)}`);
        expect(response.status).toBe(401);
        expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
      });
      expect(calls).toBe(0);
    });

    it.each([
      ['~ inside its payload', (h: string, p: string, sig: string) => `${h}.${p.slice(0, 8)}~${p.slice(8)}.${sig}`],
      // Base64url decoders drop the padding, so this one would even pass its signature check: one token, two spellings.
      ['== after its signature', (h: string, p: string, sig: string) => `${h}.${p}.${sig}==`],
    ])("refuses the provider's own access-token JWT spelt with %s: 401, with no call", async (_case, spell) => {
      const jwt = await as.token({ resource: as.jwtResource });
      const auth = introspecting();
      const [header, payload, signature] = jwt.split('.');
      const calls = await callsDuring(async () => {
        expect(
          (
            await request(app(auth))
              .get('/read')
              .set('Authorization', `Bearer ${spell(header, payload, signature)}`)
          ).status,
        ).toBe(401);
        // The token as issued is still good, locally.
        expect((await request(app(auth)).get('/read').set('Authorization', `Bearer ${jwt}`)).status).toBe(200);
      });
      expect(calls).toBe(0);
    });

    it('still introspects an opaque token, and a JWT naming another issuer', async () => {
      const auth = introspecting();
      const opaque = await as.token();
      const foreign =
        [
          { alg: 'RS256', typ: 'at+jwt' },
          { iss: 'https://other-issuer.example.test', sub: 'x' },
        ]
          .map((value) => Buffer.from(JSON.stringify(value)).toString('base64url'))
          .join('.') + '.c2lnbmF0dXJl=';
      const calls = await callsDuring(async () => {
        expect((await request(app(auth)).get('/read').set('Authorization', `Bearer ${opaque}`)).status).toBe(200);
        expect((await request(app(auth)).get('/read').set('Authorization', `Bearer ${foreign}`)).status).toBe(401);
      });
      expect(calls).toBe(2);
    });
  },
);

describe('introspection.maxInflight', () => {
  let slow: LoopbackServer;
  /** Requests the slow endpoint holds, each answered by forwarding it to the provider once released. */
  const held: Array<() => void> = [];

  function holdThenForward(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      held.push(() => {
        const headers: Record<string, string> = {};
        for (const name of ['authorization', 'content-type', 'accept'])
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
        void fetch(`${as.issuer}/token/introspection`, { method: 'POST', headers, body: Buffer.concat(chunks) }).then(
          async (answer) =>
            res
              .writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? '' })
              .end(await answer.text()),
          () => res.writeHead(502).end(),
        );
      });
    });
  }

  beforeAll(async () => {
    slow = await startLoopbackServer(holdThenForward);
  });

  afterAll(async () => {
    await slow.close();
  });

  beforeEach(() => {
    slow.reset();
    held.length = 0;
  });

  const through = (maxInflight?: number) =>
    introspecting({
      introspection: {
        clientId: 'rs-basic',
        clientSecret: as.resourceServerSecret,
        endpoint: `${slow.origin}/token/introspection`,
        timeout: '20s',
        maxInflight,
      },
    });

  it('answers a new token beyond maxInflight 503 introspection-busy at once, with no call, then frees the places', async () => {
    const auth = through(2);
    const tokens = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map(() => as.token()));
    const first = tokens.slice(0, 2).map((token) => auth.verify(token));
    await until(() => held.length === 2, 'two held introspection calls');
    // Beyond the cap: refused at once (these settle while the two calls are still held), never queued.
    for (const token of tokens.slice(2, 8)) {
      const busy = await rejection(auth.verify(token));
      expect([busy.code, busy.status, busy.reason, busy.headers['Retry-After']]).toEqual([
        'verification_unavailable',
        503,
        'introspection-busy',
        '1',
      ]);
    }
    expect(slow.requests).toBe(2);
    // Six refusals in a row, yet the breaker (5 outages) did not count them: no call was made.
    expect(auth.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
    for (const release of held.splice(0)) release();
    await expect(Promise.all(first)).resolves.toHaveLength(2);
    // Never cached: the refused token is introspected now that there is room.
    const later = auth.verify(tokens[2]);
    await until(() => held.length === 1, 'the refused token asked about');
    held.splice(0)[0]();
    await expect(later).resolves.toMatchObject({ aud: as.resource });
    expect(slow.requests).toBe(3);
  });

  it('defaults to 100 calls under way', async () => {
    const auth = through();
    const tokens = await Promise.all(Array.from({ length: 101 }, () => as.token()));
    const pending = tokens.slice(0, 100).map((token) => auth.verify(token));
    await until(() => held.length === 100, 'a hundred held introspection calls', 1000);
    expect((await rejection(auth.verify(tokens[100]))).reason).toBe('introspection-busy');
    for (const release of held.splice(0)) release();
    await expect(Promise.all(pending)).resolves.toHaveLength(100);
  }, 60_000);
});
