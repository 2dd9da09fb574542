// Where a request says it was sent, read once for every room that builds a URL from it: the scheme (Express's
// `req.protocol`) and the host (`Host`, or `X-Forwarded-Host` from a peer Express's `trust proxy` trusts), each
// accepted only when well formed, so that no header can carry a path, a query or userinfo into that URL.
import type { Request } from 'express';
import { isIPv6 } from 'node:net';

/**
 * RFC 3986 §3.2.2–3.2.3 `host [ ":" port ]` as a Host field names it: a name of unreserved characters (a DNS name
 * or an IPv4 address) or a bracketed IPv6 literal, then an optional decimal port. Nothing that could end the
 * authority (`/ ? # \`), carry userinfo (`@`), percent-encode a character, or be stripped by a URL parser (tab).
 */
const HOST_AND_PORT = /^(?:[A-Za-z0-9._~-]+|\[([0-9A-Fa-f:.]+)\])(?::([0-9]{1,5}))?$/;

/** True when `value` is `host[:port]`: a name, an IPv4 address or a bracketed IPv6 literal, a port ≤ 65535. */
export function isHostAndPort(value: string): boolean {
  const parts = HOST_AND_PORT.exec(value);
  if (parts === null) return false;
  if (parts[1] !== undefined && !isIPv6(parts[1])) return false;
  return parts[2] === undefined || Number(parts[2]) <= 65535;
}

type TrustProxy = (address: string | undefined, hop: number) => boolean;

/**
 * The request's host as Express 5's `req.host` reads it (Express 4's `req.hostname` drops the port):
 * `X-Forwarded-Host` (its first value) only when `trust proxy` trusts the peer, else `Host`.
 */
function claimedHost(req: Request): string | undefined {
  const trust = req.app.get('trust proxy fn') as TrustProxy | undefined;
  let host = req.get('X-Forwarded-Host');
  if (host === undefined || trust === undefined || !trust(req.socket.remoteAddress, 0)) host = req.get('Host');
  else if (host.includes(',')) host = host.slice(0, host.indexOf(',')).trimEnd();
  return host;
}

/**
 * `scheme://host[:port]` of the request, from its scheme (`http` or `https`, in any case) and its host in
 * `host[:port]` syntax; undefined when either is missing or anything else.
 */
export function requestOrigin(req: Request): string | undefined {
  const scheme = req.protocol;
  if (typeof scheme !== 'string' || !/^https?$/i.test(scheme)) return undefined;
  const host = claimedHost(req);
  if (host === undefined || !isHostAndPort(host)) return undefined;
  return `${scheme}://${host}`;
}
