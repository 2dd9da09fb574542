// The standard request headers of MCP 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), read the way
// the MCP SDK's transport reads them before it compares them with the body: optional whitespace around the value
// removed (RFC 9110 §5.5), an `=?base64?…?=` value decoded, an invalid one refused. A gate that read them otherwise
// would see another name than the server then serves.
import type { Request } from 'express';

/** The first protocol revision whose servers refuse a request whose headers and body disagree (JSON-RPC -32020). */
export const FIRST_HEADER_CHECKED_VERSION = '2026-07-28';

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
// Canonical Base64 (RFC 4648 §4), padding included: what MCP 2026-07-28 "Value Encoding" asks for, as the SDK checks.
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// A revision is a date (YYYY-MM-DD); dates compare as strings.
const REVISION = /^\d{4}-\d{2}-\d{2}$/;
// `fatal`: bytes that are not UTF-8 are an invalid value; a leading BOM is dropped, as the SDK's decoder drops it.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** What the MCP standard headers of a request say. */
export interface McpRequestHeaders {
  /** `MCP-Protocol-Version`. */
  readonly version: string | undefined;
  /** `Mcp-Method`: the JSON-RPC method the body calls. */
  readonly method: string | undefined;
  /** `Mcp-Name`, decoded: the tool, prompt or resource the body names; `null` when its Base64 form is invalid. */
  readonly name: string | null | undefined;
}

/** SP and HTAB around a field value (RFC 9110 §5.5); Node's parser trims them already, other front ends may not. */
function withoutOws(value: string): string {
  // A loop, not a regular expression: `[ \t]+$` backtracks quadratically over a long run of spaces.
  const isOws = (at: number) => value[at] === ' ' || value[at] === '\t';
  let start = 0;
  let end = value.length;
  while (start < end && isOws(start)) start += 1;
  while (end > start && isOws(end - 1)) end -= 1;
  return value.slice(start, end);
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? withoutOws(value) : undefined;
}

/**
 * An `Mcp-Name` value as the server compares it: a value wrapped as `=?base64?…?=` is the UTF-8 text of its Base64
 * payload; a wrapped value that is not canonical Base64 of UTF-8 is `null` (servers refuse it); any other value is
 * itself (MCP 2026-07-28, Streamable HTTP, "Value Encoding").
 */
export function decodeMcpName(value: string): string | null {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  // Slices as the SDK does, so that even the overlapping "=?base64?=" reads as it does there (the empty name).
  const payload = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(payload)) return null;
  try {
    return UTF8.decode(Buffer.from(payload, 'base64'));
  } catch {
    return null;
  }
}

/** The request's MCP standard headers, whitespace removed and `Mcp-Name` decoded. */
export function mcpHeaders(req: Request): McpRequestHeaders {
  const name = header(req, 'mcp-name');
  return {
    version: header(req, 'mcp-protocol-version'),
    method: header(req, 'mcp-method'),
    name: name === undefined ? undefined : decodeMcpName(name),
  };
}

/**
 * Whether `version` names a revision (2026-07-28 or later) whose servers refuse a request whose `Mcp-Method` or
 * `Mcp-Name` disagree with its body. Only a well-formed date counts: the SDK treats any string that sorts after
 * 2026-07-28 as such a revision, so this is never true where the SDK would skip the comparison.
 */
export function checksHeaders(version: string | undefined): boolean {
  return version !== undefined && REVISION.test(version) && version >= FIRST_HEADER_CHECKED_VERSION;
}
