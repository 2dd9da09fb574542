'use strict';
// How long a genuinely rotated kid waits behind a flood of forged ones under the AWS ALB preset (issue 36, point 6):
// forged x-amzn-oidc-data with made-up UUID kids (the right signer, client and issuer) spend the preset's budget of
// new kids (4 per 30 s cooldown). A loopback key server serves the ALB's format (GET /<kid> → PEM, 403 for a kid it
// does not know); assertions are ES256 with padded segments, as the ALB writes them. Time is the `clock` option, moved
// in fixed steps (so the figures are the same on any machine): `rate` forged kids a second, evenly spaced from the
// start (each window's slots go within its first 200 ms), and an assertion under the rotated kid every 500 ms from
// 250 ms on, for `seconds`. Each verification is awaited, key fetches included, before the clock moves on.
// Prints, per dist, the simulated seconds the rotated kid waited (from its first ask to the first 200), how many of
// its asks were refused 503, and how many requests reached the key server. `repeat` (default 1: one-off kids) asks
// each forged kid that many times in a row before the next: a flood that keeps asking its own kids too; `cycle:K`
// asks K forged kids in turn, replacing each the moment it is answered 401 (fetched, and refused by the key server):
// a flood that out-asks the rotated kid once K kids share fewer than `rate` / 2 asks a second each.
//   npm run build && node bench/alb-rotation.js <dist> [baseline dist|-] [rate/s, default 20] [seconds, default 36] [repeat]
const http = require('node:http');
const path = require('node:path');
const { createSign, generateKeyPairSync, randomUUID } = require('node:crypto');

const [distArg, baseArg, rateArg = '20', secondsArg = '36', repeatArg = '1'] = process.argv.slice(2);
if (distArg === undefined) throw new Error('usage: node bench/alb-rotation.js <dist> [baseline dist] [rate] [seconds]');
const RATE = Number(rateArg);
const SECONDS = Number(secondsArg);
const CYCLE = repeatArg.startsWith('cycle:') ? Number(repeatArg.slice('cycle:'.length)) : 0;
const REPEAT = CYCLE > 0 ? 1 : Number(repeatArg);
const ARN = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/my-alb/50dc6c495c0c9188';
const ISSUER = 'https://idp.example.com';
const CLIENT = 'orders';

const padded = (bytes) => {
  const text = bytes.toString('base64url');
  return text + '='.repeat((4 - (text.length % 4)) % 4);
};

/** An ALB-shaped assertion: padded segments, ES256 (R ‖ S) over them as sent. */
function assertion(kid, privateKey, exp, username) {
  const header = { typ: 'JWT', kid, alg: 'ES256', iss: ISSUER, client: CLIENT, signer: ARN, exp };
  const payload = { sub: '6f7c2a3e-8d1b', email: 'user@example.com', username, exp, iss: ISSUER };
  const input = `${padded(Buffer.from(JSON.stringify(header)))}.${padded(Buffer.from(JSON.stringify(payload)))}`;
  const signature = createSign('sha256').update(input).sign({ key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${padded(signature)}`;
}

async function keyServer(rotatedKid, publicPem) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    // One connection per fetch: minutes of simulated time may pass in seconds, or the reverse, between two fetches,
    // and an idle keep-alive socket closed by the server mid-reuse would read as a key server outage.
    res.setHeader('Connection', 'close');
    if (req.url === `/${rotatedKid}`) res.writeHead(200, { 'Content-Type': 'text/plain' }).end(publicPem);
    else res.writeHead(403, { 'Content-Type': 'text/plain' }).end('Forbidden');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${server.address().port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function run(dist) {
  const { createTokenAuth } = require(path.join(dist, 'index.js'));
  const { awsAlb } = require(path.join(dist, 'edge.js'));
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rotated = randomUUID();
  const server = await keyServer(rotated, pair.publicKey.export({ type: 'spki', format: 'pem' }));
  const start = Math.floor(Date.now() / 1000);
  let now = start;
  const auth = createTokenAuth({
    ...awsAlb({ signer: ARN, clientId: CLIENT, issuer: ISSUER, keysBaseURL: server.origin }),
    clock: () => now,
  });
  const exp = start + SECONDS + 120;
  const steps = Math.round(SECONDS * RATE);
  let nextAsk = 0.25;
  let accepted;
  let refused = 0;
  let forged = '';
  const cycled = Array.from({ length: CYCLE }, () => randomUUID());
  const outcomes = {};
  for (let step = 0; step < steps && accepted === undefined; step++) {
    const t = step / RATE;
    now = start + t;
    if (CYCLE > 0) forged = cycled[step % CYCLE];
    else if (step % REPEAT === 0) forged = randomUUID();
    await auth.verify(assertion(forged, pair.privateKey, exp, 'forged')).catch((err) => {
      if (CYCLE > 0 && err.reason === 'kid-unknown') cycled[step % CYCLE] = randomUUID();
    });
    if (t >= nextAsk) {
      nextAsk += 0.5;
      try {
        await auth.verify(assertion(rotated, pair.privateKey, exp, `user-${step}`));
        accepted = t;
      } catch (err) {
        refused++;
        outcomes[err.reason] = (outcomes[err.reason] ?? 0) + 1;
      }
    }
  }
  auth.close();
  await server.close();
  return {
    waited: accepted === undefined ? `never within ${SECONDS} s` : `${(accepted - 0.25).toFixed(2)} s`,
    refused: `${refused} (${
      Object.entries(outcomes)
        .map(([r, n]) => `${r} ${n}`)
        .join(', ') || 'none'
    })`,
    keyServerRequests: server.requests(),
  };
}

async function main() {
  const rows = [['after', path.resolve(distArg)]];
  if (baseArg !== undefined && baseArg !== '-') rows.unshift(['before', path.resolve(baseArg)]);
  const each =
    CYCLE > 0
      ? `${CYCLE} kids asked in turn, each replaced once refused 401`
      : REPEAT === 1
        ? 'each asked once'
        : `each asked ${REPEAT} times in a row`;
  console.log(`flood: ${RATE} forged asks/s (${each}) for ${SECONDS} s, simulated clock; rotated kid every 500 ms`);
  console.log('| build | rotated kid waited | its asks refused | requests to the key server |');
  console.log('| --- | --- | --- | --- |');
  for (const [name, dist] of rows) {
    const result = await run(dist);
    console.log(`| ${name} (${dist}) | ${result.waited} | ${result.refused} | ${result.keyServerRequests} |`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
