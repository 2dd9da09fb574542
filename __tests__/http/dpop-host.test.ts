import { request as httpRequest } from 'node:http';
import { createTokenAuth, type TokenAuthError } from '../../lib';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { PROOF_CHALLENGE, startDpopClient, type DpopClient, type Proof } from '../fixtures/dpop-client';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { listen, type Listening } from '../fixtures/listen';

// RFC 9449 §4.3 (9): a proof's htu must be the URI of the request. Without `resource`, that URI's origin comes
// from the request's Host (or a trusted X-Forwarded-Host and -Proto): a header that is not `host[:port]` could
// carry a path and a `?` or `#`, and move the URI a captured proof is compared with to another route. Tokens from
// oidc-provider, proofs from oauth4webapi (both spawned: ESM-only), requests sent raw so every byte is the test's.
jest.setTimeout(60_000);

interface Answer {
  status: number;
  challenge: string | undefined;
  body: unknown;
}

let server: AuthorizationServer;
let client: DpopClient;
let token: string;

beforeAll(async () => {
  server = await startAuthorizationServer({ dpop: true });
  client = await startDpopClient(server);
  token = (await client.token()).token;
});

afterAll(async () => {
  await client?.stop();
  await server?.close();
});

/** One GET with exactly these headers and this request target (Host included, as a client could send it). */
function send(origin: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: 'GET', headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const challenge = res.headers['www-authenticate'];
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON (Express's own 404 page): kept as text, and the test's expectation names it
        }
        resolve({ status: res.statusCode ?? 0, challenge, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Forged hosts that end the authority early: the URI built from each names `/intendedPath`, not the route. */
const FORGED: Array<[string, string]> = [
  ['localhost/intendedPath?', 'http://localhost/intendedPath'],
  ['localhost/intendedPath#', 'http://localhost/intendedPath'],
  ['localhost\\intendedPath?', 'http://localhost/intendedPath'],
  ['localhost:8080/intendedPath?', 'http://localhost:8080/intendedPath'],
  ['[::1]/intendedPath#', 'http://[::1]/intendedPath'],
  ['localhost?', 'http://localhost/'],
  ['localhost#', 'http://localhost/'],
  // Userinfo was refused before (as dpop:request-uri); a tab, which a URL parser strips, named localhost.
  ['intruder@localhost/intendedPath?', 'http://localhost/intendedPath'],
  ['local\thost', 'http://localhost/admin/delete'],
];

/** Hosts in `host[:port]` syntax, each accepted with a proof for its own URI. */
const LEGITIMATE = [
  'api.example.com',
  'API.Example.com:8443',
  '192.0.2.10',
  '192.0.2.10:8080',
  '[2001:db8::1]:8443',
  '[::1]',
];

describe.each(EXPRESS_VERSIONS)('the request URI a DPoP proof is held to, through %s', (_name, express) => {
  const open: Listening[] = [];
  let reasons: string[];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  /** An app with the route a proof was made for and the one it must not open; `trusting` sets trust proxy. */
  async function serve(trusting: boolean): Promise<string> {
    reasons = [];
    const auth = createTokenAuth({
      key: { jwksUri: server.jwksUri },
      issuer: server.issuer,
      audience: server.resource,
      algorithms: ['ES256'],
      claims: 'jwt',
      dpop: {},
      onError: (err: TokenAuthError) => {
        reasons.push(err.reason ?? '');
      },
    });
    const app = express();
    if (trusting) app.set('trust proxy', 'loopback');
    app.get('/intendedPath', auth.requireVerifiedUser(), (_req, res) => {
      res.json({ route: 'intended' });
    });
    app.get('/admin/delete', auth.requireVerifiedUser(), (_req, res) => {
      res.json({ route: 'admin' });
    });
    // Everything under /admin, as a mounted admin router would take it.
    app.use('/admin', auth.requireVerifiedUser(), (_req, res) => {
      res.json({ route: 'admin area' });
    });
    const listening = await listen(app);
    open.push(listening);
    return listening.origin;
  }

  const proofFor = (url: string) => client.proof('GET', url, token);
  const credentials = (proof: Proof) => ({ Authorization: proof.authorization, DPoP: proof.dpop });

  function expectRefused(answer: Answer, reason: string) {
    expect(answer.status).toBe(401);
    expect(answer.challenge).toBe(PROOF_CHALLENGE);
    expect(answer.body).toEqual({ status: 'error', message: 'Invalid DPoP proof' });
    expect(reasons).toEqual([reason]);
  }

  describe.each(FORGED)('refuses Host %j, with a proof for %s, at /admin/delete', (host, htu) => {
    it('as the Host field', async () => {
      const origin = await serve(false);
      const proof = await proofFor(htu);
      expectRefused(await send(origin, '/admin/delete', { Host: host, ...credentials(proof) }), 'dpop:request-origin');
    });

    it('as X-Forwarded-Host from a proxy trust proxy trusts (its first value)', async () => {
      const origin = await serve(true);
      const headers = { ...credentials(await proofFor(htu)), 'X-Forwarded-Host': `${host}, proxy.internal` };
      expectRefused(await send(origin, '/admin/delete', { Host: 'proxy.internal', ...headers }), 'dpop:request-origin');
    });
  });

  it('refuses a trusted X-Forwarded-Proto that carries a host and a path, and a scheme other than http(s)', async () => {
    const origin = await serve(true);
    const host = new URL(origin).host;
    const moved = { ...credentials(await proofFor('http://localhost/intendedPath')) };
    const forged = { Host: host, 'X-Forwarded-Proto': 'http://localhost/intendedPath?' };
    expectRefused(await send(origin, '/admin/delete', { ...forged, ...moved }), 'dpop:request-origin');
    reasons.length = 0;
    const ftp = { ...credentials(await proofFor(`http://${host}/admin/delete`)) };
    expectRefused(
      await send(origin, '/admin/delete', { Host: host, 'X-Forwarded-Proto': 'ftp', ...ftp }),
      'dpop:request-origin',
    );
  });

  it.each(['/admin/../intendedPath', '/admin/%2E%2e/intendedPath', '/admin/x\\..\\..\\intendedPath'])(
    'refuses the path %s, which a URL parser would move to /intendedPath while Express routes it under /admin',
    async (path) => {
      const origin = await serve(false);
      const host = new URL(origin).host;
      const proof = await proofFor(`http://${host}/intendedPath`);
      expectRefused(await send(origin, path, { Host: host, ...credentials(proof) }), 'dpop:request-uri');
    },
  );

  it.each(LEGITIMATE)('accepts Host %s, as the Host field and as a trusted X-Forwarded-Host', async (host) => {
    const direct = await serve(false);
    const proof = await proofFor(`http://${host}/admin/delete`);
    const answer = await send(direct, '/admin/delete', { Host: host, ...credentials(proof) });
    expect(answer).toMatchObject({ status: 200, body: { route: 'admin' } });
    const proxied = await serve(true);
    const behind = await proofFor(`https://${host}/admin/delete?page=2`);
    const forwarded = { 'X-Forwarded-Host': host, 'X-Forwarded-Proto': 'HTTPS' };
    const through = await send(proxied, '/admin/delete?page=2', {
      Host: 'proxy.internal',
      ...forwarded,
      ...credentials(behind),
    });
    expect(through).toMatchObject({ status: 200, body: { route: 'admin' } });
    expect(reasons).toEqual([]);
  });
});
