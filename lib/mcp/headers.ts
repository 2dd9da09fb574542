// The standard request headers of MCP 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`), read the way
// the MCP SDK's transport reads them (optional whitespace around the value removed, RFC 9110 §5.5; an
// `=?base64?…?=` value decoded, an invalid one refused), and compared with the body as that revision's servers
// compare them ("Server Validation" in its Streamable HTTP transport): a disagreement is answered 400 -32020.
import type { Request } from 'express';
import { isObject } from '../base/values';
import { gatedMethod } from './gates';
import { headerRefusal, type McpRefusal } from './transport-errors';

/**
 * The revisions whose servers refuse a request whose headers and body disagree (JSON-RPC -32020), of those this
 * package knows. A later revision is not the gate's to judge: such requests pass on, and the transport answers.
 */
export const HEADER_CHECKED_VERSIONS: ReadonlySet<string> = new Set(['2026-07-28']);

/** Where a 2026-07-28 request's body names its revision (the per-request `_meta` envelope). */
const VERSION_META = 'io.modelcontextprotocol/protocolVersion';

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
// Canonical Base64 (RFC 4648 §4), padding included: what MCP 2026-07-28 "Value Encoding" asks for, as the SDK checks.
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
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

/** Whether `version` names a revision this package knows whose servers check the standard headers (2026-07-28). */
export function checksHeaders(version: string | undefined): boolean {
  return version !== undefined && HEADER_CHECKED_VERSIONS.has(version);
}

/**
 * The 400 -32020 answer a request of a checked revision gets, as the SDK's 2026-07-28 transport gives it, when its
 * headers disagree with its body: the envelope's revision is not the header's, `Mcp-Method` is missing or is not
 * the body's method, or a `tools/call`, `resources/read` or `prompts/get` has an `Mcp-Name` that is missing (while
 * the body names one), invalid, or another name. Undefined for anything else: other revisions, notifications,
 * batches, and requests without the envelope, which the transport answers itself.
 */
export function headerMismatch(req: Request, body: unknown): McpRefusal | undefined {
  if (req.method !== 'POST') return undefined;
  const headers = mcpHeaders(req);
  if (!checksHeaders(headers.version) || !isObject(body) || typeof body.method !== 'string') return undefined;
  const { id, params } = body;
  if (typeof id !== 'string' && typeof id !== 'number') return undefined;
  const meta = isObject(params) && isObject(params._meta) ? params._meta : undefined;
  if (typeof meta?.[VERSION_META] !== 'string') return undefined;
  if (meta[VERSION_META] !== headers.version) return headerRefusal('MCP-Protocol-Version', id);
  if (headers.method !== body.method) return headerRefusal('Mcp-Method', id);
  const gated = gatedMethod(body.method);
  if (gated === undefined) return undefined;
  const named = (params as Record<string, unknown>)[gated.field];
  if (headers.name === undefined) return typeof named === 'string' ? headerRefusal('Mcp-Name', id) : undefined;
  if (headers.name === null || (typeof named === 'string' && headers.name !== named))
    return headerRefusal('Mcp-Name', id);
  return undefined;
}
