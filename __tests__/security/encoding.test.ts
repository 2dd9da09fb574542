/**
 * Hostile input, part 3: the compact serialization and the Authorization header itself (RFC 7515 §3.1, §7.1;
 * RFC 4648 §5; RFC 6750 §2.1; RFC 9110 §5.3, §11.6.2). Malformed tokens are refused as invalid_token, other
 * schemes count as missing (RFC 6750 §3.1), and what Node's HTTP parser refuses first answers 400 or 431.
 */
import { createHmac } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { createTokenAuth } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { b64, NOW, rsaKeys, SECRET, shapeB, sign, ecKeys, ISSUER, AUDIENCE } from '../fixtures/issuer';
import {
  answerOf,
  closeServer,
  expectRefused,
  getMe,
  HS256_OPTIONS,
  listen,
  protectedApp,
  rawRequest,
  refusal,
  withSegment,
  type ProtectedApp,
} from './harness';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const rsa = rsaKeys();
const ec = ecKeys();
const bearer = (token: string) => `Bearer ${token}`;

/** A genuine token whose base64url text holds at least one '-' and one '_' (so that +/ swaps change it). */
function tokenWithUrlSafeCharacters(): string {
  for (let i = 0; ; i++) {
    const token = sign(shapeB(NOW, { jti: `probe-${i}` }));
    if (token.includes('-') && token.includes('_')) return token;
  }
}

/**
 * The same bytes under another base64url spelling: the last character of a segment whose length is not a
 * multiple of 4 carries pad bits that decoders ignore. Flipping one of them changes the text, not the bytes.
 */
function withPadBitsSet(segment: string): string {
  if (segment.length % 4 === 0) throw new Error('a segment of 4n characters has no pad bits');
  const last = ALPHABET.indexOf(segment[segment.length - 1]);
  return segment.slice(0, -1) + ALPHABET[last ^ 1]; // bit 0 is always a pad bit when length % 4 is 2 or 3
}

/**
 * A token of exactly `length` characters, genuinely signed, grown through padding claims. base64url never has
 * 4n+1 characters, so a header parameter shifts the total when the payload alone cannot reach it.
 */
function tokenOfLength(length: number): string {
  const bare = sign(shapeB(NOW, { pad: '' }));
  const estimate = Math.floor(((length - bare.length) * 3) / 4);
  for (let headerPad = 0; headerPad < 4; headerPad++) {
    for (let pad = Math.max(0, estimate - 8); pad < estimate + 8; pad++) {
      const token = sign(shapeB(NOW, { pad: 'x'.repeat(pad) }), SECRET, 'HS256', { x: 'y'.repeat(headerPad) });
      if (token.length === length) return token;
    }
  }
  throw new Error(`no token of ${length} characters`);
}

describe.each(EXPRESS_VERSIONS)('malformed tokens and Authorization headers through %s', (_name, express) => {
  let app: ProtectedApp;
  let rs: ProtectedApp;
  let es: ProtectedApp;
  beforeAll(async () => {
    app = await protectedApp(express);
    rs = await protectedApp(express, {
      key: { publicKey: rsa.publicKey },
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
    });
    es = await protectedApp(express, {
      key: { publicKey: ec.publicKey },
      issuer: ISSUER,
      audience: AUDIENCE,
      clock: () => NOW,
    });
  });
  afterAll(() => Promise.all([app.close(), rs.close(), es.close()]));

  describe('base64url spelling (RFC 7515 §2, RFC 4648 §5)', () => {
    const token = tokenWithUrlSafeCharacters();

    it('accepts the genuine token (control)', async () => {
      expect((await getMe(app.server, bearer(token))).status).toBe(200);
    });

    it.each([
      ['"=" padding on the signature', (t: string) => `${t}=`],
      [
        '"=" padding on the payload',
        (t: string) => {
          const [h, p, s] = t.split('.');
          return `${h}.${p}==.${s}`;
        },
      ],
      [
        '"=" padding on the header',
        (t: string) => {
          const [h, p, s] = t.split('.');
          return `${h}=.${p}.${s}`;
        },
      ],
      ['base64 "+" for "-"', (t: string) => t.replace(/-/g, '+')],
      ['base64 "/" for "_"', (t: string) => t.replace(/_/g, '/')],
      ['a space inside', (t: string) => `${t.slice(0, 20)} ${t.slice(20)}`],
      ['a tab inside', (t: string) => `${t.slice(0, 20)}\t${t.slice(20)}`],
      ['a percent-encoded character', (t: string) => `${t.slice(0, 20)}%2D${t.slice(21)}`],
      ['"*"', (t: string) => `${t.slice(0, -1)}*`],
      ['"~" (b64token, not base64url)', (t: string) => `${t.slice(0, -1)}~`],
      ['"!"', (t: string) => `!${t}`],
      ['a backslash', (t: string) => `${t.slice(0, 10)}\\${t.slice(10)}`],
      ['a quote', (t: string) => `"${t}"`],
      ['a Latin-1 letter (é)', (t: string) => `${t.slice(0, -1)}é`],
      ['a non-breaking space', (t: string) => `${t}\u00a0`],
      ['a 4n+1 character segment (no whole bytes)', (t: string) => `${t}A`],
    ])('refuses %s', async (_case, mangle) => {
      await expectRefused(app.server, bearer(mangle(token)), 'invalid');
    });

    it('refuses an HS256 signature re-spelt with its pad bits set', async () => {
      await expectRefused(app.server, bearer(withSegment(token, 2, withPadBitsSet(token.split('.')[2]))), 'invalid');
    });

    it('refuses an RS256 signature re-spelt with its pad bits set (one signed message, one token text)', async () => {
      const rsToken = sign(shapeB(NOW), rsa.privateKey, 'RS256');
      expect((await getMe(rs.server, bearer(rsToken))).status).toBe(200);
      await expectRefused(rs.server, bearer(withSegment(rsToken, 2, withPadBitsSet(rsToken.split('.')[2]))), 'invalid');
    });

    it('refuses an ES256 signature re-spelt with its pad bits set', async () => {
      const esToken = sign(shapeB(NOW), ec.privateKey, 'ES256');
      await expectRefused(es.server, bearer(withSegment(esToken, 2, withPadBitsSet(esToken.split('.')[2]))), 'invalid');
    });

    it('refuses a header or payload re-spelt with pad bits set, even when the signature covers that spelling', async () => {
      const base = sign(shapeB(NOW));
      const [h, p] = base.split('.');
      for (const [hh, pp] of [
        [h.length % 4 === 0 ? h : withPadBitsSet(h), p],
        [h, p.length % 4 === 0 ? p : withPadBitsSet(p)],
      ]) {
        if (hh === h && pp === p) continue;
        const input = `${hh}.${pp}`;
        const respelt = `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
        await expectRefused(app.server, bearer(respelt), 'invalid');
      }
    });
  });

  describe('number of parts and empty segments (RFC 7515 §7.1)', () => {
    const [h, p, s] = sign(shapeB(NOW)).split('.');
    it.each([
      ['one part', h],
      ['two parts (header.payload)', `${h}.${p}`],
      ['four parts', `${h}.${p}.${s}.${s}`],
      ['four parts, the last empty', `${h}.${p}.${s}.`],
      ['five parts (a JWE shape)', `${b64({ alg: 'dir', enc: 'A256GCM' })}..${b64('iv')}.${p}.${b64('tag')}`],
      ['five parts from a JWS', `${h}.${p}.${s}.${s}.${s}`],
      ['an empty header', `.${p}.${s}`],
      ['an empty payload', `${h}..${s}`],
      ['an empty signature', `${h}.${p}.`],
      ['only dots', '..'],
      ['three dots', '...'],
      ['one dot', '.'],
      ['a leading dot', `.${h}.${p}.${s}`],
      ['a doubled dot', `${h}..${p}.${s}`],
    ])('refuses %s', async (_case, token) => {
      await expectRefused(app.server, bearer(token), 'invalid');
    });
  });

  describe('scheme and credential syntax (RFC 6750 §2.1)', () => {
    const token = sign(shapeB(NOW));

    it.each([
      ['Bearer', `Bearer ${token}`],
      ['bearer', `bearer ${token}`],
      ['BEARER', `BEARER ${token}`],
      ['BeArEr', `BeArEr ${token}`],
      ['several spaces after the scheme', `Bearer    ${token}`],
      ['surrounding spaces', `   Bearer ${token}   `],
    ])('accepts the scheme written %s (case-insensitive, RFC 9110 §11.1)', async (_case, header) => {
      expect((await getMe(app.server, header)).status).toBe(200);
    });

    it.each([
      ['another scheme (Basic)', `Basic ${Buffer.from('user:pass').toString('base64')}`],
      ['Token', `Token ${token}`],
      ['JWT', `JWT ${token}`],
      ['Bearer glued to the token', `Bearer${token}`],
      ['a colon after Bearer', `Bearer: ${token}`],
      ['a tab between scheme and token (1*SP only)', `Bearer\t${token}`],
      ['the token alone, no scheme', token],
      ['a scheme with a prefix', `XBearer ${token}`],
      ['Bearer as a parameter', `Basic realm="x", Bearer ${token}`],
      ['an empty header', ''],
    ])('counts %s as missing (RFC 6750 §3.1: no error code)', async (_case, header) => {
      await expectRefused(app.server, header, 'missing');
    });

    it.each([
      ['Bearer and nothing else', 'Bearer'],
      ['Bearer and spaces only', 'Bearer    '],
      ['two tokens separated by a space', `Bearer ${token} ${token}`],
      ['two tokens separated by a comma', `Bearer ${token},${token}`],
      ['two tokens separated by a comma and space', `Bearer ${token}, ${token}`],
      ['a second Bearer credential in the same field', `Bearer ${token}, Bearer ${token}`],
      ['a trailing comma', `Bearer ${token},`],
      ['a trailing semicolon', `Bearer ${token};`],
      ['a token quoted', `Bearer "${token}"`],
      ['auth-params instead of a token', 'Bearer token="abc"'],
      ['a tab inside the credential', `Bearer ${token}\tx`],
    ])('refuses %s as invalid_token', async (_case, header) => {
      await expectRefused(app.server, header, 'invalid');
    });

    it('refuses two Authorization header fields instead of silently using the first (RFC 9110 §5.3)', async () => {
      for (const [first, second] of [
        [`Bearer ${token}`, 'Bearer forged.forged.forged'],
        ['Bearer forged.forged.forged', `Bearer ${token}`],
        [`Bearer ${token}`, `Bearer ${token}`],
        ['Basic dXNlcjpwYXNz', `Bearer ${token}`],
      ]) {
        const res = await rawRequest(
          app.server,
          `GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${first}\r\nauthorization: ${second}\r\nConnection: close\r\n\r\n`,
        );
        expect({ status: res.status, body: JSON.parse(res.body) as unknown }).toEqual({
          status: 401,
          body: refusal('invalid').body,
        });
        expect(res.headers).toContain(`WWW-Authenticate: ${refusal('invalid').challenge}`);
      }
    });

    it('does not read a token from the query string, a body, or a cookie', async () => {
      await expectRefused(app.server, undefined, 'missing');
      const query = await request(app.server).get(`/me?access_token=${token}`);
      expect(answerOf(query)).toEqual(refusal('missing'));
      const cookie = await request(app.server).get('/me').set('Cookie', `access_token=${token}`);
      expect(answerOf(cookie)).toEqual(refusal('missing'));
      const form = await request(app.server).get('/me').type('form').send({ access_token: token });
      expect(answerOf(form)).toEqual(refusal('missing'));
    });
  });

  describe('control characters and bytes the HTTP parser refuses first (400)', () => {
    const token = sign(shapeB(NOW));
    it.each([
      ['a NUL byte', `Bearer ${token}\u0000`],
      ['a bare CR', `Bearer ${token}\rX-Injected: 1`],
      ['a bare LF (header injection)', `Bearer ${token}\nX-Injected: 1`],
      ['a control character (\\x01)', `Bearer \u0001${token}`],
      ['an obsolete line folding', `Bearer ${token}\r\n x`],
    ])('answers 400 for %s', async (_case, value) => {
      const res = await rawRequest(
        app.server,
        `GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${value}\r\nConnection: close\r\n\r\n`,
      );
      expect(res.status).toBe(400);
    });
  });

  describe('sizes (maxTokenLength 16 384 by default; Node refuses headers over 16 KiB with 431)', () => {
    it('accepts a genuine token of 11 000 characters (a real token with many groups)', async () => {
      const token = tokenOfLength(11_000);
      expect((await getMe(app.server, bearer(token))).status).toBe(200);
    });

    it('accepts a genuine token of exactly 16 384 characters and refuses 16 385, before decoding it', async () => {
      // Through verify(): over HTTP, Node's own 16 KiB header limit answers 431 for these before any middleware.
      let asked = 0;
      const keyOf = () => {
        asked++;
        return undefined;
      };
      const auth = createTokenAuth({ ...HS256_OPTIONS, key: { secret: SECRET } });
      const counting = createTokenAuth({ ...HS256_OPTIONS, key: keyOf, algorithms: ['HS256'] });
      try {
        const exact = tokenOfLength(16_384);
        expect(exact.length).toBe(16_384);
        await expect(auth.verify(exact)).resolves.toMatchObject({ iss: ISSUER });
        const over = tokenOfLength(16_385);
        expect(over.length).toBe(16_385);
        await expect(auth.verify(over)).rejects.toMatchObject({ code: 'invalid_token', status: 401 });
        await expect(counting.verify(over)).rejects.toMatchObject({ code: 'invalid_token' });
        expect(asked).toBe(0);
      } finally {
        auth.close();
        counting.close();
      }
    });

    it('refuses a 15 000-character token (under the HTTP limit) as invalid_token', async () => {
      await expectRefused(app.server, bearer(`${'a'.repeat(7000)}.${'b'.repeat(7000)}.${'c'.repeat(999)}`), 'invalid');
    });

    it("answers 431 for an Authorization header beyond Node's header limit, whatever it holds", async () => {
      for (const size of [17 * 1024, 64 * 1024, 1024 * 1024]) {
        const res = await rawRequest(
          app.server,
          `GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${'a'.repeat(size)}\r\nConnection: close\r\n\r\n`,
        );
        expect(res.status).toBe(431);
      }
    });

    it('applies a smaller maxTokenLength before any key is asked for', async () => {
      let asked = 0;
      const small = await protectedApp(express, {
        ...HS256_OPTIONS,
        maxTokenLength: 100,
        key: () => {
          asked++;
          return undefined;
        },
        algorithms: ['HS256'],
      });
      try {
        await expectRefused(small.server, bearer(`${'a'.repeat(50)}.${'b'.repeat(50)}.c`), 'invalid');
        expect(asked).toBe(0);
      } finally {
        await small.close();
      }
    });

    it('refuses deeply nested JSON in a forged token without a stack overflow', async () => {
      const deep = `{"a":${'['.repeat(2500)}${']'.repeat(2500)}}`;
      await expectRefused(
        app.server,
        bearer(`${b64({ alg: 'HS256' })}.${Buffer.from(deep).toString('base64url')}.${'A'.repeat(43)}`),
        'invalid',
      );
    });
  });

  describe('downgrade attempts: passing as anonymous or as a CORS preflight', () => {
    let optional: Server;
    let everyMethod: Server;
    beforeAll(async () => {
      const auth = createTokenAuth(HS256_OPTIONS);
      const optionalApp = express();
      optionalApp.get('/me', auth.optionalVerifiedUser(), (req, res) => {
        res.json({ anonymous: req.auth === undefined });
      });
      const allApp = express();
      allApp.all('/me', auth.requireVerifiedUser(), (req, res) => {
        res.json({ method: req.method, anonymous: req.auth === undefined });
      });
      [optional, everyMethod] = await Promise.all([listen(optionalApp), listen(allApp)]);
    });
    afterAll(() => Promise.all([closeServer(optional), closeServer(everyMethod)]));

    it.each([
      ['a forged token', `Bearer ${withSegment(sign(shapeB(NOW)), 2, 'A'.repeat(43))}`],
      ['an expired token', `Bearer ${sign(shapeB(NOW - 7200))}`],
      ['a malformed token', 'Bearer a.b'],
      ['alg none', `Bearer ${b64({ alg: 'none' })}.${b64(shapeB(NOW))}.`],
      ['Bearer with nothing after it', 'Bearer'],
      ['two tokens', `Bearer ${sign(shapeB(NOW))} x`],
    ])('optionalVerifiedUser refuses %s instead of letting it through as anonymous', async (_case, header) => {
      const res = await getMe(optional, header);
      expect(res.status).toBe(401);
      expect(res.body).not.toHaveProperty('anonymous');
    });

    it('optionalVerifiedUser refuses two Authorization fields instead of picking one', async () => {
      const res = await rawRequest(
        optional,
        `GET /me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic eDp5\r\nAuthorization: Bearer a.b.c\r\nConnection: close\r\n\r\n`,
      );
      expect(res.status).toBe(401);
    });

    it('lets only a real preflight (OPTIONS with Access-Control-Request-Method) skip authentication, and with no claims', async () => {
      const preflight = await request(everyMethod)
        .options('/me')
        .set('Access-Control-Request-Method', 'GET')
        .set('Origin', 'https://app.example');
      expect({ status: preflight.status, body: preflight.body as unknown }).toEqual({
        status: 200,
        body: { method: 'OPTIONS', anonymous: true },
      });
      const spoofedGet = await request(everyMethod)
        .get('/me')
        .set('Access-Control-Request-Method', 'GET')
        .set('Origin', 'https://evil.example');
      expect(answerOf(spoofedGet)).toEqual(refusal('missing'));
      const plainOptions = await request(everyMethod).options('/me').set('Origin', 'https://evil.example');
      expect(answerOf(plainOptions)).toEqual(refusal('missing'));
      const overridden = await request(everyMethod)
        .post('/me')
        .set('Access-Control-Request-Method', 'POST')
        .set('X-HTTP-Method-Override', 'OPTIONS');
      expect(answerOf(overridden)).toEqual(refusal('missing'));
    });
  });

  it('gives every malformed-token refusal the same body and challenge', async () => {
    const res = await Promise.all(
      ['Bearer a', 'Bearer a.b', 'Bearer a.b.c', 'Bearer a.b.c.d'].map((h) => getMe(app.server, h)),
    );
    for (const r of res) expect(answerOf(r)).toEqual(refusal('invalid'));
  });
});
