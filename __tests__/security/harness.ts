import { constants, createHmac, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import type { Express } from 'express';
import request from 'supertest';
import { createTokenAuth, type ScopeRequirementInput, type TokenAuthOptions } from '../../lib';
import { appWith, type ExpressFactory } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, SECRET } from '../fixtures/issuer';

/** What a refused request must answer (the README's error table): status, exact body and exact RFC 6750 challenge. */
export const REFUSAL = {
  missing: {
    status: 401,
    body: { status: 'error', message: 'Missing access token' },
    challenge: 'Bearer realm="api"',
  },
  invalid: {
    status: 401,
    body: { status: 'error', message: 'Invalid access token' },
    challenge: 'Bearer realm="api", error="invalid_token", error_description="Invalid access token"',
  },
  expired: {
    status: 401,
    body: { status: 'error', message: 'Access token expired' },
    challenge: 'Bearer realm="api", error="invalid_token", error_description="Access token expired"',
  },
} as const;

/** The kinds of refusal a hostile request can earn. */
export type Refusal = keyof typeof REFUSAL;

/** HS256 over SECRET, fixed clock: the app most cases attack. */
export const HS256_OPTIONS: TokenAuthOptions = {
  key: { secret: SECRET },
  issuer: ISSUER,
  audience: AUDIENCE,
  clock: () => NOW,
};

/**
 * A real Express app with `GET /me` behind requireVerifiedUser (answering `req.auth`), listening on 127.0.0.1
 * once per suite so that hundreds of cases do not each open a listener.
 */
export interface ProtectedApp {
  server: Server;
  close(): Promise<void>;
}

export async function protectedApp(
  express: ExpressFactory,
  options: TokenAuthOptions = HS256_OPTIONS,
  scopes: ScopeRequirementInput = ['identify'],
): Promise<ProtectedApp> {
  const auth = createTokenAuth(options);
  const server = await listen(appWith(express, auth, { scopes }));
  return {
    server,
    close: () => {
      auth.close();
      return closeServer(server);
    },
  };
}

export function listen(
  app: Express | ((req: IncomingMessage, res: import('node:http').ServerResponse) => void),
): Promise<Server> {
  const server = createServer(app);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** GET /me with this Authorization header (none when undefined). */
export function getMe(server: Server, authorization: string | undefined): request.Test {
  const req = request(server).get('/me');
  if (authorization !== undefined) req.set('Authorization', authorization);
  return req;
}

/** The parts of an answer a refusal is judged on, in one object so that a failure shows the whole difference. */
export function answerOf(res: request.Response): { status: number; body: unknown; challenge: unknown; json: boolean } {
  return {
    status: res.status,
    body: res.body as unknown,
    challenge: res.headers['www-authenticate'],
    json: /^application\/json/.test(String(res.headers['content-type'])),
  };
}

/** The answer a refusal of this kind must be, exactly. */
export function refusal(kind: Refusal): { status: number; body: unknown; challenge: string; json: true } {
  const { status, body, challenge } = REFUSAL[kind];
  return { status, body, challenge, json: true };
}

/** Send `Authorization` to /me and expect exactly this refusal. */
export async function expectRefused(server: Server, authorization: string | undefined, kind: Refusal): Promise<void> {
  const res = await getMe(server, authorization);
  expect(answerOf(res)).toEqual(refusal(kind));
}

/** base64url of raw text, byte for byte (for JSON that JSON.stringify would never write). */
export function b64text(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** Hash and padding of a JWS algorithm name, for signing raw bytes. */
function signWith(alg: string, input: string, key: KeyObject | string | Buffer): Buffer {
  const bits = `sha${alg.slice(2)}`;
  if (alg.startsWith('HS'))
    return createHmac(bits, key as string | Buffer | KeyObject)
      .update(input)
      .digest();
  const padding = alg.startsWith('PS')
    ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 }
    : {};
  const dsaEncoding = alg.startsWith('ES') ? { dsaEncoding: 'ieee-p1363' as const } : {};
  return cryptoSign(bits, Buffer.from(input), { key: key as KeyObject, ...padding, ...dsaEncoding });
}

/**
 * A compact JWS over exact header and payload texts, signed with `alg` and `key`: the attacker's (or a careless
 * issuer's) token, with bytes no well-behaved signer would produce. `alg` picks the signing primitive and need
 * not match the header.
 */
export function rawToken(
  headerText: string,
  payloadText: string,
  key: KeyObject | string | Buffer = SECRET,
  alg = 'HS256',
): string {
  const input = `${b64text(headerText)}.${b64text(payloadText)}`;
  return `${input}.${signWith(alg, input, key).toString('base64url')}`;
}

/** Replace one segment (0 header, 1 payload, 2 signature) of a compact token. */
export function withSegment(token: string, index: 0 | 1 | 2, segment: string): string {
  const parts = token.split('.');
  parts[index] = segment;
  return parts.join('.');
}

/** A loopback HTTP server that counts and records every request it gets: proof of what was (not) fetched. */
export interface HitCounter {
  readonly url: string;
  readonly hits: number;
  /** Method, path and Authorization of every request, in order. */
  readonly requests: ReadonlyArray<{ method: string; path: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

/** Answer every request with `body` (JSON, 200), or let `respond` answer. */
export async function hitCounter(
  body = '{"keys":[]}',
  respond?: (req: IncomingMessage, res: import('node:http').ServerResponse) => void,
): Promise<HitCounter> {
  const requests: Array<{ method: string; path: string; authorization: string | undefined }> = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization });
    if (respond !== undefined) respond(req, res);
    else res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get hits() {
      return requests.length;
    },
    requests,
    close: () => closeServer(server),
  };
}

/**
 * Send raw bytes as one HTTP/1.1 request and return the status code of the answer: for requests no HTTP client
 * library will send (repeated Authorization fields, control characters, oversized headers).
 */
export function rawRequest(server: Server, head: string): Promise<{ status: number; body: string; headers: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const headers = text.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), headers, body: text.slice(split + 4) });
    });
    socket.end(head);
  });
}
