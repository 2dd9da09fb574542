// Where `check` may connect: each name resolved once per run and its address pinned (no second lookup between the
// decision and the connection), and the addresses a probed server names refused when they reach this machine, a
// link-local neighbour, or (without --allow-private) a private network. The probed URL's own host is the user's
// choice: always reached. Whether the probed URL names this machine is read from the URL as typed, never from DNS.
import { lookup } from 'node:dns/promises';
import { isIP, type BlockList } from 'node:net';
import { addressClass, addressList, ownAddresses, type AddressClass } from '../fetch/address-class';
import type { Transport } from '../fetch/bounded-fetch';
import { pinnedTransport } from '../fetch/pinned-transport';
import { isLoopbackHost } from '../fetch/remote-url';

/** How a name is resolved: every address, in the resolver's order (`dns.lookup` reads /etc/hosts too). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<{ address: string; family: number }>>;

/**
 * The network of one run as a test sets it up. Nothing is mocked: names are answered (`resolve`), this machine's
 * addresses are listed (`ownAddresses`), and a test's own certificate is trusted (`ca`); every connection is real.
 */
export interface CheckNetwork {
  /** Default: `dns.lookup(name, { all: true })`. */
  readonly resolve?: Resolver;
  /** Default: the addresses of `os.networkInterfaces()`. */
  readonly ownAddresses?: readonly string[];
  /** Certificates to trust instead of the system's. */
  readonly ca?: string | Buffer;
}

/** A request may go (over a transport pinned to the address checked), or not: why, and what would change that. */
export type Admission = { readonly transport: Transport } | { readonly problem: string; readonly fix?: string };

/** The connections of one run. */
export interface ProbeNetwork {
  /** Whether `url` may be fetched, decided on its host's address, resolved once per run; waits until `deadline`. */
  admit(url: URL, deadline: number): Promise<Admission>;
}

const resolveWithDns: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

const WHAT: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address of this machine',
  unspecified: 'an unspecified address, which connects to this machine',
  own: "an address of this machine's own interfaces",
  'link-local': 'a link-local address (169.254.169.254 is the cloud metadata service)',
  private: 'a private address',
};

const THIS_MACHINE =
  "check follows this machine's addresses only when the probed URL names this machine (localhost, 127.0.0.1, [::1] " +
  'or one of its addresses): for a local set-up, probe http://localhost:<port>/… and list the issuer by that name';

const FIX: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: THIS_MACHINE,
  unspecified: THIS_MACHINE,
  own: THIS_MACHINE,
  'link-local': 'none in check: it never follows a link-local address; list an issuer clients can reach',
  private: 'rerun with --allow-private if that network is yours to probe',
};

/** A name as the resolver takes it: an IPv6 literal without its brackets. */
const bare = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/**
 * Whether the probed URL names this machine, as typed: `localhost` or a name under `.localhost` (RFC 6761 §6.3),
 * or an IP literal of loopback, unspecified, or one of this machine's addresses. A DNS answer never widens this.
 */
function namesThisMachine(target: URL, own: BlockList): boolean {
  const host = target.hostname.endsWith('.') ? target.hostname.slice(0, -1) : target.hostname;
  if (isLoopbackHost(host) || host.endsWith('.localhost')) return true;
  const literal = bare(host);
  return isIP(literal) !== 0 && ['loopback', 'unspecified', 'own'].includes(addressClass(literal, own));
}

/** Waits for `work` until `deadline`; undefined after it (a resolver that hangs costs the run no more). */
async function until<T>(work: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(deadline - Date.now(), 0));
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The network of a run probing `target`: its own host is always admitted; any other host only when none of its
 * addresses reaches this machine (unless `target` names it), a link-local neighbour, or a private network (unless
 * `allowPrivate`). Each host is resolved once; its connections go to the addresses checked, and no others.
 */
export function probeNetwork(target: URL, allowPrivate: boolean, network: CheckNetwork = {}): ProbeNetwork {
  const own = network.ownAddresses === undefined ? ownAddresses() : addressList(network.ownAddresses);
  const local = namesThisMachine(target, own);
  const resolve = network.resolve ?? resolveWithDns;
  const resolved = new Map<string, Promise<ReadonlyArray<{ address: string; family: number }>>>();

  function addressesOf(hostname: string) {
    let found = resolved.get(hostname);
    if (found === undefined) {
      const name = bare(hostname);
      found = isIP(name) !== 0 ? Promise.resolve([{ address: name, family: isIP(name) }]) : resolve(name);
      found.catch(() => undefined);
      resolved.set(hostname, found);
    }
    return found;
  }

  function refusal(hostname: string, address: string): Admission | undefined {
    const kind = addressClass(address, own);
    if (kind === 'public' || (kind === 'private' && allowPrivate)) return undefined;
    if ((kind === 'loopback' || kind === 'unspecified' || kind === 'own') && local) return undefined;
    return { problem: `${hostname} resolves to ${address}, ${WHAT[kind]}`, fix: FIX[kind] };
  }

  return {
    async admit(url, deadline) {
      let addresses: ReadonlyArray<{ address: string; family: number }> | undefined;
      try {
        addresses = await until(addressesOf(url.hostname), deadline);
      } catch {
        return { problem: 'no answer (the name does not resolve)' };
      }
      if (addresses === undefined) return { problem: 'no answer (timeout resolving the name)' };
      const usable = addresses.filter((entry) => isIP(entry.address) !== 0);
      if (usable.length === 0) return { problem: 'no answer (the name does not resolve)' };
      if (url.hostname !== target.hostname) {
        for (const { address } of usable) {
          const refused = refusal(url.hostname, address);
          if (refused !== undefined) return refused;
        }
      }
      const pins = usable.map(({ address }) => ({
        address,
        family: isIP(address) === 6 ? (6 as const) : (4 as const),
      }));
      return { transport: pinnedTransport(pins, network.ca) };
    },
  };
}
