// The JSON-RPC body of an MCP POST, as the transport behind requireMcpAuth will run it: the body a parser left on
// `req.body`, a Buffer or string from `express.raw()`/`express.text()` parsed, or the request stream read here when
// nothing read it (bounded, as `express.json()` is), then handed on as `req.body`. The call gated is the call run.
import type { Request, Response } from 'express';
import { optionError } from '../base/option-error';
import { isJsonMediaType, isObject } from '../base/values';
import { readRequestStream } from '../http/request-body';

/** `express.json()`'s default limit, 100 kB (its `bytes` units are 1024-based). */
export const DEFAULT_BODY_LIMIT = 100 * 1024;

const UNITS: Readonly<Record<string, number>> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
const SIZE = /^(\d+(?:\.\d+)?) *(b|kb|mb|gb)?$/i;

/** The `limit` option: bytes, or a size as `express.json()` takes it (`'100kb'`, `'1mb'`); checked at set-up. */
export function resolveBodyLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_BODY_LIMIT;
  const size = typeof limit === 'string' ? SIZE.exec(limit.trim()) : null;
  const bytes =
    typeof limit === 'number' ? limit : size === null ? NaN : Number(size[1]) * UNITS[(size[2] ?? 'b').toLowerCase()];
  if (!Number.isSafeInteger(Math.floor(bytes)) || Math.floor(bytes) < 1)
    optionError('limit', 'requireMcpAuth option "limit" must be a positive number of bytes, or a size such as "100kb"');
  return Math.floor(bytes);
}

/** A body the gate cannot hand on: more than `limit` bytes, JSON that does not parse, or a stream that failed. */
export type BodyFault = 'too-large' | 'invalid-json' | 'unreadable';

/**
 * A body's bytes as the SDK's transports decode them, whatever its charset: UTF-8 (invalid sequences replaced), a
 * leading byte-order mark dropped, as their TextDecoder does. `toString` is the quicker of the two for the same text.
 */
function utf8(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Parse `text` and put the value on `req.body`. Text that is not JSON: a fault under a JSON content type (the
 * transport would answer 400 -32700); under another, no body (the transport answers 415 to that type).
 */
function parseInto(req: Request, text: string): BodyFault | undefined {
  let value: unknown;
  try {
    value = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    value = undefined;
    if (isJsonMediaType(req.headers['content-type'] ?? '')) return 'invalid-json';
  }
  req.body = value;
  return undefined;
}

/**
 * Express 4's parsers put `{}` on every request, those they skip (another content type) included, and leave the
 * stream unread: that is no body read. A stream that ended, or that a parser marked read (`req._body`), was read.
 */
function streamUnread(req: Request): boolean {
  return !req.readableEnded && (req as { _body?: unknown })._body !== true;
}

/** Read the stream, at most `limit` bytes, and parse it; a later body parser then sees the body as read. */
async function readStream(req: Request, res: Response, limit: number): Promise<BodyFault | undefined> {
  const read = await readRequestStream(req, limit);
  if ('failure' in read) return read.failure === 'too-large' ? tooLarge(res) : 'unreadable';
  // body-parser 1.x checks `_body`; 2.x sees the stream ended.
  (req as { _body?: boolean })._body = true;
  return parseInto(req, utf8(read.bytes));
}

/** Over the limit: the rest is never read, so the connection closes after whatever answer is sent. */
function tooLarge(res: Response): BodyFault {
  res.setHeader('Connection', 'close');
  return 'too-large';
}

/**
 * Make `req.body` the JSON value the transport will run, reading or parsing it when no JSON parser did; a POST
 * only (GET and DELETE carry no call). Synchronous when a parser already produced the value. Answers the fault
 * that keeps the body from being handed on, if any; `req.body` is `undefined` for an empty body.
 */
export function settleMcpBody(
  req: Request,
  res: Response,
  limit: number,
): BodyFault | undefined | Promise<BodyFault | undefined> {
  if (req.method !== 'POST') return undefined;
  const body: unknown = req.body;
  if (Buffer.isBuffer(body)) return parseInto(req, utf8(body));
  if (typeof body === 'string') return parseInto(req, body);
  if (body === undefined || (isObject(body) && Object.keys(body).length === 0 && streamUnread(req))) {
    if (!streamUnread(req)) return undefined;
    return readStream(req, res, limit);
  }
  return undefined;
}
