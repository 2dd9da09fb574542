'use strict';
/**
 * Child process of bench/security-events.js: the receiver alone in its process, so that its CPU time is its own —
 * a TokenAuth on createMemoryRevocationStore, `auth.securityEvents()` for one pushing transmitter, a real Express app
 * on 127.0.0.1. Configuration as JSON in RECEIVER_CONFIG: { issuer, authorization }. Sends { port } once listening;
 * answers 'cpu' with process.cpuUsage() and 'stats' with events.stats().
 */
require('../scripts/ts-register');
const express = require('express');
const { createTokenAuth, createMemoryRevocationStore } = require('../lib');

const { issuer, authorization } = JSON.parse(process.env.RECEIVER_CONFIG);
const auth = createTokenAuth({
  key: { secret: 'bench-security-events-secret-long-enough' },
  issuer,
  audience: 'api',
  revocation: createMemoryRevocationStore({ maxRules: 1_000_000 }),
  maxLifetime: '1h',
});
const events = auth.securityEvents({
  transmitters: [{ issuer, audience: 'https://api.example.test', push: { authorization } }],
});
const app = express();
app.use('/events', events.router());
const server = app.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
  if (message === 'stats') process.send({ stats: events.stats() });
});
process.on('disconnect', () => process.exit(0));
