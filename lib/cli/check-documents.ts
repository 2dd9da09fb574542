// What `check` reads and prints, shared by its rooms: the probe's answers, metadata documents read as RFC 9728 §3.2
// and RFC 8414 §3.2 ask, addresses it may follow, a server's text made safe for a terminal, and the report's lines.
import { MAX_SERVER_TEXT, printable, quoted } from '../base/printable';
import { isJsonMediaType } from '../base/values';
import type { BoundedAnswer } from '../fetch/bounded-fetch';
import { isLoopbackHost } from '../fetch/remote-url';

/** A line's verdict: a duty met, a SHOULD not met (the exit code ignores it), a duty not met. */
export type CheckStatus = 'PASS' | 'WARN' | 'FAIL';

/** One line of the report. */
export interface CheckLine {
  readonly status: CheckStatus;
  /** What was checked and what was found. */
  readonly text: string;
  /** The RFC or MCP sections that state the duty. */
  readonly refs: string;
  /** After a FAIL (or a WARN): what meets the duty, with this package's calls where it is the resource's. */
  readonly fix?: string;
}

/** The answer of one probe, or why there was none (a short phrase). */
export type ProbeAnswer = BoundedAnswer | string;

/** How the checks of a run send requests and report lines. */
export interface CheckRun {
  get(url: string): Promise<ProbeAnswer>;
  /** Undefined when the address of `url`'s host may be followed; else why not, and what would change that. */
  follow(url: string): Promise<{ problem: string; fix: string } | undefined>;
  /** One line; `fix` is printed after a FAIL or WARN (never a PASS). */
  report(status: CheckStatus, text: string, refs: string, fix?: string): void;
}

/** A server's text as check prints it: cut at 200 characters and escaped, by the one escaping (base/printable.ts). */
export const shown = (value: string): string => printable(value, MAX_SERVER_TEXT);

/** A server's text quoted as JSON quotes a string (`"` and `\` escaped too), cut and escaped as `shown`. */
export const shownQuoted = (value: string): string => quoted(value, MAX_SERVER_TEXT);

/**
 * An address a probed server may send check to: https, or http on loopback (RFC 9728 §3, RFC 8414 §2 ask for
 * https); and a loopback address only when the probed resource is on loopback itself, so that a remote server
 * cannot point check at the services of the machine it runs on.
 */
export function fetchableUrl(value: unknown, target: URL): URL | undefined {
  if (typeof value !== 'string' || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  if (url.username !== '' || url.password !== '' || url.hash !== '') return undefined;
  if (reachesThisMachine(url.hostname) && !reachesThisMachine(target.hostname)) return undefined;
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return url;
  return undefined;
}

// 0.0.0.0/8 ("this network", RFC 1122 §3.2.1.3), which Linux and macOS connect to the machine itself.
const THIS_NETWORK_V4 = /^0\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
// IPv4-mapped IPv6 of 127.0.0.0/8 or 0.0.0.0/8, as WHATWG URL writes them ([::ffff:127.0.0.1] is [::ffff:7f00:1]).
const MAPPED_LOCAL_V4 = /^\[::ffff:(?:7f[0-9a-f]{2}|[0-9a-f]{1,2}):[0-9a-f]{1,4}\]$/;

/**
 * Whether a connection to `hostname` may end on the machine itself: loopback, and also what a loopback test
 * misses: 0.0.0.0/8 and `[::]` (the unspecified addresses, which connect locally), their IPv4-mapped forms and
 * 127.0.0.0/8's, and `localhost.` or a name under `.localhost` (RFC 6761 §6.3, which many resolvers send to
 * loopback). Hostnames arrive as WHATWG URL serialises them (lower case, IPv4 shorthands expanded).
 */
function reachesThisMachine(hostname: string): boolean {
  const host = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return (
    isLoopbackHost(host) ||
    host.endsWith('.localhost') ||
    THIS_NETWORK_V4.test(host) ||
    host === '[::]' ||
    MAPPED_LOCAL_V4.test(host)
  );
}

/** A protected resource metadata document as read: its JSON object, or why it cannot be used. */
export type MetadataDocument = { object: Record<string, unknown> } | { problem: string };

/** Read a metadata answer (RFC 9728 §3.2: 200, application/json, a JSON object). */
export function readDocument(answer: ProbeAnswer): MetadataDocument {
  if (typeof answer === 'string') return { problem: answer };
  if (answer.status !== 200) return { problem: `answered ${answer.status}` };
  const type = answer.headers.get('content-type') ?? '';
  if (!isJsonMediaType(type)) return { problem: `answered ${shown(type || 'no content type')}, not application/json` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    return { problem: 'answered text that is not JSON' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return { problem: 'answered JSON that is not an object' };
  return { object: parsed as Record<string, unknown> };
}
