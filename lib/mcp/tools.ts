// Which tools a JSON-RPC request calls, read from the `Mcp-Method`/`Mcp-Name` headers (MCP 2026-07-28) and the
// parsed body together, so neither can hide a call from the other; and the `tools` option of requireMcpAuth.
import type { Request } from 'express';
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';

/** Most calls read from one batch body; a longer batch counts as calling every gated tool. */
export const MAX_BATCH_CALLS = 64;

/** The tools of a request: their names, or `every` (a batch too long to read), or `unread` (no parsed body). */
export type CalledTools = { kind: 'names'; names: readonly string[] } | { kind: 'every' } | { kind: 'unread' };

/** `tools: { name: scopes }`, validated: each value a list of scope strings. Own keys only (no prototype names). */
export function parseToolScopes(input: unknown): ReadonlyMap<string, readonly string[]> {
  const tools = new Map<string, readonly string[]>();
  if (input === undefined) return tools;
  if (!isObject(input) || Array.isArray(input))
    optionError('tools', 'requireMcpAuth option "tools" must be an object { toolName: scopes[] }');
  for (const [name, scopes] of Object.entries(input)) {
    if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== 'string')) {
      optionError(`tools.${name}`, `requireMcpAuth option "tools.${name}" must be an array of scope strings`);
    }
    tools.set(name, Object.freeze([...(scopes as string[])]));
  }
  return tools;
}

function headerValue(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The tool a JSON-RPC message calls, if it is a `tools/call` with a string name. */
function calledTool(message: unknown): string | undefined {
  if (!isObject(message) || message.method !== 'tools/call' || !isObject(message.params)) return undefined;
  const name = message.params.name;
  return typeof name === 'string' ? name : undefined;
}

/** A JSON body is on its way (RFC 9110 §8.6: a length or a transfer coding says there is a body). */
function hasJsonBody(req: Request): boolean {
  const type = headerValue(req, 'content-type');
  const framed = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  return framed && type !== undefined && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type);
}

/**
 * The tools this request calls. A POST whose JSON body no parser read (`express.json()` missing) is `unread`: the
 * transport would parse it after us, so nothing here could see the call.
 */
export function calledTools(req: Request): CalledTools {
  const names: string[] = [];
  if (headerValue(req, 'mcp-method') === 'tools/call') {
    const name = headerValue(req, 'mcp-name');
    if (name !== undefined) names.push(name);
  }
  if (req.method !== 'POST') return { kind: 'names', names };
  const body: unknown = req.body;
  if (body === undefined && hasJsonBody(req)) return { kind: 'unread' };
  if (Array.isArray(body)) {
    if (body.length > MAX_BATCH_CALLS) return { kind: 'every' };
    for (const message of body) {
      const name = calledTool(message);
      if (name !== undefined) names.push(name);
    }
  } else {
    const name = calledTool(body);
    if (name !== undefined) names.push(name);
  }
  return { kind: 'names', names };
}
