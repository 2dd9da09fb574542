'use strict';
// CPU per call of two steps on the request path, in two builds of lib/ interleaved (7 rounds, medians): choosing a
// key from a held JWKS key set by `kid` (`select` before issue 36, `keyFromSet` with a key's own `issuer` rule
// after), and reading an AWS ALB assertion with padded segments (`decodePaddedJws`).
//   npm run build && node bench/key-choice.js <baseline dist> <dist>
const crypto = require('node:crypto');
const path = require('node:path');
const [base, after] = process.argv.slice(2).map((dist) => path.resolve(dist));
const jwks = [];
for (let i = 0; i < 3; i++)
  jwks.push({
    ...crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
    kid: `k${i}`,
  });
const padded = (b) => {
  const t = b.toString('base64url');
  return t + '='.repeat((4 - (t.length % 4)) % 4);
};
const alb = `${padded(Buffer.from(JSON.stringify({ typ: 'JWT', kid: '0f8fad5b-d9cb-469f-a165-70867728950e', alg: 'ES256', iss: 'https://idp', client: 'c', signer: 'arn', exp: 1 })))}.${padded(Buffer.from(JSON.stringify({ sub: 'abc', email: 'user@example.com', exp: 1, iss: 'https://idp' })))}.${padded(Buffer.alloc(64, 7))}`;
function cpu(f, n = 300000) {
  for (let i = 0; i < 20000; i++) f();
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) f();
  const u = process.cpuUsage(t);
  return ((u.user + u.system) * 1000) / n;
}
const header = { alg: 'ES256', kid: 'k1' },
  payload = { iss: 'x' };
const rows = [];
for (let round = 0; round < 7; round++) {
  for (const [name, dist] of [
    ['base', base],
    ['after', after],
  ]) {
    const ks = require(`${dist}/keys/key-set.js`),
      jw = require(`${dist}/keys/jwks.js`),
      jws = require(`${dist}/jose/jws.js`);
    const read = ks.readJwk ?? jw.readJwk;
    const set = ks.indexKeys(jwks.map(read), 0);
    const choose = ks.keyFromSet ? () => ks.keyFromSet(set, header, payload) : () => ks.select(set, header);
    rows.push(
      [name, 'jwks key choice', cpu(choose)],
      [name, 'ALB padded decode', cpu(() => jws.decodePaddedJws(alb), 100000)],
    );
  }
}
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
for (const what of ['jwks key choice', 'ALB padded decode'])
  for (const name of ['base', 'after'])
    console.log(
      `${what} ${name}: ${med(rows.filter((r) => r[0] === name && r[1] === what).map((r) => r[2])).toFixed(1)} ns/call (median of 7)`,
    );
