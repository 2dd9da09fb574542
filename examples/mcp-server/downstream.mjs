// The downstream API an MCP tool calls on the user's behalf (a CI service, say), protected by express-verified-user:
// it accepts only tokens audienced to itself, so the MCP server must exchange the user's token (RFC 8693), never
// pass it on. It answers with what its token says: its audience, the user, and who acts for the user (`act`).
import express from 'express';
import { createTokenAuth } from 'express-verified-user';

/** Listen on a random loopback port; `log` receives one line per request. */
export async function startDownstream({ issuer, log }) {
  const app = express();
  const listening = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => listening.once('listening', resolve));
  const resource = `http://127.0.0.1:${listening.address().port}/api`;
  const auth = createTokenAuth({ issuerBaseURL: issuer, resource, claims: 'at+jwt' });

  // A refusal is logged here; an answer, with what its token said, by the route.
  app.use((req, res, next) => {
    res.on('finish', () => {
      if (res.statusCode !== 200) log.push(`downstream  ${req.method} ${req.path} -> ${res.statusCode}`);
    });
    next();
  });
  app.get('/api/builds', auth.requireVerifiedUser(['builds:read']), (req, res) => {
    const claims = auth.claims(req);
    const actors = auth.actorsOf(claims).map((actor) => actor.sub);
    log.push(
      `downstream  GET /api/builds -> 200  token aud ${claims.aud}, sub ${claims.sub}, acting: ${actors.join(' <- ')}`,
    );
    res.json({ audience: claims.aud, user: claims.sub, actors, builds: [{ id: 41, status: 'passed' }] });
  });

  return {
    resource,
    close() {
      auth.close();
      listening.closeAllConnections();
      return new Promise((resolve) => listening.close(resolve));
    },
  };
}
