/**
 * Hostile input, part 1: forged signatures and algorithm attacks (RFC 8725 §2.1, §2.2, §3.1, §3.10; RFC 7515
 * §4.1.1–4.1.11). Every case is a token an attacker's tooling (jwt_tool, jwt-cracker, Burp JWT Editor) would
 * send, through a real Express 5 and Express 4 app, answered 401 with the exact body and challenge.
 */
import { createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, b64, ecKeys, ISSUER, NOW, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';
import {
  answerOf,
  expectRefused,
  getMe,
  hitCounter,
  HS256_OPTIONS,
  protectedApp,
  rawToken,
  refusal,
  withSegment,
  type HitCounter,
  type ProtectedApp,
} from './harness';

const rsa = rsaKeys();
const ec = ecKeys();
const attacker = rsaKeys();
const claims = shapeB(NOW);
const bearer = (token: string) => `Bearer ${token}`;

const RS256_OPTIONS: TokenAuthOptions = {
  key: { publicKey: rsa.publicKey },
  issuer: ISSUER,
  audience: AUDIENCE,
  clock: () => NOW,
};
const ES256_OPTIONS: TokenAuthOptions = {
  key: { publicKey: ec.publicKey },
  issuer: ISSUER,
  audience: AUDIENCE,
  clock: () => NOW,
};

/** The public key as an attacker finds it (a JWKS, a certificate, a PEM in the docs), in every usual form. */
function publicKeyForms(publicKey: KeyObject): Array<[string, string | Buffer]> {
  const forms: Array<[string, string | Buffer]> = [
    ['its SPKI PEM', publicKey.export({ type: 'spki', format: 'pem' })],
    ['its SPKI PEM without the trailing newline', String(publicKey.export({ type: 'spki', format: 'pem' })).trimEnd()],
    ['its SPKI DER', publicKey.export({ type: 'spki', format: 'der' })],
    ['its JWK JSON', JSON.stringify(publicKey.export({ format: 'jwk' }))],
  ];
  if (publicKey.asymmetricKeyType === 'rsa')
    forms.push(['its PKCS#1 PEM', publicKey.export({ type: 'pkcs1', format: 'pem' })]);
  return forms;
}

describe.each(EXPRESS_VERSIONS)('forged signatures and algorithm attacks through %s', (_name, express) => {
  let hs: ProtectedApp;
  let rs: ProtectedApp;
  let es: ProtectedApp;
  beforeAll(async () => {
    [hs, rs, es] = await Promise.all([
      protectedApp(express),
      protectedApp(express, RS256_OPTIONS),
      protectedApp(express, ES256_OPTIONS),
    ]);
  });
  afterAll(() => Promise.all([hs.close(), rs.close(), es.close()]));

  it('accepts the genuine tokens these attacks start from (control)', async () => {
    expect((await getMe(hs.server, bearer(sign(claims)))).status).toBe(200);
    expect((await getMe(rs.server, bearer(sign(claims, rsa.privateKey, 'RS256')))).status).toBe(200);
    expect((await getMe(es.server, bearer(sign(claims, ec.privateKey, 'ES256')))).status).toBe(200);
  });

  describe('alg "none" (RFC 8725 §2.1, §3.1; RFC 7518 §3.6)', () => {
    const casings = ['none', 'None', 'NONE', 'nOnE', 'NoNe', 'none ', ' none', 'none\u0000'];
    it.each(casings)('refuses alg %j with an empty signature', async (alg) => {
      const token = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}.`;
      for (const app of [hs, rs, es]) await expectRefused(app.server, bearer(token), 'invalid');
    });

    it.each(casings)('refuses alg %j carrying the signature of a genuine token', async (alg) => {
      const genuine = sign(claims).split('.')[2];
      const token = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}.${genuine}`;
      await expectRefused(hs.server, bearer(token), 'invalid');
    });

    it('refuses alg none even when the app lists every algorithm it can', async () => {
      const app = await protectedApp(express, { ...HS256_OPTIONS, algorithms: ['HS256', 'HS384', 'HS512'] });
      try {
        await expectRefused(app.server, bearer(`${b64({ alg: 'none' })}.${b64(claims)}.`), 'invalid');
      } finally {
        await app.close();
      }
    });

    it('refuses to be configured with none at all (TypeError at set-up, not a request-time surprise)', () => {
      for (const alg of ['none', 'None', 'NONE']) {
        expect(() => createTokenAuth({ ...HS256_OPTIONS, algorithms: [alg as 'HS256'] })).toThrow(TypeError);
      }
    });

    it.each([
      ['alg missing', {}],
      ['alg null', { alg: null }],
      ['alg a number', { alg: 256 }],
      ['alg an array', { alg: ['HS256'] }],
      ['alg an object', { alg: { name: 'HS256' } }],
      ['alg lower-case hs256', { alg: 'hs256' }],
      ['alg with a trailing space', { alg: 'HS256 ' }],
      ['alg empty', { alg: '' }],
    ])('refuses a header with %s, even HMAC-signed with the real secret', async (_case, header) => {
      const token = rawToken(JSON.stringify({ typ: 'JWT', ...header }), JSON.stringify(claims));
      await expectRefused(hs.server, bearer(token), 'invalid');
    });
  });

  describe('signature stripping, splicing and tampering', () => {
    it('refuses a token whose signature was stripped (trailing dot kept)', async () => {
      const token = sign(claims);
      await expectRefused(hs.server, bearer(withSegment(token, 2, '')), 'invalid');
    });

    it('refuses a token whose signature was stripped with its dot (two parts)', async () => {
      const [h, p] = sign(claims).split('.');
      await expectRefused(hs.server, bearer(`${h}.${p}`), 'invalid');
    });

    it('refuses a header and payload spliced onto the signature of another valid token', async () => {
      const victim = sign(shapeB(NOW, { scopes: ['identify'] }));
      const mine = sign(shapeB(NOW, { scopes: ['identify', 'admin'] }));
      await expectRefused(hs.server, bearer(withSegment(mine, 2, victim.split('.')[2])), 'invalid');
      const rsVictim = sign(shapeB(NOW), rsa.privateKey, 'RS256');
      const rsMine = sign(shapeB(NOW, { sub: 'admin' }), rsa.privateKey, 'RS256');
      await expectRefused(rs.server, bearer(withSegment(rsMine, 2, rsVictim.split('.')[2])), 'invalid');
    });

    it('refuses a payload tampered after signing (scopes widened, issuer kept)', async () => {
      const token = sign(shapeB(NOW, { scopes: ['identify'] }));
      const widened = b64(shapeB(NOW, { scopes: ['identify', 'admin'] }));
      for (const [app, t] of [
        [hs, token],
        [rs, sign(shapeB(NOW), rsa.privateKey, 'RS256')],
        [es, sign(shapeB(NOW), ec.privateKey, 'ES256')],
      ] as const) {
        await expectRefused(app.server, bearer(withSegment(t, 1, widened)), 'invalid');
      }
    });

    it('refuses a payload with its exp extended after signing', async () => {
      const token = sign(shapeB(NOW - 1000));
      const extended = b64({
        ...JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()),
        exp: NOW + 10_000,
      });
      await expectRefused(hs.server, bearer(withSegment(token, 1, extended)), 'invalid');
    });

    it('refuses a signature truncated, extended or with one bit flipped', async () => {
      const token = sign(claims);
      const sig = token.split('.')[2];
      const flipped = Buffer.from(sig, 'base64url');
      flipped[0] ^= 1;
      for (const bad of [sig.slice(0, -2), `${sig}AA`, flipped.toString('base64url'), 'A'.repeat(sig.length)]) {
        await expectRefused(hs.server, bearer(withSegment(token, 2, bad)), 'invalid');
      }
    });

    it('refuses a token signed with a guessed weak secret (jwt-cracker dictionary; RFC 8725 §2.2)', async () => {
      for (const guess of ['secret', '', 'password', 'your-256-bit-secret', ISSUER]) {
        await expectRefused(
          hs.server,
          bearer(rawToken(JSON.stringify({ alg: 'HS256', typ: 'JWT' }), JSON.stringify(claims), guess)),
          'invalid',
        );
      }
    });
  });

  describe('alg switched without re-signing', () => {
    it('refuses HS256 relabelled HS384/HS512 on an app that accepts all three', async () => {
      const app = await protectedApp(express, { ...HS256_OPTIONS, algorithms: ['HS256', 'HS384', 'HS512'] });
      try {
        const token = sign(claims);
        for (const alg of ['HS384', 'HS512']) {
          await expectRefused(app.server, bearer(withSegment(token, 0, b64({ alg, typ: 'JWT' }))), 'invalid');
        }
      } finally {
        await app.close();
      }
    });

    it('refuses RS256 relabelled PS256 (and the reverse) on an app that accepts both', async () => {
      const app = await protectedApp(express, { ...RS256_OPTIONS, algorithms: ['RS256', 'PS256'] });
      try {
        await expectRefused(
          app.server,
          bearer(withSegment(sign(claims, rsa.privateKey, 'RS256'), 0, b64({ alg: 'PS256', typ: 'JWT' }))),
          'invalid',
        );
        await expectRefused(
          app.server,
          bearer(withSegment(sign(claims, rsa.privateKey, 'PS256'), 0, b64({ alg: 'RS256', typ: 'JWT' }))),
          'invalid',
        );
      } finally {
        await app.close();
      }
    });

    it('refuses RS256 relabelled RS512 and ES256 relabelled ES384', async () => {
      await expectRefused(
        rs.server,
        bearer(withSegment(sign(claims, rsa.privateKey, 'RS256'), 0, b64({ alg: 'RS512', typ: 'JWT' }))),
        'invalid',
      );
      await expectRefused(
        es.server,
        bearer(withSegment(sign(claims, ec.privateKey, 'ES256'), 0, b64({ alg: 'ES384', typ: 'JWT' }))),
        'invalid',
      );
    });

    it('refuses a correctly signed token in an algorithm the app does not accept (HS384 at an HS256 app)', async () => {
      await expectRefused(hs.server, bearer(sign(claims, SECRET, 'HS384')), 'invalid');
      await expectRefused(rs.server, bearer(sign(claims, rsa.privateKey, 'PS256')), 'invalid');
    });
  });

  describe('key confusion: HS256 signed with the public key (RFC 8725 §2.1, §3.1; CVE-2015-9235, CVE-2016-10555)', () => {
    it.each(publicKeyForms(rsa.publicKey))(
      "refuses HS256 signed with the RS256 app's public key as %s",
      async (_form, hmacKey) => {
        const token = rawToken(JSON.stringify({ alg: 'HS256', typ: 'JWT' }), JSON.stringify(claims), hmacKey);
        await expectRefused(rs.server, bearer(token), 'invalid');
      },
    );

    it.each(publicKeyForms(ec.publicKey))(
      "refuses HS256 signed with the ES256 app's public key as %s",
      async (_form, hmacKey) => {
        const token = rawToken(JSON.stringify({ alg: 'HS256', typ: 'JWT' }), JSON.stringify(claims), hmacKey);
        await expectRefused(es.server, bearer(token), 'invalid');
      },
    );

    it('cannot be configured into confusion: HS256 next to a public key, or RS256 next to a secret, throws at set-up', () => {
      expect(() => createTokenAuth({ ...RS256_OPTIONS, algorithms: ['RS256', 'HS256'] })).toThrow(TypeError);
      expect(() => createTokenAuth({ ...HS256_OPTIONS, algorithms: ['HS256', 'RS256'] })).toThrow(TypeError);
      const pem = String(rsa.publicKey.export({ type: 'spki', format: 'pem' }));
      // The PEM is public: HS256 with it as the "secret" is exactly the confusion, so it is refused at set-up.
      expect(() => createTokenAuth({ ...HS256_OPTIONS, key: { publicKey: pem }, algorithms: ['HS256'] })).toThrow(
        TypeError,
      );
    });

    it('refuses HS256 through a key resolver that hands out an RSA key, even with HS256 and RS256 both allowed', async () => {
      const app = await protectedApp(express, {
        ...RS256_OPTIONS,
        key: () => rsa.publicKey,
        algorithms: ['RS256', 'HS256'],
      });
      try {
        const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' });
        await expectRefused(
          app.server,
          bearer(rawToken(JSON.stringify({ alg: 'HS256' }), JSON.stringify(claims), pem)),
          'invalid',
        );
        expect((await getMe(app.server, bearer(sign(claims, rsa.privateKey, 'RS256')))).status).toBe(200);
      } finally {
        await app.close();
      }
    });

    it('refuses RS256 through a key resolver that hands out a secret', async () => {
      const secret = createSecretKey(Buffer.from(SECRET));
      const app = await protectedApp(express, { ...HS256_OPTIONS, key: () => secret, algorithms: ['HS256', 'RS256'] });
      try {
        await expectRefused(app.server, bearer(sign(claims, attacker.privateKey, 'RS256')), 'invalid');
      } finally {
        await app.close();
      }
    });

    it("refuses ES256 signed on another curve's key and an EC token at an RSA app", async () => {
      const p384 = ecKeys('secp384r1');
      await expectRefused(es.server, bearer(sign(claims, p384.privateKey, 'ES384')), 'invalid');
      await expectRefused(rs.server, bearer(sign(claims, ec.privateKey, 'ES256')), 'invalid');
    });
  });

  describe('attacker keys in the header: jwk, jku, x5u, x5c (RFC 8725 §3.10; RFC 7515 §4.1.2–4.1.6)', () => {
    let counter: HitCounter;
    beforeAll(async () => {
      const jwk = { ...attacker.publicKey.export({ format: 'jwk' }), kid: 'attacker', alg: 'RS256', use: 'sig' };
      counter = await hitCounter(JSON.stringify({ keys: [jwk] }));
    });
    afterAll(() => counter.close());

    const attackerJwk = () => attacker.publicKey.export({ format: 'jwk' });
    const attackerDer = () => attacker.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const headers = (): Array<[string, Record<string, unknown>]> => [
      ['an embedded jwk (CVE-2018-0114)', { jwk: attackerJwk() }],
      ['an embedded jwk with a kid', { jwk: { ...attackerJwk(), kid: 'attacker' }, kid: 'attacker' }],
      ["a jku pointing at the attacker's JWKS", { jku: `${counter.url}/jwks.json`, kid: 'attacker' }],
      ["an x5u pointing at the attacker's certificate", { x5u: `${counter.url}/cert.pem` }],
      ["an x5c chain holding the attacker's key", { x5c: [attackerDer()] }],
      [
        'jku, x5u, jwk and x5c together',
        { jku: `${counter.url}/a`, x5u: `${counter.url}/b`, jwk: attackerJwk(), x5c: [attackerDer()] },
      ],
    ];

    it("refuses every such token signed with the attacker's private key, and fetches nothing", async () => {
      for (const [_case, header] of headers()) {
        await expectRefused(rs.server, bearer(sign(claims, attacker.privateKey, 'RS256', header)), 'invalid');
      }
      expect(counter.hits).toBe(0);
    });

    it('refuses an embedded HMAC jwk (kty oct) at an HS256 app, and fetches nothing', async () => {
      const k = Buffer.from('attacker-chosen-secret-of-32-bytes!!').toString('base64url');
      const token = rawToken(
        JSON.stringify({ alg: 'HS256', jwk: { kty: 'oct', k }, jku: `${counter.url}/k` }),
        JSON.stringify(claims),
        Buffer.from(k, 'base64url'),
      );
      await expectRefused(hs.server, bearer(token), 'invalid');
      expect(counter.hits).toBe(0);
    });

    it('ignores those parameters on a genuine token: the configured key decides, nothing is fetched', async () => {
      const header = { jku: `${counter.url}/jwks.json`, x5u: `${counter.url}/cert.pem`, jwk: attackerJwk() };
      const res = await getMe(rs.server, bearer(sign(claims, rsa.privateKey, 'RS256', header)));
      expect(res.status).toBe(200);
      expect(counter.hits).toBe(0);
    });

    it('does not hand jku/x5u to a key resolver as something to trust: the resolver sees them but the key it returns decides', async () => {
      const seen: unknown[] = [];
      const app = await protectedApp(express, {
        ...RS256_OPTIONS,
        key: (header) => {
          seen.push(header.jku);
          return rsa.publicKey;
        },
        algorithms: ['RS256'],
      });
      try {
        await expectRefused(
          app.server,
          bearer(sign(claims, attacker.privateKey, 'RS256', { jku: `${counter.url}/jwks.json` })),
          'invalid',
        );
        expect(seen).toEqual([`${counter.url}/jwks.json`]);
        expect(counter.hits).toBe(0);
      } finally {
        await app.close();
      }
    });
  });

  describe('kid injection against static keys (RFC 8725 §3.10)', () => {
    const kids = [
      '../../../../../../dev/null',
      '/dev/null',
      '..\\..\\..\\windows\\win.ini',
      '../../../../etc/passwd',
      "' OR '1'='1",
      "x' UNION SELECT 'attacker-secret' --",
      '$(curl 127.0.0.1)',
      '`id`',
      '|id',
      'kid\u0000.pem',
      'http://127.0.0.1:1/key',
      '{"$ne":null}',
      '__proto__',
      'constructor',
      'x'.repeat(4000),
    ];

    const labelled = kids.map((kid): [string, string] => [
      kid.length > 40 ? `${kid.slice(0, 12)}… (${kid.length} characters)` : JSON.stringify(kid),
      kid,
    ]);
    it.each(labelled)('refuses kid %s with a token HMAC-signed with an empty or guessable key', async (_label, kid) => {
      for (const key of ['', 'AA==', '\n', 'attacker-secret']) {
        const token = rawToken(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid }), JSON.stringify(claims), key);
        await expectRefused(hs.server, bearer(token), 'invalid');
      }
    });

    it.each([
      ['a number', 1],
      ['null', null],
      ['an array', ['a']],
      ['an object', { $ne: null }],
      ['true', true],
    ])('refuses a kid that is %s, even with a genuine signature', async (_case, kid) => {
      const token = rawToken(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid }), JSON.stringify(claims));
      await expectRefused(hs.server, bearer(token), 'invalid');
    });
  });

  describe('crit (RFC 7515 §4.1.11: a critical extension we do not implement must be refused)', () => {
    it.each([
      ['crit naming an extension we do not understand', { crit: ['exp'], exp: NOW + 10 }],
      ['crit b64 false (RFC 7797 unencoded payload)', { crit: ['b64'], b64: false }],
      ['an empty crit list', { crit: [] }],
      ['crit as a string', { crit: 'exp' }],
      ['crit null', { crit: null }],
      ['crit naming a registered parameter', { crit: ['alg'] }],
    ])('refuses %s, even with a genuine signature', async (_case, header) => {
      const token = sign(claims, SECRET, 'HS256', header);
      await expectRefused(hs.server, bearer(token), 'invalid');
    });
  });

  describe('a token from another issuer or key of the same kind', () => {
    it('refuses a well-formed RS256 token from another RSA key, and ES256 from another P-256 key', async () => {
      await expectRefused(rs.server, bearer(sign(claims, attacker.privateKey, 'RS256')), 'invalid');
      await expectRefused(es.server, bearer(sign(claims, ecKeys().privateKey, 'ES256')), 'invalid');
    });

    it("refuses an RSA-PSS-only key's token at an RS256 app", async () => {
      const pss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
      await expectRefused(rs.server, bearer(sign(claims, pss.privateKey, 'PS256')), 'invalid');
    });

    it('gives every refusal the same answer, whatever went wrong', async () => {
      const answers = await Promise.all([
        getMe(hs.server, bearer(`${b64({ alg: 'none' })}.${b64(claims)}.`)),
        getMe(
          rs.server,
          bearer(
            rawToken(
              JSON.stringify({ alg: 'HS256' }),
              JSON.stringify(claims),
              rsa.publicKey.export({ type: 'spki', format: 'pem' }),
            ),
          ),
        ),
        getMe(hs.server, bearer(withSegment(sign(claims), 2, ''))),
      ]);
      for (const res of answers) expect(answerOf(res)).toEqual(refusal('invalid'));
    });
  });
});
