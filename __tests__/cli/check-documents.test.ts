// What `check` reads and prints: the addresses a probed server may send it to, its text made safe for a terminal,
// and metadata answers read as RFC 9728 §3.2 asks.
import { fetchableUrl, readDocument, shown } from '../../lib/cli/check-documents';

describe('fetchableUrl', () => {
  const remote = new URL('https://mcp.example.com/mcp');
  const local = new URL('http://127.0.0.1:3000/mcp');

  it.each([
    ['https elsewhere', 'https://as.example.com/tenant', remote, true],
    ['http elsewhere', 'http://as.example.com', remote, false],
    ['a loopback address named by a remote server, https', 'https://127.0.0.1:8443/x', remote, false],
    ['a loopback address named by a remote server, http', 'http://localhost:8080/x', remote, false],
    // Addresses that are not 127.0.0.0/8 or ::1 and still connect to the machine check runs on.
    ['0.0.0.0 named by a remote server', 'https://0.0.0.0:8443/x', remote, false],
    ['0 (0.0.0.0) named by a remote server', 'https://0:8443/x', remote, false],
    ['0.1.2.3 (this network) named by a remote server', 'https://0.1.2.3/x', remote, false],
    ['[::] named by a remote server', 'https://[::]:8443/x', remote, false],
    ['IPv4-mapped 127.0.0.1 named by a remote server', 'https://[::ffff:127.0.0.1]:8443/x', remote, false],
    ['IPv4-mapped 0.0.0.0 named by a remote server', 'https://[::ffff:0.0.0.0]:8443/x', remote, false],
    ['localhost. named by a remote server', 'https://localhost.:8443/x', remote, false],
    ['a name under .localhost named by a remote server', 'https://as.localhost/x', remote, false],
    ['[::] named by a loopback server, https', 'https://[::]:8443/x', local, true],
    ['[::] named by a loopback server, http (not loopback: refused)', 'http://[::]:8443/x', local, false],
    ['an IPv4-mapped public address named by a remote server', 'https://[::ffff:8.8.8.8]/x', remote, true],
    ['a name merely containing localhost', 'https://localhost.example.com/x', remote, true],
    ['http on loopback named by a loopback server', 'http://127.0.0.1:4000/x', local, true],
    ['https elsewhere named by a loopback server', 'https://as.example.com', local, true],
    ['credentials', 'https://user:pass@as.example.com', remote, false],
    ['a fragment', 'https://as.example.com/#x', remote, false],
    ['another scheme', 'file:///etc/passwd', local, false],
    ['not a URL', 'as.example.com', remote, false],
    ['not a string', 42, remote, false],
  ])('%s: %p from %s → %p', (_name, value, target, fetchable) => {
    expect(fetchableUrl(value, target) !== undefined).toBe(fetchable);
  });
});

describe('shown', () => {
  it('escapes C0 and C1 controls, line separators and bidi overrides, and cuts at 200 characters', () => {
    expect(shown('a\u001b[2Jb\u009b1m\u2028\u202e\u2066c\td')).toBe(
      'a\\u001b[2Jb\\u009b1m\\u2028\\u202e\\u2066c\\u0009d',
    );
    expect(shown('x'.repeat(500))).toBe(`${'x'.repeat(200)}…`);
    expect(shown('mcp:tools café')).toBe('mcp:tools café');
  });
});

describe('readDocument', () => {
  const answer = (status: number, type: string | undefined, text: string) => ({
    status,
    headers: new Headers(type === undefined ? {} : { 'content-type': type }),
    text,
    bytes: text.length,
  });

  it.each([
    [
      'a JSON object',
      answer(200, 'application/json; charset=utf-8', '{"resource":"r"}'),
      { object: { resource: 'r' } },
    ],
    ['another status', answer(404, 'application/json', ''), { problem: 'answered 404' }],
    ['no content type', answer(200, undefined, '{}'), { problem: 'answered no content type, not application/json' }],
    ['HTML', answer(200, 'text/html', '{}'), { problem: 'answered text/html, not application/json' }],
    ['not JSON', answer(200, 'application/json', '{'), { problem: 'answered text that is not JSON' }],
    ['an array', answer(200, 'application/json', '[]'), { problem: 'answered JSON that is not an object' }],
    ['no answer', 'no answer (timeout)', { problem: 'no answer (timeout)' }],
  ])('%s', (_name, given, read) => {
    expect(readDocument(given)).toEqual(read);
  });
});
