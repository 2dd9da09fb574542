// What a JSON-RPC request to an MCP endpoint calls (tools, resources, prompts), read from its body: the body
// requireMcpAuth settled (body.ts) is the one the transport runs, so the calls read here are the calls that run.
// Headers name nothing: transports run the body (a 2026-07-28 request whose headers disagree with it is refused).
import type { Request } from 'express';
import { isObject } from '../base/values';
import { gatedMethod, type GatedCall } from './gates';

/** Most calls read from one batch body; a longer batch counts as calling everything gated. */
export const MAX_BATCH_CALLS = 64;

/** The calls of a request: `calls`; or `every`, for a batch too long to read. */
export type CalledItems = { kind: 'calls'; calls: readonly GatedCall[] } | { kind: 'every' };

/** The gated call a JSON-RPC message makes, if it is one with a string name or URI. */
function bodyCall(message: unknown): GatedCall | undefined {
  if (!isObject(message)) return undefined;
  const gated = gatedMethod(message.method);
  if (gated === undefined || !isObject(message.params)) return undefined;
  const key = message.params[gated.field];
  return typeof key === 'string' ? { gate: gated.gate, key } : undefined;
}

/**
 * The gated calls this request makes: each JSON-RPC request of its body (one, or a batch: the SDK's 2025
 * transports still run batches, each call of one). GET, DELETE and a POST without a body call nothing.
 */
export function calledItems(req: Request): CalledItems {
  if (req.method !== 'POST') return { kind: 'calls', calls: [] };
  const body: unknown = req.body;
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length > MAX_BATCH_CALLS) return { kind: 'every' };
  const calls: GatedCall[] = [];
  for (const message of messages) {
    const call = bodyCall(message);
    if (call !== undefined) calls.push(call);
  }
  return { kind: 'calls', calls };
}
