// What a JSON-RPC request to an MCP endpoint calls (tools, resources, prompts), read from the MCP standard headers
// and the parsed body together, so neither can hide a call from the other; or from the headers alone, for MCP
// 2026-07-28 requests whose body no parser read, since such servers refuse a body that disagrees with them.
import type { Request } from 'express';
import { isJsonMediaType, isObject } from '../base/values';
import { gatedMethod, type GatedCall } from './gates';
import { checksHeaders, mcpHeaders } from './headers';

/** Most calls read from one batch body; a longer batch counts as calling everything gated. */
export const MAX_BATCH_CALLS = 64;

/**
 * The calls of a request: `calls`; or `every` (a batch too long to read, or a gated method whose `Mcp-Name` is
 * absent when only the headers are read); `unread` (a body no parser read, with no headers to trust instead); or
 * `bad-name` (an `Mcp-Name` whose Base64 form is invalid, which servers refuse).
 */
export type CalledItems =
  { kind: 'calls'; calls: readonly GatedCall[] } | { kind: 'every' } | { kind: 'unread' } | { kind: 'bad-name' };

/** The gated call a JSON-RPC message makes, if it is one with a string name or URI. */
function bodyCall(message: unknown): GatedCall | undefined {
  if (!isObject(message)) return undefined;
  const gated = gatedMethod(message.method);
  if (gated === undefined || !isObject(message.params)) return undefined;
  const key = message.params[gated.field];
  return typeof key === 'string' ? { gate: gated.gate, key } : undefined;
}

/** A JSON body is on its way (RFC 9110 §8.6: a length or a transfer coding says there is a body). */
function hasJsonBody(req: Request): boolean {
  const type = req.headers['content-type'];
  const framed = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  return framed && type !== undefined && isJsonMediaType(type);
}

/**
 * Whether a parser read the body: `req.body` is set and the request stream has ended. Express 4's body parsers set
 * `req.body = {}` on every request, the ones they skip included (another content type), leaving the stream unread
 * for the transport, which then runs whatever call it holds: an empty object there is no body read.
 */
function bodyWasRead(req: Request): boolean {
  return req.body !== undefined && req.readableEnded !== false;
}

/**
 * The gated calls this request makes. A POST whose JSON body no parser read (`express.json()` missing) is read
 * from its headers when it names MCP 2026-07-28 or later and carries `Mcp-Method` (that revision's servers, the
 * SDK's transport included, answer -32020 to a body that disagrees); any other such POST is `unread`: the transport
 * would parse it after us, so nothing here could see the call.
 */
export function calledItems(req: Request): CalledItems {
  const headers = mcpHeaders(req);
  const calls: GatedCall[] = [];
  const named = gatedMethod(headers.method);
  if (named !== undefined && headers.name !== undefined) {
    if (headers.name === null) return { kind: 'bad-name' };
    calls.push({ gate: named.gate, key: headers.name });
  }
  if (req.method !== 'POST') return { kind: 'calls', calls };
  const body: unknown = req.body;
  if (hasJsonBody(req) && !bodyWasRead(req)) {
    if (!checksHeaders(headers.version) || headers.method === undefined) return { kind: 'unread' };
    // The server refuses a gated method without the `Mcp-Name` its body needs, unless the body names nothing.
    return named !== undefined && headers.name === undefined ? { kind: 'every' } : { kind: 'calls', calls };
  }
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length > MAX_BATCH_CALLS) return { kind: 'every' };
  for (const message of messages) {
    const call = bodyCall(message);
    if (call !== undefined) calls.push(call);
  }
  return { kind: 'calls', calls };
}
