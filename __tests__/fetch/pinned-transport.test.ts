// A request pinned to an address checked beforehand (lib/fetch/pinned-transport.ts), through fetchBounded, against
// real servers on 127.0.0.1: the name is never looked up (it resolves nowhere), the Host header and, over TLS, the
// SNI server name and the certificate check keep the name; fetchBounded's bounds hold as with fetch.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fetchBounded, RemoteFetchError } from '../../lib/fetch/bounded-fetch';
import { pinnedTransport } from '../../lib/fetch/pinned-transport';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';

const LOOPBACK = [{ address: '127.0.0.1', family: 4 }] as const;
/** A name under .test (RFC 6761 §6.2): no resolver answers it, so a request reaching a server was pinned. */
const NAME = 'as.pinned.test';

const get = (url: string, transport: ReturnType<typeof pinnedTransport>, maxBytes = 1024) =>
  fetchBounded(url, {
    headers: { Accept: 'application/json' },
    timeoutMs: 5_000,
    maxBytes,
    signal: new AbortController().signal,
    transport,
  });

describe('pinnedTransport over HTTP', () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer((_req, res) => json(res, 200, { ok: true }));
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  it('connects to the pinned address, never resolving the name, and sends the name as Host', async () => {
    const port = new URL(server.origin).port;
    const answer = await get(`http://${NAME}:${port}/doc?x=1`, pinnedTransport(LOOPBACK));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ ok: true });
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(server.seen.map((seen) => [seen.method, seen.url, seen.headers.host])).toEqual([
      ['GET', '/doc?x=1', `${NAME}:${port}`],
    ]);
  });

  it('tries the pinned addresses in turn, and only they (::1 refused, then 127.0.0.1, as localhost often resolves)', async () => {
    const port = new URL(server.origin).port;
    const both = pinnedTransport([
      { address: '::1', family: 6 },
      { address: '127.0.0.1', family: 4 },
    ]);
    expect((await get(`http://${NAME}:${port}/both`, both)).status).toBe(200);
    expect(server.seen.map((seen) => seen.url)).toEqual(['/both']);
  });

  it('sends a POST body with its length', async () => {
    let received = '';
    server.handler = (req, res) => {
      req.on('data', (chunk: Buffer) => (received += chunk.toString()));
      req.on('end', () => json(res, 401, {}, { 'WWW-Authenticate': 'Bearer realm="x"' }));
    };
    const port = new URL(server.origin).port;
    const answer = await fetchBounded(`http://${NAME}:${port}/mcp`, {
      headers: { 'Content-Type': 'application/json' },
      body: '{"a":1}',
      timeoutMs: 5_000,
      maxBytes: 1024,
      signal: new AbortController().signal,
      transport: pinnedTransport(LOOPBACK),
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="x"');
    expect(received).toBe('{"a":1}');
    expect(server.seen[0].headers['content-length']).toBe('7');
  });

  it('refuses a redirect as fetch does, and keeps the byte cap', async () => {
    const port = new URL(server.origin).port;
    server.handler = (_req, res) => res.writeHead(302, { Location: 'http://127.0.0.1:9/elsewhere' }).end();
    await expect(get(`http://${NAME}:${port}/moved`, pinnedTransport(LOOPBACK))).rejects.toMatchObject({
      failure: 'network',
    });
    server.handler = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(Buffer.alloc(64 * 1024, 0x20));
    };
    const big = get(`http://${NAME}:${port}/big`, pinnedTransport(LOOPBACK), 1024);
    await expect(big).rejects.toBeInstanceOf(RemoteFetchError);
    await expect(big).rejects.toMatchObject({ failure: 'too-large' });
  });
});

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const describeWithOpenssl = hasOpenssl ? describe : describe.skip;

describeWithOpenssl('pinnedTransport over TLS', () => {
  let dir: string;
  let server: HttpsServer;
  let port: number;
  let cert: Buffer;
  const servernames: Array<string | false | null> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'evu-pinned-'));
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'].concat([
        '-subj',
        `/CN=${NAME}`,
        '-addext',
        `subjectAltName=DNS:${NAME}`,
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ]),
      { stdio: 'ignore', timeout: 10_000 },
    );
    cert = readFileSync(certFile);
    server = createHttpsServer({ key: readFileSync(keyFile), cert }, (_req, res) => json(res, 200, { tls: true }));
    server.on('secureConnection', (socket: TLSSocket) => servernames.push(socket.servername));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the name for SNI and checks the certificate for the name, not the pinned address', async () => {
    servernames.length = 0;
    const answer = await get(`https://${NAME}:${port}/`, pinnedTransport(LOOPBACK, cert));
    expect(JSON.parse(answer.text)).toEqual({ tls: true });
    expect(servernames).toEqual([NAME]);
  });

  it('refuses the connection when the certificate is not for the name asked', async () => {
    const other = get(`https://other.pinned.test:${port}/`, pinnedTransport(LOOPBACK, cert));
    await expect(other).rejects.toMatchObject({ failure: 'network' });
    // And the address itself is no name the certificate carries either.
    await expect(get(`https://127.0.0.1:${port}/`, pinnedTransport(LOOPBACK, cert))).rejects.toMatchObject({
      failure: 'network',
    });
  });

  it('trusts the system store only, without the test certificate: a self-signed server is refused', async () => {
    await expect(get(`https://${NAME}:${port}/`, pinnedTransport(LOOPBACK))).rejects.toMatchObject({
      failure: 'network',
    });
  });
});
