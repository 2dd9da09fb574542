// Remote addresses (JWKS, discovery, upstream, introspection): https, or http on loopback only unless allowed; and
// the one trailing-slash difference two spellings of an issuer may have.
import { optionError } from '../base/option-error';
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** True for hosts that never leave the machine: 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  // WHATWG URL keeps IPv6 brackets in `hostname` and normalises IPv4 shorthands (127.1 → 127.0.0.1).
  return host === 'localhost' || host === '[::1]' || LOOPBACK_V4.test(host);
}

/**
 * Check a JWKS or upstream address once, at set-up: it must parse, carry no credentials or fragment, and
 * use `https:`; plain `http:` is accepted only for loopback hosts or with `allowInsecureHttp`, because keys or
 * verdicts fetched in the clear can be forged by anyone on the path. Returns the parsed URL; a TypeError naming
 * `option` otherwise.
 */
export function checkRemoteUrl(value: unknown, option: string, allowInsecureHttp: boolean): URL {
  if (typeof value !== 'string' || value.trim() === '') optionError(option, `option "${option}" must be a URL string`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return optionError(option, `option "${option}" is not a valid absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    optionError(option, `option "${option}" must be an https: URL`);
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    optionError(
      option,
      `option "${option}" must be an https: URL (plain http: is accepted only for loopback hosts, or with allowInsecureHttp: true)`,
    );
  }
  // fetch refuses URLs with credentials; say so now rather than fail every request later.
  if (url.username !== '' || url.password !== '')
    optionError(option, `option "${option}" must not contain credentials`);
  if (url.hash !== '') optionError(option, `option "${option}" must not contain a fragment`);
  return url;
}

/** Without its one trailing slash, if it has one: RFC 8414 §3.3 tolerates that difference and no other. */
export function withoutTrailingSlash(value: string): string {
  return value.endsWith('/') ? value.slice(0, -1) : value;
}
