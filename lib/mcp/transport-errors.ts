// The answers an MCP Streamable HTTP transport gives itself, as JSON-RPC errors, for a request requireMcpAuth does
// not hand on after the token: a body over the limit or not JSON, and MCP 2026-07-28 standard headers that disagree
// with the body. Written as the SDK's transports write them, so a client sees what it would without the gate.
import type { Response } from 'express';
import type { BodyFault } from './body';

/** MCP 2026-07-28 "HeaderMismatch": a standard header missing, invalid or disagreeing with the body. */
export const HEADER_MISMATCH = -32020;

/** A JSON-RPC error answer owed to a request: its HTTP status, the error, and the request's `id` when known. */
export interface McpRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly id: string | number | null;
}

/** What each body fault is answered with (the SDK's transports: 413 -32000, 400 -32700). */
export function bodyRefusal(fault: BodyFault, limit: number): McpRefusal {
  if (fault === 'too-large')
    return {
      status: 413,
      code: -32000,
      message: `Payload Too Large: Request body must not exceed ${limit} bytes`,
      id: null,
    };
  return { status: 400, code: -32700, message: 'Parse error: Invalid JSON', id: null };
}

/** The 400 -32020 answer for a header (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) the body disagrees with. */
export function headerRefusal(header: string, id: string | number | null): McpRefusal {
  return { status: 400, code: HEADER_MISMATCH, message: `Bad Request: the ${header} header and the body disagree`, id };
}

/** Write the refusal as a JSON-RPC error response. */
export function sendRefusal(res: Response, refusal: McpRefusal): void {
  if (res.headersSent) return;
  res.status(refusal.status).json({
    jsonrpc: '2.0',
    error: { code: refusal.code, message: refusal.message },
    id: refusal.id,
  });
}
