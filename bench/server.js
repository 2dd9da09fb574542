'use strict';
// One scenario's Express 5 server, in its own process on 127.0.0.1. The parent sends the scenario and keys over
// IPC, this process answers with its port, and then serves until it is told to stop (or the parent goes away).
// On 'usage' it reports its CPU time and the requests it has answered: CPU µs per request is a figure that other
// processes on a shared machine disturb far less than requests/s.
const express = require('express');
const { SCENARIOS, ROUTE, BODY } = require('./scenarios');

process.once('message', (ctx) => {
  const scenario = SCENARIOS.find((s) => s.name === ctx.scenario);
  const app = express();
  app.get(ROUTE, ...scenario.build(ctx), (_req, res) => {
    res.json(BODY);
  });
  // Peers that pass errors to next(): a JSON 401 instead of Express's HTML page, so bodies stay comparable.
  app.use((err, _req, res, _next) => {
    res.status(err.status ?? err.statusCode ?? 500).json({ status: 'error', message: 'Unauthorized' });
  });
  let requests = 0;
  const server = app.listen(0, '127.0.0.1', () => {
    process.send({ port: server.address().port });
  });
  server.on('request', () => {
    requests++;
  });
  server.keepAliveTimeout = 60_000;
  process.on('message', (msg) => {
    if (msg === 'usage') {
      const { user, system } = process.cpuUsage();
      process.send({ usage: { cpu: user + system, requests } });
    } else if (msg === 'stop') process.exit(0);
  });
  process.on('disconnect', () => process.exit(0));
});
