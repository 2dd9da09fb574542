// One request to an address resolved and checked beforehand (`check`'s probe): node:http(s) with a `lookup` that
// answers that address, so that no second DNS answer can move the connection between the check and the connect;
// TLS keeps the name for SNI and the certificate check. Its bounds (time, bytes, no redirect) are fetchBounded's,
// which reads the answer it hands back as a fetch Response.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupAddress } from 'node:dns';
import type { Transport } from './bounded-fetch';

/** An address a connection may be pinned to, as `dns.lookup` answers it. */
export interface Pin {
  readonly address: string;
  readonly family: 4 | 6;
}

/** The statuses fetch's `redirect: 'error'` refuses, refused here the same way; and those that carry no body. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NO_BODY = new Set([204, 205, 304]);

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/** A response body as a web stream, read as it is asked for (the reader's pace holds the socket's). */
function streamOf(res: IncomingMessage): ReadableStream<Uint8Array> {
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      res.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) res.pause();
      });
      res.on('end', () => {
        ended = true;
        controller.close();
      });
      res.on('error', (err) => {
        if (!ended) controller.error(err);
        ended = true;
      });
      res.on('close', () => {
        if (!ended) controller.error(new Error('connection closed before the body ended'));
        ended = true;
      });
    },
    pull() {
      res.resume();
    },
    cancel() {
      res.destroy();
    },
  });
}

/**
 * A transport for fetchBounded whose connections go to the addresses `pins` (all checked beforehand, at least one)
 * whatever the URL's name resolves to now, over TCP or TLS (where the name is still the SNI server name and the
 * name the certificate must carry). `ca`: the certificates to trust instead of the system's, for a test's server.
 */
export function pinnedTransport(pins: readonly Pin[], ca?: string | Buffer): Transport {
  const [first] = pins;
  // net.connect asks with { all: true } when it tries addresses in turn (autoSelectFamily: `localhost` as ::1, then
  // 127.0.0.1): the pinned ones, and only they, either way.
  const lookup = (_name: string, options: { all?: boolean }, callback: LookupCallback) => {
    if (options.all === true)
      callback(
        null,
        pins.map(({ address, family }) => ({ address, family })),
      );
    else callback(null, first.address, first.family);
  };
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const target = new URL(url);
      const headers: Record<string, string> = { ...init.headers };
      if (init.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(init.body));
      const options = { method: init.method, headers, signal: init.signal, lookup, agent: false as const };
      const onAnswer = (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        if (REDIRECTS.has(status) || status < 200 || status > 599) {
          res.destroy();
          reject(new TypeError(REDIRECTS.has(status) ? 'a redirect, not followed' : `status ${status}`));
          return;
        }
        const fields = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
          try {
            fields.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
          } catch {
            // A field fetch would not have kept either.
          }
        }
        if (NO_BODY.has(status)) res.resume();
        resolve(new Response(NO_BODY.has(status) ? null : streamOf(res), { status, headers: fields }));
      };
      const request =
        target.protocol === 'https:'
          ? httpsRequest(target, { ...options, ...(ca === undefined ? {} : { ca }) }, onAnswer)
          : httpRequest(target, options, onAnswer);
      request.on('error', reject);
      request.end(init.body);
    });
}
