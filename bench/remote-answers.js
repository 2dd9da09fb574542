'use strict';
/**
 * How remote answers count (issue 27, points 3–7; docs/fleet.md "The circuit breaker", docs/introspection.md),
 * measured against the lib/ of a checkout, so that one command gives before and after. Real servers on loopback:
 * oidc-provider 9 (__tests__/fixtures/authorization-server.ts) behind a proxy that answers for chosen tokens, a second
 * server that signs answers for the token's audience, and an upstream identity service.
 *
 * 1. Answers about one token: five tokens answered a body of the wrong shape, a 400 or a 413 (introspection and
 *    upstream mode), then 20 other users' new tokens: how many of the 20 are refused 503. Parts 1–3, 6 and 7 run
 *    against a provider without signed answers (plain JSON); 4 and 5 against one with them (jwtIntrospection on).
 * 2. Bursts: five such tokens every 2 s while 80 users arrive one per 200 ms (16 s, wall clock): users refused, with
 *    and without the bursts.
 * 3. A 503 with Retry-After: 120 from the introspection endpoint, five times: the Retry-After the next token is told.
 * 4. A signed answer one year old (no exp); a signed answer for token A played back when token B is asked.
 * 5. A client the provider answers plain JSON (not registered for signed answers); a server that signs its answers
 *    with aud = the token's audience.
 * 6. An answer whose token_type is refresh_token.
 * 7. A 429 with Retry-After: 120, then 7 new tokens (upstream mode, introspection): how many reach the server.
 *
 *   node bench/remote-answers.js [ROOT] [--parts 1,2,3,4,5,6,7]
 *
 * ROOT (default: this checkout) holds `lib/` and `scripts/ts-register.js`; for "before", extract an earlier commit
 * there: `mkdir -p bench/.tmp/before && git archive <commit> lib scripts | tar -x -C bench/.tmp/before`. The
 * servers always come from this checkout's __tests__/fixtures.
 */
const path = require('node:path');
const { randomBytes } = require('node:crypto');

const args = process.argv.slice(2);
const partsAt = args.indexOf('--parts');
const parts = new Set(partsAt >= 0 ? args[partsAt + 1].split(',') : ['1', '2', '3', '4', '5', '6', '7']);
const root = path.resolve(
  args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--parts') ?? path.join(__dirname, '..'),
);
require(path.join(root, 'scripts/ts-register'));
const { createTokenAuth } = require(path.join(root, 'lib'));
const fixtures = path.join(__dirname, '../__tests__/fixtures');
require(path.join(__dirname, '../scripts/ts-register'));
const { startAuthorizationServer } = require(path.join(fixtures, 'authorization-server'));
const { forwardIntrospection } = require(path.join(fixtures, 'introspection-proxy'));
const { startLoopbackServer, json } = require(path.join(fixtures, 'loopback-server'));
const { createIdentityService } = require(path.join(fixtures, 'identity-service'));
const { startSigningAuthorizationServer } = require(path.join(fixtures, 'signing-authorization-server'));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const outcome = (promise) =>
  promise.then(
    () => 200,
    (err) => `${err.status} ${err.reason}`,
  );
const out = (line) => console.log(JSON.stringify(line));

/**
 * The provider behind a proxy that answers `bad(answer)` for chosen tokens and counts the calls that reach it;
 * `signed: false` for a provider that offers no signed answers (plain JSON for every lib/ before and after).
 */
async function introspectionRig(signed = false) {
  const as = await startAuthorizationServer({ introspection: { signed } });
  const rig = { as, chosen: new Set(), bad: (a) => a, reached: 0, retryAfter: undefined, replay: undefined };
  rig.proxy = await startLoopbackServer((req, res) => {
    if (rig.retryAfter !== undefined) res.setHeader('Retry-After', rig.retryAfter);
    forwardIntrospection(req, res, `${as.issuer}/token/introspection`, (answer, form) => {
      if (rig.replay !== undefined) return rig.replay(answer, form);
      if (rig.chosen.has(form.get('token'))) return rig.bad(answer);
      rig.reached++;
      return answer;
    });
  });
  rig.auth = (clientId = 'rs-plain', extra = {}) =>
    createTokenAuth({
      issuerBaseURL: as.issuer,
      audience: as.resource,
      introspection: {
        clientId,
        clientSecret: as.resourceServerSecret,
        endpoint: `${rig.proxy.origin}/token/introspection`,
      },
      ...extra,
    });
  rig.badTokens = (n) =>
    Array.from({ length: n }, () => {
      const token = `made-up-${randomBytes(12).toString('hex')}`;
      rig.chosen.add(token);
      return token;
    });
  rig.close = () => Promise.all([as.close(), rig.proxy.close()]);
  return rig;
}

/** An upstream identity service answering `bad(res)` for chosen tokens. */
async function upstreamRig() {
  const service = createIdentityService();
  const rig = { chosen: new Set(), bad: () => undefined, service };
  rig.server = await startLoopbackServer((req, res) => {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (rig.chosen.has(token)) rig.bad(res);
    else service.verify(req, res);
  });
  rig.auth = () =>
    createTokenAuth({ key: { upstream: rig.server.origin }, issuer: 'auth.example.com', audience: 'api.example.com' });
  rig.close = () => rig.server.close();
  return rig;
}

async function refusedOf(auth, tokens) {
  let refused = 0;
  for (const token of tokens) if ((await outcome(auth.verify(token))) !== 200) refused++;
  return refused;
}

const SHAPES = {
  'a body of the wrong shape': {
    introspection: () => ({ status: 200, type: 'application/json', body: '{"valid":true}' }),
    upstream: (res) => json(res, 200, { user: 'someone' }),
  },
  'a 400': {
    introspection: () => ({ status: 400, type: 'application/json', body: '{"error":"invalid_request"}' }),
    upstream: (res) => json(res, 400, { status: 'error', message: 'Bad request' }),
  },
  'a 413': {
    introspection: () => ({ status: 413, type: 'text/plain', body: 'too large' }),
    upstream: (res) => json(res, 413, { status: 'error', message: 'Too large' }),
  },
};

async function answersAboutOneToken() {
  const intro = await introspectionRig();
  const up = await upstreamRig();
  try {
    for (const [shape, answer] of Object.entries(SHAPES)) {
      intro.bad = answer.introspection;
      const auth = intro.auth();
      const bad = await Promise.all(intro.badTokens(5).map((t) => outcome(auth.verify(t))));
      const users = await Promise.all(Array.from({ length: 20 }, () => intro.as.token()));
      out({
        part: 1,
        mode: 'introspection',
        answered: shape,
        badTokens: bad,
        usersRefused: `${await refusedOf(auth, users)}/20`,
      });
      auth.close();

      up.bad = answer.upstream;
      const upAuth = up.auth();
      const upBad = [];
      for (let i = 0; i < 5; i++) {
        const token = `bad-${randomBytes(8).toString('hex')}`;
        up.chosen.add(token);
        upBad.push(await outcome(upAuth.verify(token)));
      }
      const upUsers = Array.from({ length: 20 }, () => up.service.issue());
      out({
        part: 1,
        mode: 'upstream',
        answered: shape,
        badTokens: upBad,
        usersRefused: `${await refusedOf(upAuth, upUsers)}/20`,
      });
      upAuth.close();
    }
  } finally {
    await Promise.all([intro.close(), up.close()]);
  }
}

async function bursts() {
  const intro = await introspectionRig();
  intro.bad = SHAPES['a body of the wrong shape'].introspection;
  try {
    for (const withBursts of [false, true]) {
      const auth = intro.auth();
      const users = await Promise.all(Array.from({ length: 80 }, () => intro.as.token()));
      const started = Date.now();
      let nextBurst = 0;
      let refused = 0;
      const pending = [];
      for (const user of users) {
        if (withBursts && Date.now() - started >= nextBurst) {
          await Promise.all(intro.badTokens(5).map((token) => outcome(auth.verify(token))));
          nextBurst += 2000;
        }
        pending.push(outcome(auth.verify(user)).then((o) => o !== 200 && refused++));
        await sleep(200);
      }
      await Promise.all(pending);
      out({ part: 2, bursts: withBursts ? 'five bad tokens every 2 s' : 'none', usersRefused: `${refused}/80` });
      auth.close();
    }
  } finally {
    await intro.close();
  }
}

async function retryAfterOpens() {
  const intro = await introspectionRig();
  try {
    intro.bad = () => ({ status: 503, type: 'text/plain', body: 'maintenance' });
    intro.retryAfter = '120';
    const auth = intro.auth();
    const told = [];
    for (const token of intro.badTokens(7)) {
      told.push(await auth.verify(token).catch((err) => `${err.reason} Retry-After ${err.headers['Retry-After']}`));
    }
    out({ part: 3, introspectionAnswers503RetryAfter120: told });
    auth.close();
  } finally {
    await intro.close();
  }
}

async function freshAndOnce() {
  const second = await startSigningAuthorizationServer();
  const intro = await introspectionRig(true);
  try {
    second.answer = (claims) => ({ ...claims, iat: claims.iat - 365 * 86_400 });
    const auth = createTokenAuth({
      issuerBaseURL: second.issuer,
      audience: second.audience,
      introspection: { clientId: second.audience, clientSecret: 's' },
    });
    out({ part: 4, signedAnswerIatOneYearBackNoExp: await outcome(auth.verify(second.issue())) });
    auth.close();

    const victim = await intro.as.token({ scope: 'read write' });
    let captured;
    intro.replay = (answer, form) => {
      if (form.get('token') === victim) captured = answer.body;
      else if (captured !== undefined)
        return { status: 200, type: 'application/token-introspection+jwt', body: captured };
      return answer;
    };
    const signed = intro.auth('rs-basic');
    const a = await outcome(signed.verify(victim));
    const b = await signed.verify(`made-up-${randomBytes(8).toString('hex')}`).then(
      (claims) => `200 with the victim's scope "${claims.scope}"`,
      (err) => `${err.status} ${err.reason}`,
    );
    out({ part: 4, tokenA: a, replayedForTokenB: b });
    signed.close();
  } finally {
    await Promise.all([second.close(), intro.close()]);
  }
}

async function plainAndAudience() {
  const second = await startSigningAuthorizationServer();
  const intro = await introspectionRig(true);
  try {
    const plain = intro.auth('rs-plain');
    const tokens = await Promise.all([1, 2, 3].map(() => intro.as.token()));
    out({ part: 5, clientAnsweredPlainJson: await Promise.all(tokens.map((t) => outcome(plain.verify(t)))) });
    plain.close();
    const auth = createTokenAuth({
      issuerBaseURL: second.issuer,
      audience: second.audience,
      introspection: { clientId: 'orders-api', clientSecret: 's' },
    });
    out({
      part: 5,
      answersSignedForTheTokenAudience: await Promise.all([1, 2, 3].map(() => outcome(auth.verify(second.issue())))),
      unknownTokenHttp400: await outcome(auth.verify('made-up')),
    });
    auth.close();
  } finally {
    await Promise.all([second.close(), intro.close()]);
  }
}

async function tokenType() {
  const intro = await introspectionRig();
  try {
    const found = {};
    for (const type of ['refresh_token', 'id_token']) {
      intro.replay = (answer) => ({
        ...answer,
        body: JSON.stringify({ ...JSON.parse(answer.body), token_type: type }),
      });
      const auth = intro.auth('rs-plain');
      found[type] = await outcome(auth.verify(await intro.as.token()));
      auth.close();
    }
    out({ part: 6, answerTokenType: found });
  } finally {
    await intro.close();
  }
}

async function throttle() {
  const up = await upstreamRig();
  const intro = await introspectionRig();
  try {
    const auth = up.auth();
    const cached = up.service.issue();
    await auth.verify(cached);
    const limited = `limited-${randomBytes(8).toString('hex')}`;
    up.chosen.add(limited);
    up.bad = (res) => json(res, 429, { status: 'error', message: 'slow down' }, { 'Retry-After': '120' });
    const first = await auth.verify(limited).catch((err) => `${err.status} Retry-After ${err.headers['Retry-After']}`);
    const before = up.server.requests;
    const told = [];
    for (let i = 0; i < 7; i++)
      told.push(
        await auth.verify(up.service.issue()).then(
          () => 200,
          (err) => err.headers['Retry-After'],
        ),
      );
    out({
      part: 7,
      mode: 'upstream',
      the429: first,
      newTokensReachingIt: `${up.server.requests - before}/7`,
      toldRetryAfter: told,
      cachedUser: await outcome(auth.verify(cached)),
    });
    auth.close();

    const iauth = intro.auth('rs-plain');
    const [icached, ...users] = await Promise.all(Array.from({ length: 8 }, () => intro.as.token()));
    await iauth.verify(icached);
    intro.bad = () => ({ status: 429, type: 'application/json', body: '{"error":"slow_down"}' });
    intro.retryAfter = '120';
    const [ilimited] = intro.badTokens(1);
    const ifirst = await iauth
      .verify(ilimited)
      .catch((err) => `${err.status} Retry-After ${err.headers['Retry-After']}`);
    intro.reached = 0;
    const itold = [];
    for (const user of users)
      itold.push(
        await iauth.verify(user).then(
          () => 200,
          (err) => err.headers['Retry-After'],
        ),
      );
    out({
      part: 7,
      mode: 'introspection',
      the429: ifirst,
      newTokensReachingIt: `${intro.reached}/7`,
      toldRetryAfter: itold,
      cachedUser: await outcome(iauth.verify(icached)),
    });
    iauth.close();
  } finally {
    await Promise.all([up.close(), intro.close()]);
  }
}

async function main() {
  if (parts.has('1')) await answersAboutOneToken();
  if (parts.has('2')) await bursts();
  if (parts.has('3')) await retryAfterOpens();
  if (parts.has('4')) await freshAndOnce();
  if (parts.has('5')) await plainAndAudience();
  if (parts.has('6')) await tokenType();
  if (parts.has('7')) await throttle();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
