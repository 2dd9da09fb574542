import { isHostAndPort } from '../../lib/extract/request-origin';

describe('isHostAndPort (RFC 3986 §3.2.2–3.2.3, as a Host field names it)', () => {
  it.each([
    'localhost',
    'api.example.com',
    'API.Example.COM',
    'my_service.internal',
    'api.example.com:8443',
    '192.0.2.10',
    '192.0.2.10:8080',
    '[::1]',
    '[2001:db8::1]:8443',
    '[::ffff:192.0.2.10]',
    'localhost:65535',
  ])('accepts %j', (value) => {
    expect(isHostAndPort(value)).toBe(true);
  });

  it.each([
    '',
    'localhost/intendedPath?',
    'localhost?',
    'localhost#',
    'localhost\\intendedPath',
    'user@localhost',
    'user:pass@localhost',
    'local\thost',
    'local host',
    'localhost\u0000',
    'localhost\u00e9',
    'localhost%2F',
    'localhost;',
    'localhost,other',
    'localhost:',
    'localhost:65536',
    'localhost:123456',
    'localhost:80:80',
    'localhost:+80',
    'localhost:0x50',
    '::1',
    '[::1',
    '[zz::1]',
    '[v1.fe]',
    '[fe80::1%25eth0]',
    '[::1]x',
  ])('refuses %j', (value) => {
    expect(isHostAndPort(value)).toBe(false);
  });
});
