// The test issuer on 127.0.0.1: its JWKS, its OpenID configuration naming it (and its token endpoint, when it has
// one), and the token endpoint itself; nothing else is served.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server answers; each part is left out when undefined. */
export interface IssuerRoutes {
  /** The JWKS text; each call counts one fetch. */
  jwks: (() => string) | undefined;
  /** The OpenID configuration's members, given the server's origin. */
  metadata: ((origin: string) => Record<string, unknown>) | undefined;
  /** The token endpoint, at `/token`. */
  token: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
}

/** A listening server: its origin, and `close()` that ends every connection. */
export interface IssuerServer {
  readonly origin: string;
  close(): Promise<void>;
}

/** The paths served. */
export const JWKS_PATH = '/.well-known/jwks.json';
export const TOKEN_PATH = '/token';

/** Start the server on a free loopback port. */
export async function serveIssuer(routes: IssuerRoutes): Promise<IssuerServer> {
  let origin = '';
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const json = (text: string) =>
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(text);
    if (path === JWKS_PATH && routes.jwks !== undefined) json(routes.jwks());
    else if (path === '/.well-known/openid-configuration' && routes.metadata !== undefined)
      json(JSON.stringify(routes.metadata(origin)));
    else if (path === TOKEN_PATH && routes.token !== undefined) routes.token(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
