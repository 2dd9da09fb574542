// What an IP address reaches: this machine (loopback, unspecified, one of its own interfaces), a link-local neighbour
// (169.254.169.254, the cloud's metadata service, among them), a private network, or the Internet. For a probe that
// follows addresses a remote server names (`check`), decided on the address a connection will use, not its name.
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

/** Where an address leads, as the rules of a probe care about it. */
export type AddressClass = 'loopback' | 'unspecified' | 'link-local' | 'own' | 'private' | 'public';

function ranges(list: ReadonlyArray<readonly [string, number]>): BlockList {
  const block = new BlockList();
  // An IPv4 rule covers the IPv4-mapped IPv6 form too (::ffff:127.0.0.1), as BlockList checks it.
  for (const [net, prefix] of list) block.addSubnet(net, prefix, isIP(net) === 6 ? 'ipv6' : 'ipv4');
  return block;
}

const CLASSES: ReadonlyArray<readonly [AddressClass, BlockList]> = [
  [
    'loopback',
    ranges([
      ['127.0.0.0', 8],
      ['::1', 128],
    ]),
  ],
  // 0.0.0.0/8 ("this network", RFC 1122 §3.2.1.3) and ::, which Linux and macOS connect to the machine itself.
  [
    'unspecified',
    ranges([
      ['0.0.0.0', 8],
      ['::', 128],
    ]),
  ],
  [
    'link-local',
    ranges([
      ['169.254.0.0', 16],
      ['fe80::', 10],
    ]),
  ],
  // RFC 1918 and RFC 4193 (unique local addresses).
  [
    'private',
    ranges([
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
      ['fc00::', 7],
    ]),
  ],
];

/** The addresses of this machine's interfaces (`os.networkInterfaces()`), as a list `addressClass` reads. */
export function ownAddresses(): BlockList {
  const own = new BlockList();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) own.addAddress(entry.address, entry.family === 'IPv6' ? 'ipv6' : 'ipv4');
  }
  return own;
}

/** A list of addresses as `ownAddresses` gives it, made from `addresses` (for a test's own view of this machine). */
export function addressList(addresses: readonly string[]): BlockList {
  const list = new BlockList();
  for (const address of addresses) list.addAddress(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return list;
}

/**
 * The class of an IP address (`127.0.0.1`, `::ffff:7f00:1`, `fe80::1`): loopback, unspecified and link-local first,
 * then this machine's own (`own`, from `ownAddresses`), then the private ranges; `public` for anything else. A
 * string that is no IP address is `public`: resolve it first.
 */
export function addressClass(address: string, own: BlockList): AddressClass {
  const family = isIP(address);
  if (family === 0) return 'public';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  for (const [name, list] of CLASSES) {
    if (name === 'private' && own.check(address, type)) return 'own';
    if (list.check(address, type)) return name;
  }
  return own.check(address, type) ? 'own' : 'public';
}
