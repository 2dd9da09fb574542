// `key.jwks`: a JWK Set given inline. Keys chosen by kid and held to the checks a fetched JWKS's keys pass (alg,
// use, issuer); a malformed set is an OptionError at createTokenAuth naming its dotted path; nothing is ever fetched.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import request from 'supertest';
import { createTokenAuth, type TokenAuth, type TokenAuthOptions } from '../../lib';
import { MAX_JWKS_KEYS } from '../../lib/keys/jwks';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, b64, ecKeys, ISSUER, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';
import { optionErrorOf } from '../fixtures/option-error';
import { rejection } from '../fixtures/rejection';

const rsa = rsaKeys();
const rsa2 = rsaKeys();
const ec = ecKeys();
const now = Math.floor(Date.now() / 1000);
const clock = () => now;

const jwk = (key: KeyObject, extra: Record<string, unknown> = {}) => ({ ...key.export({ format: 'jwk' }), ...extra });
const JWKS = {
  keys: [
    jwk(rsa.publicKey, { kid: 'r1', alg: 'RS256', use: 'sig' }),
    jwk(ec.publicKey, { kid: 'e1' }),
    jwk(rsa2.publicKey, { kid: 'enc', use: 'enc' }), // a server's set pasted whole: an encryption key is left out
  ],
};

const opened: TokenAuth[] = [];
afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

function auth(jwks: unknown, options: Partial<TokenAuthOptions> = {}): TokenAuth {
  const made = createTokenAuth({
    key: { jwks },
    issuer: ISSUER,
    audience: AUDIENCE,
    clock,
    ...options,
  } as TokenAuthOptions);
  opened.push(made);
  return made;
}

const token = (key: KeyObject, alg: 'RS256' | 'ES256' | 'PS256', kid?: string, claims: object = {}) =>
  sign({ ...shapeB(now), ...claims }, key, alg, kid === undefined ? {} : { kid });

describe('key.jwks', () => {
  it('is typed as a JWK Set of the JWKs node:crypto exports', () => {
    const typed = createTokenAuth({
      key: { jwks: { keys: [{ ...ec.publicKey.export({ format: 'jwk' }), kid: 'e1' }] } },
      issuer: ISSUER,
      audience: AUDIENCE,
    });
    typed.close();
  });

  it('verifies RS256 and ES256 tokens by kid, and one without kid by the one key that fits its alg', async () => {
    const verifier = auth(JWKS);
    await expect(verifier.verify(token(rsa.privateKey, 'RS256', 'r1'))).resolves.toMatchObject({ iss: ISSUER });
    await expect(verifier.verify(token(ec.privateKey, 'ES256', 'e1'))).resolves.toMatchObject({ iss: ISSUER });
    await expect(verifier.verify(token(rsa.privateKey, 'RS256'))).resolves.toMatchObject({ iss: ISSUER });
  });

  it.each<[string, () => string, string]>([
    ['a kid the set lacks', () => token(rsa.privateKey, 'RS256', 'gone'), 'kid-unknown'],
    ['the kid of an encryption key', () => token(rsa2.privateKey, 'RS256', 'enc'), 'kid-unknown'],
    ["an alg other than the key's own", () => token(rsa.privateKey, 'PS256', 'r1'), 'kid-no-fit'],
    ['another key under a listed kid', () => token(rsa2.privateKey, 'RS256', 'r1'), 'signature'],
    ['no kid, signed by a key the set lacks', () => token(rsa2.privateKey, 'RS256'), 'signature'],
  ])('refuses %s with 401 invalid_token', async (_case, make, reason) => {
    expect(await rejection(auth(JWKS).verify(make()))).toMatchObject({ code: 'invalid_token', reason });
  });

  it('says in the hint of kid-unknown that an inline set is never fetched', async () => {
    const err = await rejection(auth(JWKS).verify(token(rsa.privateKey, 'RS256', 'gone')));
    expect(err.hint).toMatch(/option "key.jwks" lists: a set given inline is never fetched again/);
  });

  it('refuses a token without kid when several keys fit its alg (kid-ambiguous)', async () => {
    const two = { keys: [jwk(rsa.publicKey, { kid: 'a' }), jwk(rsa2.publicKey, { kid: 'b' })] };
    expect(await rejection(auth(two).verify(token(rsa.privateKey, 'RS256')))).toMatchObject({
      reason: 'kid-ambiguous',
    });
  });

  it("holds a key with its own issuer to it (iss-key for another token's iss)", async () => {
    const bound = { keys: [jwk(rsa.publicKey, { kid: 'b', issuer: 'https://other.example' })] };
    const err = await rejection(auth(bound).verify(token(rsa.privateKey, 'RS256', 'b')));
    expect(err).toMatchObject({ code: 'invalid_token', reason: 'iss-key' });
    const own = { keys: [jwk(rsa.publicKey, { kid: 'b', issuer: ISSUER })] };
    await expect(auth(own).verify(token(rsa.privateKey, 'RS256', 'b'))).resolves.toMatchObject({ iss: ISSUER });
  });

  it('accepts every asymmetric algorithm a key fits by default, and narrows to option algorithms', async () => {
    const narrowed = auth(JWKS, { algorithms: ['ES256'] });
    await expect(narrowed.verify(token(ec.privateKey, 'ES256', 'e1'))).resolves.toMatchObject({ iss: ISSUER });
    expect(await rejection(narrowed.verify(token(rsa.privateKey, 'RS256', 'r1')))).toMatchObject({ reason: 'alg' });
  });

  describe.each(EXPRESS_VERSIONS)('through %s', (_name, express) => {
    it('answers 200 for a token of a listed key and 401 for another', async () => {
      const app = appWith(express, auth(JWKS));
      await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${token(ec.privateKey, 'ES256', 'e1')}`)
        .expect(200);
      await request(app)
        .get('/me')
        .set('Authorization', `Bearer ${token(ecKeys().privateKey, 'ES256', 'e1')}`)
        .expect(401);
    });
  });
});

describe('key.jwks refused at createTokenAuth (OptionError naming the path)', () => {
  const make =
    (jwks: unknown, options: Record<string, unknown> = {}) =>
    () =>
      auth(jwks, options);

  it.each<[string, unknown, string, RegExp]>([
    ['not an object', 'keys', 'key.jwks', /must be a JWK Set/],
    ['an array of keys (not a set)', [jwk(rsa.publicKey)], 'key.jwks', /is an array: give the set itself/],
    ['keys not an array', { keys: {} }, 'key.jwks.keys', /must be an array/],
    ['no keys', { keys: [] }, 'key.jwks.keys', /is empty/],
    ['only encryption keys', { keys: [jwk(rsa.publicKey, { use: 'enc' })] }, 'key.jwks.keys', /no signature key/],
    [
      'a private key',
      { keys: [jwk(rsa.publicKey), rsa.privateKey.export({ format: 'jwk' })] },
      'key.jwks.keys[1]',
      /private or symmetric material \("d"\)/,
    ],
    ['a symmetric key', { keys: [{ kty: 'oct', k: b64(SECRET) }] }, 'key.jwks.keys[0]', /private or symmetric/],
    ['an entry that is not a key', { keys: [jwk(rsa.publicKey), 'key'] }, 'key.jwks.keys[1]', /not a JSON object/],
    [
      'an unparseable key',
      { keys: [{ kty: 'RSA', n: '!!', e: 'AQAB' }] },
      'key.jwks.keys[0]',
      /is not a usable public verification key/,
    ],
    [
      'RSA under 2048 bits',
      { keys: [jwk(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey)] },
      'key.jwks.keys[0]',
      /verifies no algorithm/,
    ],
    [
      'an alg the key does not fit',
      { keys: [jwk(ec.publicKey, { alg: 'RS256' })] },
      'key.jwks.keys[0]',
      /does not fit/,
    ],
    ['an issuer that is not a string', { keys: [jwk(ec.publicKey, { issuer: 7 })] }, 'key.jwks.keys[0]', /issuer/],
    [
      `more than ${MAX_JWKS_KEYS} keys`,
      { keys: Array.from({ length: MAX_JWKS_KEYS + 1 }, (_, i) => jwk(ec.publicKey, { kid: `k${i}` })) },
      'key.jwks.keys',
      new RegExp(`at most ${MAX_JWKS_KEYS}, as for a fetched JWKS`),
    ],
  ])('refuses %s', (_case, jwks, option, message) => {
    const err = optionErrorOf(make(jwks));
    expect(err.option).toBe(option);
    expect(err.message).toMatch(message);
  });

  it('refuses algorithms that no key of the set verifies, and any HS* algorithm', () => {
    expect(optionErrorOf(make({ keys: [jwk(ec.publicKey)] }, { algorithms: ['RS256'] })).option).toBe('algorithms');
    expect(optionErrorOf(make(JWKS, { algorithms: ['HS256'] })).message).toMatch(/HS\* algorithm with key.jwks/);
  });

  it('refuses key.jwks beside another key form, and other fields with it', () => {
    expect(optionErrorOf(make(JWKS, { key: { jwks: JWKS, jwksUri: 'https://a.example/jwks' } })).message).toMatch(
      /exactly one of secret, publicKey, jwks, jwksUri or upstream \(got jwks and jwksUri\)/,
    );
    expect(optionErrorOf(make(JWKS, { key: { jwks: JWKS, cooldown: 5 } })).option).toBe('key.cooldown');
  });

  it('points a JWK Set given as key.publicKey to key.jwks', () => {
    const err = optionErrorOf(() =>
      createTokenAuth({ key: { publicKey: JWKS as never }, issuer: ISSUER, audience: AUDIENCE }),
    );
    expect(err.option).toBe('key.publicKey');
    expect(err.message).toMatch(/is a JWK Set .*give it as key.jwks/);
  });
});
