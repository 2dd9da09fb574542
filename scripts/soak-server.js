'use strict';
/**
 * The server side of `npm run soak` (scripts/soak.js), in its own process so that its resident memory is its
 * own: an Express 5 app with `GET /me` behind requireVerifiedUser(['identify']) (HS256, default cache bounds,
 * the system clock), from the compiled package. Tells its parent the port, then its RSS, heap and cache figures once a second, over IPC.
 */
const express = require('express');
// The compiled package (soak.js builds it into scripts/.tmp/dist first), so that the process holds what a
// user's would: no TypeScript compiler in memory.
const { createTokenAuth } = require('./.tmp/dist');

const secret = process.env.SOAK_SECRET;
if (secret === undefined || process.send === undefined) throw new Error('started by scripts/soak.js only');

const auth = createTokenAuth({ key: { secret }, issuer: 'auth.example.com', audience: 'api.example.com' });
const app = express();
app.get('/me', auth.requireVerifiedUser(['identify']), (req, res) => {
  res.json({ jti: req.auth.jti });
});

const server = app.listen(0, '127.0.0.1', () => {
  process.send({ type: 'listening', port: server.address().port });
  setInterval(() => {
    if (process.env.SOAK_GC === '1' && typeof global.gc === 'function') global.gc();
    const { rss, heapUsed } = process.memoryUsage();
    process.send({ type: 'sample', at: Date.now(), rss, heapUsed, cache: auth.stats() });
  }, 1000).unref();
});

process.on('disconnect', () => process.exit(0));
