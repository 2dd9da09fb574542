// Where `check` connects (lib/cli/check-network.ts): every host a probed server names is resolved once, checked and
// pinned; this machine, link-local neighbours and (without --allow-private) private networks are refused. Names are
// answered by the run's resolver (the seam a test uses instead of /etc/hosts); every connection is real, and the
// loopback servers a refused name points at must receive none.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { runCheck, type CheckRequest } from '../../lib/cli/check';
import type { CheckLine } from '../../lib/cli/check-documents';
import { probeNetwork, type Resolver } from '../../lib/cli/check-network';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';

/** A resolver from a table (each name's addresses), counting how often each name is asked. */
function resolverOf(table: Record<string, string[]>) {
  const asked = new Map<string, number>();
  const resolve: Resolver = async (name) => {
    asked.set(name, (asked.get(name) ?? 0) + 1);
    const addresses = table[name];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
}

const OWN = ['198.51.100.7'];
const LATER = () => Date.now() + 2_000;

describe('probeNetwork: which hosts a probe may follow', () => {
  const { resolve } = resolverOf({
    'mcp.example.test': ['127.0.0.1'],
    'loopback.test': ['127.0.0.2'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'zero.test': ['0.0.0.0'],
    'own.test': ['198.51.100.7'],
    'metadata.test': ['169.254.169.254'],
    'mapped-metadata.test': ['::ffff:a9fe:a9fe'],
    'link6.test': ['fe80::1'],
    'corp.test': ['10.1.2.3'],
    'ula.test': ['fd00::5'],
    'mixed.test': ['203.0.113.9', '127.0.0.1'],
    'public.test': ['203.0.113.9'],
  });
  const remote = new URL('http://mcp.example.test:8080/mcp');
  const problemOf = async (target: URL, host: string, allowPrivate = false) => {
    const admission = await probeNetwork(target, allowPrivate, { resolve, ownAddresses: OWN }).admit(
      new URL(`https://${host}/x`),
      LATER(),
    );
    return 'problem' in admission ? admission.problem : 'admitted';
  };

  it.each([
    ['loopback.test', '127.0.0.2, a loopback address of this machine'],
    ['mapped.test', '::ffff:127.0.0.1, a loopback address of this machine'],
    ['zero.test', '0.0.0.0, an unspecified address, which connects to this machine'],
    ['own.test', "198.51.100.7, an address of this machine's own interfaces"],
    ['metadata.test', '169.254.169.254, a link-local address (169.254.169.254 is the cloud metadata service)'],
    ['mapped-metadata.test', '::ffff:a9fe:a9fe, a link-local address (169.254.169.254 is the cloud metadata service)'],
    ['link6.test', 'fe80::1, a link-local address (169.254.169.254 is the cloud metadata service)'],
    ['corp.test', '10.1.2.3, a private address'],
    ['ula.test', 'fd00::5, a private address'],
    ['mixed.test', '127.0.0.1, a loopback address of this machine'],
  ])('a server named by a remote resource: %s is refused', async (host, what) => {
    expect(await problemOf(remote, host)).toBe(`${host} resolves to ${what}`);
  });

  it('admits a public address, and a private one with --allow-private', async () => {
    expect(await problemOf(remote, 'public.test')).toBe('admitted');
    expect(await problemOf(remote, 'corp.test', true)).toBe('admitted');
    expect(await problemOf(remote, 'ula.test', true)).toBe('admitted');
    expect(await problemOf(remote, 'metadata.test', true)).toMatch(/link-local/);
    expect(await problemOf(remote, 'loopback.test', true)).toMatch(/loopback/);
  });

  it("admits this machine's addresses when the probed URL names this machine as typed, never because of DNS", async () => {
    for (const target of [
      'http://localhost:3000/mcp',
      'http://127.0.0.1:3000/mcp',
      'http://[::1]:3000/',
      'http://app.localhost/',
    ]) {
      expect(await problemOf(new URL(target), 'loopback.test')).toBe('admitted');
      expect(await problemOf(new URL(target), 'own.test')).toBe('admitted');
      expect(await problemOf(new URL(target), 'metadata.test')).toMatch(/link-local/);
    }
    expect(await problemOf(new URL('http://198.51.100.7:3000/mcp'), 'loopback.test')).toBe('admitted');
    // mcp.example.test resolves to 127.0.0.1, but the URL does not name this machine: no exception.
    expect(await problemOf(remote, 'loopback.test')).toMatch(/loopback/);
  });

  it("always admits the probed URL's own host, whatever it resolves to", async () => {
    expect(await problemOf(remote, 'mcp.example.test:8080')).toBe('admitted');
  });

  it('says when a name does not resolve, or not in time', async () => {
    expect(await problemOf(remote, 'nowhere.test')).toBe('no answer (the name does not resolve)');
    const hanging: Resolver = () => new Promise(() => undefined);
    const admission = await probeNetwork(remote, false, { resolve: hanging }).admit(
      new URL('https://slow.test/'),
      Date.now() + 50,
    );
    expect(admission).toEqual({ problem: 'no answer (timeout resolving the name)' });
  });
});

describe('check follows no name to this machine (real servers on loopback)', () => {
  let resource: LoopbackServer;
  let listener: Server;
  let connections = 0;
  let asPort: number;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    resource = await startLoopbackServer(() => undefined);
    // Where a rebound name points: a real listener on loopback that must never see a connection.
    listener = createServer((socket) => {
      connections += 1;
      sockets.add(socket);
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    asPort = (listener.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => listener.close(resolve));
    await resource.close();
  });
  beforeEach(() => {
    resource.reset();
    connections = 0;
  });

  /** A probed resource named mcp.example.test (answered 127.0.0.1 by the run's resolver) listing these servers. */
  async function probe(servers: string[], named?: string, extra: Partial<CheckRequest> = {}) {
    const port = new URL(resource.origin).port;
    const url = `http://mcp.example.test:${port}/mcp`;
    resource.handler = (req, res) => {
      const challenge = `Bearer scope="a"${named === undefined ? '' : `, resource_metadata="${named}"`}`;
      if (req.method === 'POST') json(res, 401, {}, { 'WWW-Authenticate': challenge });
      else if (req.url?.startsWith('/.well-known/oauth-protected-resource'))
        json(res, 200, { resource: url, authorization_servers: servers });
      else json(res, 404, {});
    };
    const { resolve, asked } = resolverOf({
      'mcp.example.test': ['127.0.0.1'],
      'as.rebound.test': ['127.0.0.1'],
      'own.test': OWN,
      'metadata.test': ['169.254.169.254'],
      'corp.test': ['10.1.2.3'],
      'doc.rebound.test': ['::ffff:127.0.0.1'],
    });
    const lines: CheckLine[] = [];
    await runCheck({ url, network: { resolve, ownAddresses: OWN }, ...extra }, (line) => lines.push(line));
    return { lines, asked, url };
  }

  it('refuses each named server that resolves to this machine, a link-local or a private address, with its fix; the loopback listener sees no connection', async () => {
    const servers = [
      `https://as.rebound.test:${asPort}`,
      `https://own.test:${asPort}`,
      'https://metadata.test',
      'https://corp.test',
    ];
    const { lines, asked } = await probe(servers);
    const refs = '[RFC 8414 §3.1, §3.3; OIDC Discovery §4.3; MCP 2025-11-25 §4.3]';
    const local =
      "check follows this machine's addresses only when the probed URL names this machine (localhost, 127.0.0.1, [::1] or one of its addresses): for a local set-up, probe http://localhost:<port>/… and list the issuer by that name";
    expect(lines.slice(-4).map((line) => `${line.status}  ${line.text}  ${line.refs}  fix: ${line.fix}`)).toEqual([
      `FAIL  ${servers[0]}: not followed: as.rebound.test resolves to 127.0.0.1, a loopback address of this machine  RFC 8414 §3.1, §3.3; OIDC Discovery §4.3; MCP 2025-11-25 §4.3  fix: ${local}`,
      `FAIL  ${servers[1]}: not followed: own.test resolves to 198.51.100.7, an address of this machine's own interfaces  ${refs.slice(1, -1)}  fix: ${local}`,
      `FAIL  ${servers[2]}: not followed: metadata.test resolves to 169.254.169.254, a link-local address (169.254.169.254 is the cloud metadata service)  ${refs.slice(1, -1)}  fix: none in check: it never follows a link-local address; list an issuer clients can reach`,
      `FAIL  ${servers[3]}: not followed: corp.test resolves to 10.1.2.3, a private address  ${refs.slice(1, -1)}  fix: rerun with --allow-private if that network is yours to probe`,
    ]);
    expect(connections).toBe(0);
    // The probed resource itself was reached (its own name, pinned): the POST and both document forms.
    expect(resource.seen.map((seen) => `${seen.method} ${seen.url}`)).toEqual([
      'POST /mcp',
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /.well-known/oauth-protected-resource',
    ]);
    // Each name asked once: the address the check decided on is the one every connection used.
    expect(Object.fromEntries(asked)).toEqual({
      'mcp.example.test': 1,
      'as.rebound.test': 1,
      'own.test': 1,
      'metadata.test': 1,
      'corp.test': 1,
    });
  });

  it('refuses a resource_metadata document on a name rebound to this machine (an IPv4-mapped answer), and the listener sees no connection', async () => {
    const named = `https://doc.rebound.test:${asPort}/.well-known/oauth-protected-resource/mcp`;
    const { lines } = await probe([`https://as.rebound.test:${asPort}`], named);
    const document = lines.find((line) => line.text.startsWith('the resource_metadata document'));
    expect(document).toMatchObject({
      status: 'FAIL',
      text: 'the resource_metadata document: not followed: doc.rebound.test resolves to ::ffff:127.0.0.1, a loopback address of this machine',
    });
    expect(document?.fix).toMatch(
      /^check follows this machine's addresses only when the probed URL names this machine/,
    );
    expect(connections).toBe(0);
  });

  it('with --allow-private, still refuses a name rebound to this machine (private addresses are admitted: see above)', async () => {
    const { lines } = await probe([`https://as.rebound.test:${asPort}`], undefined, { allowPrivate: true });
    expect(lines.map((line) => line.text)).toContain(
      `https://as.rebound.test:${asPort}: not followed: as.rebound.test resolves to 127.0.0.1, a loopback address of this machine`,
    );
    expect(connections).toBe(0);
  });
});
