// A request body read for the receiver's router: what an app's body parser already read, else the raw bytes,
// bounded in size and time, so that a slow or endless sender holds nothing past its limits.
import type { Request } from 'express';
import { readRequestStream, type StreamRead } from '../http/request-body';

/** What reading gave: the text, or why there is none. */
export type BodyRead = { text: string } | Extract<StreamRead, { failure: unknown }>;

/** Whether an app's parser read the body already: `req.body` set and the request stream ended. */
function parsedByApp(req: Request): boolean {
  return req.body !== undefined && req.readableEnded !== false;
}

/**
 * The body as text: a string or Buffer an app's parser left (`express.text()`, `express.raw()`), `field` of an
 * object it parsed (`express.urlencoded()`), else the stream, read up to `maxBytes` within `timeoutMs`.
 */
export async function readBody(req: Request, maxBytes: number, timeoutMs: number, field?: string): Promise<BodyRead> {
  if (parsedByApp(req)) {
    const body: unknown = req.body;
    if (typeof body === 'string') return { text: body };
    if (Buffer.isBuffer(body)) return { text: body.toString('utf8') };
    // An object a form parser made: only the one field is read back, as a form of its own.
    const value = field === undefined ? undefined : (body as Record<string, unknown> | null)?.[field];
    if (typeof value === 'string') return { text: new URLSearchParams({ [field as string]: value }).toString() };
    return { failure: 'unreadable' };
  }
  const read = await readRequestStream(req, maxBytes, timeoutMs);
  if ('failure' in read) {
    // What is left is read and dropped: the answer goes out, nothing more is kept.
    req.resume();
    return read;
  }
  return { text: read.bytes.toString('utf8') };
}
