// A request body read from its stream by middleware that reads one itself (the MCP gate, the security event
// router): bounded in bytes, and in time when asked, so that a large, slow or endless sender holds nothing past them.
import type { Request } from 'express';

/** What reading the stream gave: its bytes, or why there are none (the stream is then paused). */
export type StreamRead = { bytes: Buffer } | { failure: 'too-large' | 'timeout' | 'unreadable' };

/**
 * Read the request's stream to its end, at most `maxBytes` (a declared larger `Content-Length` is refused before
 * anything is read), within `timeoutMs` when given. A stream that errs, or closes before its end (the client went
 * away), is `unreadable`. On a failure the stream is left paused: the caller drains it or closes the connection.
 */
export function readRequestStream(req: Request, maxBytes: number, timeoutMs?: number): Promise<StreamRead> {
  if (Number(req.headers['content-length']) > maxBytes) return Promise.resolve({ failure: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (read: StreamRead) => {
      if (timer !== undefined) clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onError);
      if ('failure' in read) req.pause();
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) finish({ failure: 'too-large' });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received) });
    const onError = () => finish({ failure: 'unreadable' });
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => finish({ failure: 'timeout' }), timeoutMs);
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onError);
  });
}
