'use strict';
// The request the DPoP benchmarks hand the middleware directly (no HTTP): just what it reads of an Express request.

/** The URL every such request is for (a proof's `htu`). */
const ORDERS_URL = 'http://api.test/orders';

/** A GET of ORDERS_URL with this Authorization header and, when given, this DPoP proof. */
function requestFor(authorization, proof) {
  const headers = { host: 'api.test', authorization };
  const rawHeaders = ['Host', 'api.test', 'Authorization', authorization];
  if (proof !== undefined) {
    headers.dpop = proof;
    rawHeaders.push('DPoP', proof);
  }
  return {
    method: 'GET',
    protocol: 'http',
    originalUrl: '/orders',
    headers,
    rawHeaders,
    socket: { remoteAddress: '127.0.0.1' },
    app: { get: () => () => false },
    get: (name) => headers[name.toLowerCase()],
    res: { setHeader: () => undefined },
  };
}

module.exports = { ORDERS_URL, requestFor };
