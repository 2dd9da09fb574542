// A loopback reverse proxy that adds `Authorization: Bearer <token>` to every request it passes on, as an MCP client
// that signed in would: the conformance suite (conformance.mjs) knows no OAuth flow of ours, so it reaches the
// protected server through this. Bodies and answers stream through unchanged; at most `MAX_SOCKETS` requests at once.
import http from 'node:http';

const MAX_SOCKETS = 32;

/** Start the proxy in front of `target` (an origin); resolves `{ origin, close() }`. */
export async function startTokenProxy(target, token) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    const onward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    onward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(onward);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    close() {
      agent.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
