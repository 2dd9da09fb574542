// The test issuer's token endpoint (RFC 6749 §3.2): a POST of a bounded form, each parameter at most once, the client
// authenticated, then the grant; every refusal an RFC 6749 §5.2 error answer, never the request's own text.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A refusal at the token endpoint: its HTTP status, RFC 6749 §5.2 `error` code and description. */
export class EndpointRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}

/** A 400 refusal with `error` (RFC 6749 §5.2, RFC 8693 §2.2.2, RFC 8707 §2). */
export function refusal(error: string, description: string): EndpointRefusal {
  return new EndpointRefusal(400, error, description);
}

/** A token request whose client was authenticated: its parameters and the client's id. */
export interface TokenRequest {
  readonly params: URLSearchParams;
  readonly clientId: string;
}

/** What the endpoint asks of its parts: who the client is (or a refusal), and the answer of each grant it serves. */
export interface TokenEndpointParts {
  authenticate(params: URLSearchParams, authorization: string | undefined): string;
  grants: Readonly<Record<string, (request: TokenRequest) => Record<string, unknown>>>;
}

/** Largest form read: a subject token of the package's longest (16 KiB) and a client assertion fit many times. */
export const MAX_FORM_BYTES = 64 * 1024;
/** RFC 8693 §2.1: the only parameters a request may repeat. */
const REPEATABLE = new Set(['audience', 'resource']);
const FORM = /^application\/x-www-form-urlencoded\s*(;|$)/i;

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  // RFC 6749 §5.1: token answers are never cached.
  res
    .writeHead(status, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      Pragma: 'no-cache',
      ...headers,
    })
    .end(JSON.stringify(body));
}

/** The form's parameters, each once (RFC 6749 §3.2) but `audience` and `resource`. */
function readParams(body: string): URLSearchParams {
  const params = new URLSearchParams(body);
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (seen.has(name) && !REPEATABLE.has(name)) throw refusal('invalid_request', 'a parameter is repeated');
    seen.add(name);
  }
  return params;
}

function decide(req: IncomingMessage, body: string, parts: TokenEndpointParts): Record<string, unknown> {
  const params = readParams(body);
  const clientId = parts.authenticate(params, req.headers.authorization);
  const grantType = params.get('grant_type');
  if (grantType === null || grantType === '') throw refusal('invalid_request', 'grant_type is required');
  const grant = Object.prototype.hasOwnProperty.call(parts.grants, grantType) ? parts.grants[grantType] : undefined;
  if (grant === undefined) throw refusal('unsupported_grant_type', 'this server issues tokens by token exchange only');
  return grant({ params, clientId });
}

/** The endpoint's request handler: a POST of at most MAX_FORM_BYTES of form, answered with a token or a refusal. */
export function tokenEndpoint(parts: TokenEndpointParts): (req: IncomingMessage, res: ServerResponse) => void {
  const refuse = (res: ServerResponse, err: unknown) => {
    const known = err instanceof EndpointRefusal ? err : new EndpointRefusal(500, 'server_error', 'unexpected failure');
    answer(res, known.status, { error: known.error, error_description: known.description }, known.headers);
  };
  return (req, res) => {
    if (req.method !== 'POST')
      return refuse(res, new EndpointRefusal(405, 'invalid_request', 'use POST', { Allow: 'POST' }));
    if (!FORM.test(req.headers['content-type'] ?? ''))
      return refuse(res, refusal('invalid_request', 'send application/x-www-form-urlencoded'));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORM_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_FORM_BYTES)
        return refuse(res, new EndpointRefusal(413, 'invalid_request', 'the request is too large'));
      try {
        answer(res, 200, decide(req, Buffer.concat(chunks).toString('utf8'), parts));
      } catch (err) {
        refuse(res, err);
      }
    });
  };
}
