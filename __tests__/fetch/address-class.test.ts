// What an address reaches (lib/fetch/address-class.ts): this machine, a link-local neighbour, a private network or
// the Internet, IPv4-mapped IPv6 forms read as their IPv4 address.
import { networkInterfaces } from 'node:os';
import { addressClass, addressList, ownAddresses } from '../../lib/fetch/address-class';

describe('addressClass', () => {
  const own = addressList(['198.51.100.7', '2001:db8::7']);

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd00::2', 'private'],
    ['fc00::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['198.51.100.7', 'own'],
    ['::ffff:198.51.100.7', 'own'],
    ['2001:db8::7', 'own'],
    ['172.32.0.1', 'public'],
    ['8.8.8.8', 'public'],
    ['2001:db8::8', 'public'],
    ['::ffff:8.8.8.8', 'public'],
    ['not-an-address', 'public'],
  ])('%s → %s', (address, expected) => {
    expect(addressClass(address, own)).toBe(expected);
  });

  it("reads this machine's own interfaces: none of their addresses is public", () => {
    const mine = ownAddresses();
    for (const entries of Object.values(networkInterfaces()))
      for (const entry of entries ?? []) expect(addressClass(entry.address, mine)).not.toBe('public');
  });
});
