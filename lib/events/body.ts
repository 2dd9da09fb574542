// A request body read for the receiver's router: what an app's body parser already read, else the raw bytes,
// bounded in size and time, so that a slow or endless sender holds nothing past its limits.
import type { Request } from 'express';

/** What reading gave: the text, or why there is none. */
export type BodyRead = { text: string } | { failure: 'too-large' | 'timeout' | 'unreadable' };

/** Whether an app's parser read the body already: `req.body` set and the request stream ended. */
function parsedByApp(req: Request): boolean {
  return req.body !== undefined && req.readableEnded !== false;
}

/**
 * The body as text: a string or Buffer an app's parser left (`express.text()`, `express.raw()`), `field` of an
 * object it parsed (`express.urlencoded()`), else the stream, read up to `maxBytes` within `timeoutMs`.
 */
export function readBody(req: Request, maxBytes: number, timeoutMs: number, field?: string): Promise<BodyRead> {
  if (parsedByApp(req)) {
    const body: unknown = req.body;
    if (typeof body === 'string') return Promise.resolve({ text: body });
    if (Buffer.isBuffer(body)) return Promise.resolve({ text: body.toString('utf8') });
    // An object a form parser made: only the one field is read back, as a form of its own.
    const value = field === undefined ? undefined : (body as Record<string, unknown> | null)?.[field];
    if (typeof value === 'string')
      return Promise.resolve({ text: new URLSearchParams({ [field as string]: value }).toString() });
    return Promise.resolve({ failure: 'unreadable' });
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > maxBytes) return Promise.resolve({ failure: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = (read: BodyRead) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      // What is left is read and dropped: the answer goes out, nothing more is kept.
      if ('failure' in read) req.resume();
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) finish({ failure: 'too-large' });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ text: Buffer.concat(chunks, total).toString('utf8') });
    const onError = () => finish({ failure: 'unreadable' });
    const timer = setTimeout(() => finish({ failure: 'timeout' }), timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
