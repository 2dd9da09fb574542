/**
 * Hostile input, part 2: claims an attacker (or a careless issuer) puts in a token that is otherwise genuine —
 * HMAC-signed with the app's real secret, so that the claim checks alone must refuse it (RFC 8725 §3.8–3.9, §3.11;
 * RFC 7519 §4.1; Shape B as docs/verify-endpoint.md defines it). Every token here is built from exact JSON text so
 * that values JSON.stringify would never write (1e309, duplicate members, a BOM) can be sent.
 */
import { createHmac } from 'node:crypto';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import {
  answerOf,
  expectRefused,
  getMe,
  HS256_OPTIONS,
  protectedApp,
  rawToken,
  refusal,
  type ProtectedApp,
} from './harness';

const HEADER = JSON.stringify({ alg: 'HS256', typ: 'JWT' });
const bearer = (token: string) => `Bearer ${token}`;

/** Shape B JSON text with one member replaced by raw JSON text (or removed, when `raw` is undefined). */
function payloadWith(name: string, raw: string | undefined, base: Record<string, unknown> = shapeB(NOW)): string {
  const rest = { ...base };
  delete rest[name];
  const body = JSON.stringify(rest);
  return raw === undefined ? body : `${body.slice(0, -1)},${JSON.stringify(name)}:${raw}}`;
}

/** A genuinely signed token with one claim replaced by raw JSON text. */
const tokenWith = (name: string, raw: string | undefined, base?: Record<string, unknown>) =>
  rawToken(HEADER, payloadWith(name, raw, base));

/** Shape B as claims: 'jwt' takes it: a string sub (that mode refuses Shape B's null one, RFC 7519 §4.1.2). */
const forJwtMode = (overrides: Record<string, unknown> = {}) => shapeB(NOW, { sub: 'user-1', ...overrides });

describe.each(EXPRESS_VERSIONS)('hostile claims through %s', (_name, express) => {
  let app: ProtectedApp;
  let jwtMode: ProtectedApp;
  beforeAll(async () => {
    app = await protectedApp(express);
    jwtMode = await protectedApp(express, { ...HS256_OPTIONS, claims: 'jwt' });
  });
  afterAll(() => Promise.all([app.close(), jwtMode.close()]));

  it('accepts the raw-built genuine token (control: the builder itself is sound)', async () => {
    const res = await getMe(app.server, bearer(tokenWith('exp', String(NOW + 600))));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ exp: NOW + 600 });
  });

  describe('time claims (RFC 7519 §4.1.4–4.1.6; clock fixed at NOW, tolerance 5 s)', () => {
    it.each([
      ['exp missing', 'exp', undefined],
      ['exp a string of digits', 'exp', JSON.stringify(String(NOW + 600))],
      ['exp a non-integer number', 'exp', String(NOW + 600.5)],
      ['exp 1e309 (parses to Infinity)', 'exp', '1e309'],
      ['exp -1e309 (parses to -Infinity)', 'exp', '-1e309'],
      ['exp null', 'exp', 'null'],
      ['exp true', 'exp', 'true'],
      ['exp an array', 'exp', `[${NOW + 600}]`],
      ['exp an object', 'exp', `{"$gt":0}`],
      ['iat missing (required in strict mode)', 'iat', undefined],
      ['iat a string', 'iat', JSON.stringify(String(NOW))],
      ['iat 1e309', 'iat', '1e309'],
      ['iat a non-integer number (strict mode wants an integer)', 'iat', String(NOW + 0.5)],
      ['iat far in the future (year 2286)', 'iat', '9999999999'],
      ['iat just beyond the tolerance ahead', 'iat', String(NOW + 6)],
      ['nbf ahead of now beyond the tolerance', 'nbf', String(NOW + 6)],
      ['nbf far in the future', 'nbf', '9999999999'],
      ['nbf a string', 'nbf', JSON.stringify(String(NOW - 10))],
      ['nbf 1e309', 'nbf', '1e309'],
      ['nbf null', 'nbf', 'null'],
    ])('refuses %s', async (_case, name, raw) => {
      await expectRefused(app.server, bearer(tokenWith(name, raw)), 'invalid');
    });

    it.each([
      ['exp equal to now minus the tolerance', NOW - 5],
      ['exp one second beyond the tolerance', NOW - 6],
      ['exp long past (1970)', 1],
      ['exp 0', 0],
      ['exp negative', -1],
      ['exp hugely negative', -9007199254740991],
    ])('answers token_expired for %s', async (_case, exp) => {
      await expectRefused(app.server, bearer(tokenWith('exp', String(exp), shapeB(-1e6))), 'expired');
    });

    it('draws the exp line exactly at the tolerance: now - 4 passes, now - 5 is expired', async () => {
      expect((await getMe(app.server, bearer(tokenWith('exp', String(NOW - 4), shapeB(NOW - 100))))).status).toBe(200);
      await expectRefused(app.server, bearer(tokenWith('exp', String(NOW - 5), shapeB(NOW - 100))), 'expired');
    });

    it('answers token_expired for exp equal to now when the tolerance is zero', async () => {
      const strict = await protectedApp(express, { ...HS256_OPTIONS, clockTolerance: 0 });
      try {
        await expectRefused(strict.server, bearer(tokenWith('exp', String(NOW), shapeB(NOW - 100))), 'expired');
        expect((await getMe(strict.server, bearer(tokenWith('exp', String(NOW + 1), shapeB(NOW - 100))))).status).toBe(
          200,
        );
      } finally {
        await strict.close();
      }
    });

    it('answers token_expired for a token older than maxTokenAge, and invalid_token beyond maxLifetime', async () => {
      const capped = await protectedApp(express, { ...HS256_OPTIONS, maxTokenAge: '1d', maxLifetime: '90d' });
      try {
        await expectRefused(capped.server, bearer(sign(shapeB(NOW - 2 * 86400, { exp: NOW + 600 }))), 'expired');
        await expectRefused(capped.server, bearer(sign(shapeB(NOW, { exp: NOW + 91 * 86400 }))), 'invalid');
        await expectRefused(capped.server, bearer(tokenWith('iat', undefined)), 'invalid');
      } finally {
        await capped.close();
      }
    });

    it('checks time against the injected clock, not the wall clock, and on every cached use', async () => {
      let now = NOW;
      const moving = await protectedApp(express, { ...HS256_OPTIONS, clock: () => now });
      try {
        const token = sign(shapeB(NOW));
        expect((await getMe(moving.server, bearer(token))).status).toBe(200);
        expect((await getMe(moving.server, bearer(token))).status).toBe(200); // second sighting: now cached
        now = NOW + 605; // exp (NOW + 600) plus the tolerance: the cached success must not outlive it
        await expectRefused(moving.server, bearer(token), 'expired');
      } finally {
        await moving.close();
      }
    });

    it('in jwt mode still requires exp and checks iat when present', async () => {
      await expectRefused(jwtMode.server, bearer(tokenWith('exp', undefined, forJwtMode())), 'invalid');
      await expectRefused(jwtMode.server, bearer(tokenWith('iat', '1e309', forJwtMode())), 'invalid');
      await expectRefused(jwtMode.server, bearer(tokenWith('iat', String(NOW + 3600), forJwtMode())), 'invalid');
    });
  });

  describe('issuer and audience (RFC 8725 §3.8–3.9)', () => {
    it.each([
      ['iss in upper case', JSON.stringify(ISSUER.toUpperCase())],
      ['iss with a trailing dot', JSON.stringify(`${ISSUER}.`)],
      ['iss with surrounding space', JSON.stringify(` ${ISSUER}`)],
      ['iss with a trailing NUL', JSON.stringify(`${ISSUER}\u0000`)],
      ['iss as a URL of the issuer', JSON.stringify(`https://${ISSUER}`)],
      ['iss as an array holding the issuer', JSON.stringify([ISSUER])],
      ['iss empty', '""'],
      ['iss null', 'null'],
      ['iss missing', undefined],
      ['iss an object', JSON.stringify({ toString: ISSUER })],
      ['iss a homoglyph (Cyrillic a)', JSON.stringify(ISSUER.replace('a', '\u0430'))],
    ])('refuses %s', async (_case, raw) => {
      await expectRefused(app.server, bearer(tokenWith('iss', raw)), 'invalid');
    });

    it.each([
      ['aud in upper case', JSON.stringify(AUDIENCE.toUpperCase())],
      ['aud as a prefix', JSON.stringify(AUDIENCE.slice(0, -1))],
      ['aud with the audience as a suffix', JSON.stringify(`evil.${AUDIENCE}`)],
      ['aud an empty array', '[]'],
      ['aud an array of an empty string', '[""]'],
      ['aud an array of other audiences', '["other.example.com","another"]'],
      ['aud an array nesting the audience', JSON.stringify([[AUDIENCE]])],
      ['aud empty', '""'],
      ['aud null', 'null'],
      ['aud missing', undefined],
      ['aud an object keyed by the audience', JSON.stringify({ [AUDIENCE]: true })],
      ['aud an array-like object', JSON.stringify({ 0: AUDIENCE, length: 1 })],
      ['aud the audience next to a number (not Shape B)', JSON.stringify([AUDIENCE, 5])],
    ])('refuses %s', async (_case, raw) => {
      await expectRefused(app.server, bearer(tokenWith('aud', raw)), 'invalid');
    });

    it('refuses a token for another audience even when the issuer check is off, and the reverse', async () => {
      const noIssuer = await protectedApp(express, { ...HS256_OPTIONS, issuer: false });
      const noAudience = await protectedApp(express, { ...HS256_OPTIONS, audience: false });
      try {
        await expectRefused(noIssuer.server, bearer(tokenWith('aud', '"other"')), 'invalid');
        await expectRefused(noAudience.server, bearer(tokenWith('iss', '"other"')), 'invalid');
      } finally {
        await Promise.all([noIssuer.close(), noAudience.close()]);
      }
    });
  });

  describe('scopes that are not an array of strings', () => {
    it.each([
      ['a space-separated string', '"identify email"'],
      ['an array holding a number', '[1]'],
      ['an array holding null', '[null]'],
      ['an array holding an array', '[["identify"]]'],
      ['an array holding an object', '[{"identify":true}]'],
      ['an array-like object', '{"0":"identify","length":1}'],
      ['true', 'true'],
      ['null', 'null'],
      ['missing', undefined],
    ])('refuses scopes as %s in strict mode (invalid_token: not Shape B)', async (_case, raw) => {
      await expectRefused(app.server, bearer(tokenWith('scopes', raw)), 'invalid');
    });

    // docs/options.md (scopeClaim): any scope claim may be a space-separated string or an array of strings; anything
    // else grants nothing.
    it.each([
      ['an array holding a number', '[1]'],
      ['an array-like object', '{"0":"identify","length":1}'],
      ['an array nesting the scope', '[["identify"]]'],
    ])('in jwt mode grants nothing for scopes as %s (403 insufficient_scope, never 200)', async (_case, raw) => {
      const res = await getMe(jwtMode.server, bearer(tokenWith('scopes', raw, forJwtMode())));
      expect(answerOf(res)).toEqual({
        status: 403,
        body: { status: 'error', message: 'Insufficient scope' },
        challenge: 'Bearer realm="api", error="insufficient_scope", scope="identify"',
        json: true,
      });
    });

    it('in jwt mode reads scopes as a string and scope as an array (Spring), as docs/options.md says', async () => {
      expect((await getMe(jwtMode.server, bearer(tokenWith('scopes', '"identify email"', forJwtMode())))).status).toBe(
        200,
      );
      const spring = tokenWith('scope', '["identify"]', forJwtMode({ scopes: undefined }));
      expect((await getMe(jwtMode.server, bearer(spring))).status).toBe(200);
    });

    it('in jwt mode splits a scope string on spaces only, and compares case-sensitively', async () => {
      for (const scope of ['"identify,email"', '"identify\\temail"', '"IDENTIFY"']) {
        const res = await getMe(jwtMode.server, bearer(tokenWith('scope', scope, forJwtMode({ scopes: undefined }))));
        expect(res.status).toBe(403);
      }
    });
  });

  describe('header or payload that is not a JSON object', () => {
    const payload = JSON.stringify(shapeB(NOW));
    const notObjects: Array<[string, (json: string) => string]> = [
      ['an array', (json) => `[${json}]`],
      ['an empty array', () => '[]'],
      ['a number', () => '42'],
      ['null', () => 'null'],
      ['true', () => 'true'],
      ['a JSON string holding the object (double-encoded)', (json) => JSON.stringify(json)],
      ['the object after a UTF-8 BOM', (json) => `\uFEFF${json}`],
      ['the object followed by trailing garbage', (json) => `${json}x`],
      ['two objects', (json) => `${json}${json}`],
      ['the object with a trailing comma', (json) => `${json.slice(0, -1)},}`],
      ['the object with single quotes', (json) => json.replace(/"/g, "'")],
      ['empty text', () => ''],
      ['whitespace only', () => ' \r\n\t'],
      ['replacement characters (what invalid UTF-8 decodes to)', () => '\uFFFD\uFFFD'],
    ];

    it.each(notObjects)('refuses a payload that is %s, genuinely signed', async (_case, mangle) => {
      await expectRefused(app.server, bearer(rawToken(HEADER, mangle(payload))), 'invalid');
      await expectRefused(jwtMode.server, bearer(rawToken(HEADER, mangle(payload))), 'invalid');
    });

    it.each(notObjects)('refuses a header that is %s, genuinely signed', async (_case, mangle) => {
      await expectRefused(app.server, bearer(rawToken(mangle(HEADER), payload)), 'invalid');
    });

    it('judges raw invalid UTF-8 inside a string of a genuine token once, without crashing', async () => {
      const bytes = Buffer.concat([
        Buffer.from(`${payload.slice(0, -1)},"x":"`),
        Buffer.from([0xc3, 0x28, 0xff]),
        Buffer.from('"}'),
      ]);
      const input = `${Buffer.from(HEADER).toString('base64url')}.${bytes.toString('base64url')}`;
      const token = `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
      // The bytes decode to U+FFFD: still a JSON object under a valid signature that only the issuer could make.
      const res = await getMe(app.server, bearer(token));
      expect(res.status).toBe(200);
      expect(res.body.x).toBe('\uFFFD(\uFFFD');
    });

    it('accepts leading and trailing JSON whitespace in a genuine token (RFC 8259 allows it)', async () => {
      expect((await getMe(app.server, bearer(rawToken(` ${HEADER}\n`, `\r\n${payload} `)))).status).toBe(200);
    });
  });

  describe('duplicate JSON member names (RFC 7515 §4: lexically last wins, as ECMAScript JSON.parse does)', () => {
    // Policy: the header and the payload are each parsed once, by JSON.parse, and the signature covers their
    // exact bytes; the member that decides (the last) is the one every check sees, so no parser differential
    // exists inside this package. Refusing duplicates would need a second, slower parser on the hot path.
    const body = JSON.stringify(shapeB(NOW));
    const withMember = (json: string, member: string, first = false) =>
      first ? `{${member},${json.slice(1)}` : `${json.slice(0, -1)},${member}}`;

    it('refuses {"alg":"HS256","alg":"none"}: the last alg is the one checked', async () => {
      await expectRefused(app.server, bearer(rawToken('{"alg":"HS256","alg":"none"}', body)), 'invalid');
    });

    it('accepts {"alg":"none","alg":"HS256"} genuinely signed: the last alg is the one the signature was checked under', async () => {
      expect((await getMe(app.server, bearer(rawToken('{"alg":"none","alg":"HS256"}', body)))).status).toBe(200);
    });

    it('refuses a later expired exp that shadows a valid one', async () => {
      await expectRefused(app.server, bearer(rawToken(HEADER, withMember(body, `"exp":${NOW - 3600}`))), 'expired');
    });

    it('refuses a later wrong aud or iss that shadows the right one', async () => {
      await expectRefused(app.server, bearer(rawToken(HEADER, withMember(body, '"aud":"other"'))), 'invalid');
      await expectRefused(app.server, bearer(rawToken(HEADER, withMember(body, '"iss":"other"'))), 'invalid');
    });

    it('answers 403 for a later empty scopes list that shadows the full one', async () => {
      const res = await getMe(app.server, bearer(rawToken(HEADER, withMember(body, '"scopes":[]'))));
      expect(res.status).toBe(403);
    });

    it('puts exactly the last members on req.auth (what was checked is what the app sees)', async () => {
      const res = await getMe(
        app.server,
        bearer(rawToken(HEADER, withMember(body, '"sub":"first"', true).replace('"sub":null', '"sub":"last"'))),
      );
      expect(res.status).toBe(200);
      expect(res.body.sub).toBe('last');
    });

    it('refuses a later non-string kid that shadows a string one', async () => {
      await expectRefused(app.server, bearer(rawToken('{"alg":"HS256","kid":"a","kid":1}', body)), 'invalid');
    });
  });

  describe('prototype-shaped member names', () => {
    it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'])(
      'accepts a linked provider named %s like any unknown provider (no 500, no prototype lookup)',
      async (provider) => {
        const providers = `{${JSON.stringify(provider)}:{"id":"1","name":"x"}}`;
        const res = await getMe(app.server, bearer(tokenWith('providers', providers)));
        expect(res.status).toBe(200);
      },
    );

    it.each(['constructor', '__proto__', 'toString'])(
      'refuses a provider named %s whose id is missing (same rule as any provider)',
      async (provider) => {
        const providers = `{${JSON.stringify(provider)}:{"name":"x"}}`;
        await expectRefused(app.server, bearer(tokenWith('providers', providers)), 'invalid');
      },
    );

    it('does not let a "__proto__" member grant scopes or pollute Object.prototype', async () => {
      const scoped = await protectedApp(express, HS256_OPTIONS, ['admin']);
      try {
        const payload = payloadWith(
          '__proto__',
          '{"scopes":["admin"],"admin":true}',
          shapeB(NOW, { scopes: ['identify'] }),
        );
        const res = await getMe(scoped.server, bearer(rawToken(HEADER, payload)));
        expect(res.status).toBe(403);
        expect(({} as Record<string, unknown>).admin).toBeUndefined();
        expect(({} as Record<string, unknown>).scopes).toBeUndefined();
      } finally {
        await scoped.close();
      }
    });

    it('does not let "__proto__" in the header supply alg', async () => {
      await expectRefused(
        app.server,
        bearer(rawToken('{"__proto__":{"alg":"HS256"}}', JSON.stringify(shapeB(NOW)))),
        'invalid',
      );
    });

    it('refuses metadata whose fields hide under __proto__', async () => {
      await expectRefused(
        app.server,
        bearer(tokenWith('metadata', '{"__proto__":{"createdAt":"2024-01-01T00:00:00Z","authorizer":"x"}}')),
        'invalid',
      );
    });
  });

  describe('Shape B structure (docs/verify-endpoint.md)', () => {
    it.each([
      ['jti empty', 'jti', '""'],
      ['jti a number', 'jti', '1'],
      ['providers an array', 'providers', '[]'],
      ['providers null', 'providers', 'null'],
      ['a provider id empty', 'providers', '{"google":{"id":"","email":"a","name":"b","picture":"c"}}'],
      ['a provider field a number', 'providers', '{"roblox":{"id":"1","username":5}}'],
      ['a known provider missing a field', 'providers', '{"google":{"id":"1"}}'],
      ['a null avatar outside discord', 'providers', '{"roblox":{"id":"1","username":null}}'],
      ['metadata.createdAt not ISO 8601 UTC', 'metadata', '{"createdAt":"2024-01-01 00:00:00","authorizer":"x"}'],
      ['metadata.createdAt an impossible date', 'metadata', '{"createdAt":"2024-02-31T00:00:00Z","authorizer":"x"}'],
      [
        'metadata.createdAt on Feb 29 of a common year',
        'metadata',
        '{"createdAt":"2023-02-29T00:00:00Z","authorizer":"x"}',
      ],
      [
        'metadata.createdAt on Feb 29 of a century that is not a leap year',
        'metadata',
        '{"createdAt":"2100-02-29T00:00:00Z","authorizer":"x"}',
      ],
      ['metadata.createdAt on April 31', 'metadata', '{"createdAt":"2024-04-31T00:00:00Z","authorizer":"x"}'],
      ['metadata.createdAt with an offset', 'metadata', '{"createdAt":"2024-01-01T00:00:00+01:00","authorizer":"x"}'],
      ['metadata.authorizer missing', 'metadata', '{"createdAt":"2024-01-01T00:00:00Z"}'],
      ['sub a number', 'sub', '5'],
      ['sub an object', 'sub', '{}'],
    ])('refuses %s', async (_case, name, raw) => {
      await expectRefused(app.server, bearer(tokenWith(name, raw)), 'invalid');
    });
  });

  it('answers every claim refusal identically, never naming the claim', async () => {
    const answers = await Promise.all([
      getMe(app.server, bearer(tokenWith('aud', '"other"'))),
      getMe(app.server, bearer(tokenWith('scopes', '"x"'))),
      getMe(app.server, bearer(tokenWith('nbf', String(NOW + 3600)))),
    ]);
    for (const res of answers) expect(answerOf(res)).toEqual(refusal('invalid'));
  });
});
