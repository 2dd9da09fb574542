/**
 * Reading an introspection answer (RFC 7662 §2.2, RFC 9701 §5): each rule on a correctly signed answer, so that the
 * rule alone decides (freshness by `iat` within the call's window, `aud` naming this resource server by any of its
 * names, an access token's `token_type`) (the tests through a proxy, __tests__/http/introspection.test.ts, alter answers under the AS's
 * signature, which the signature check refuses first).
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { TokenAuthError } from '../../lib';
import { readAnswer, readSignedAnswer, type SignedAnswerContext } from '../../lib/remote/introspection-answer';
import type { SigningKeySource } from '../../lib/keys/source';

const ISSUER = 'https://as.example.test';
const NOW = 1_700_000_000;
const as = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The AS's key set: one ES256 key, whatever the header names. */
const keys: SigningKeySource = {
  kind: 'jws',
  algorithms: new Set(['ES256']),
  keyFor: () => as.publicKey,
  close: () => undefined,
};
const context: SignedAnswerContext = {
  issuer: ISSUER,
  audiences: ['api', 'https://api.example.test', 'https://api.example.test/orders'],
  keys,
  now: NOW,
  clockTolerance: 5,
  window: 10,
};

function signed(
  claims: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key: KeyObject = as.privateKey,
): string {
  const input = `${encode({ alg: 'ES256', typ: 'token-introspection+jwt', kid: 'k', ...header })}.${encode(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

const answer = { active: true, scope: 'read', exp: NOW + 600, aud: 'https://api.example.test' };
const good = { iss: ISSUER, aud: 'api', iat: NOW, token_introspection: answer };

async function reason(text: string): Promise<string | undefined> {
  try {
    await readSignedAnswer(text, context);
  } catch (err) {
    expect(err).toBeInstanceOf(TokenAuthError);
    expect((err as TokenAuthError).code).toBe('verification_unavailable');
    return (err as TokenAuthError).reason;
  }
  return undefined;
}

describe('readSignedAnswer', () => {
  it('answers the token_introspection member of a good answer, and its iat', async () => {
    await expect(readSignedAnswer(signed(good), context)).resolves.toEqual({ answer, iat: NOW });
    await expect(
      readSignedAnswer(signed({ ...good, aud: ['x', 'api'] }, { typ: 'application/token-introspection+jwt' }), context),
    ).resolves.toEqual({ answer, iat: NOW });
  });

  it.each([
    ['the configured audience (an AS that signs for the token audience)', 'https://api.example.test'],
    ['the resource', 'https://api.example.test/orders'],
    ['the client id among others', ['https://other.example.test', 'api']],
  ])('believes an answer whose aud is %s (RFC 9701 §5)', async (_case, aud) => {
    await expect(readSignedAnswer(signed({ ...good, aud }), context)).resolves.toEqual({ answer, iat: NOW });
  });

  it('names the aud received and the ones expected in the hint of an aud refusal, and nothing else', async () => {
    let caught: TokenAuthError | undefined;
    try {
      await readSignedAnswer(signed({ ...good, aud: 'https://other-api.example.test' }), context);
    } catch (err) {
      caught = err as TokenAuthError;
    }
    expect([caught?.code, caught?.reason]).toEqual(['verification_unavailable', 'introspection-jwt-aud']);
    expect(caught?.hint).toBe(
      'the signed answer\'s aud is "https://other-api.example.test"; expected one of "api", "https://api.example.test", ' +
        '"https://api.example.test/orders" (introspection.clientId, audience, resource)',
    );
  });

  it('believes an answer as old as the window, and no older', async () => {
    await expect(readSignedAnswer(signed({ ...good, iat: NOW - 10 }), context)).resolves.toMatchObject({
      iat: NOW - 10,
    });
    expect(await reason(signed({ ...good, iat: NOW - 11 }))).toBe('introspection-jwt-stale');
  });

  it.each([
    ['another typ', signed(good, { typ: 'at+jwt' }), 'introspection-jwt-typ'],
    ['no typ', signed(good, { typ: undefined }), 'introspection-jwt-typ'],
    ['another issuer', signed({ ...good, iss: 'https://evil.example.test' }), 'introspection-jwt-iss'],
    ['another client', signed({ ...good, aud: 'someone-else' }), 'introspection-jwt-aud'],
    ['no aud', signed({ ...good, aud: undefined }), 'introspection-jwt-aud'],
    ['no iat', signed({ ...good, iat: undefined }), 'introspection-jwt-iat'],
    ['an iat in the future', signed({ ...good, iat: NOW + 60 }), 'introspection-jwt-iat'],
    ['an expired answer', signed({ ...good, exp: NOW - 60 }), 'introspection-jwt-exp'],
    ['an answer one year old, without exp', signed({ ...good, iat: NOW - 365 * 86_400 }), 'introspection-jwt-stale'],
    ['an algorithm outside the key set', signed(good, { alg: 'HS256' }), 'introspection-jwt-malformed'],
    [
      'alg none',
      `${encode({ alg: 'none', typ: 'token-introspection+jwt' })}.${encode(good)}.`,
      'introspection-jwt-malformed',
    ],
    ["another key's signature", signed(good, {}, other.privateKey), 'introspection-jwt-signature'],
    ['plain JSON', JSON.stringify(answer), 'introspection-jwt-malformed'],
  ])('refuses %s with a 503', async (_case, text, expected) => {
    expect(await reason(text)).toBe(expected);
  });
});

describe('readAnswer', () => {
  it('answers the claims of an active token, without active', () => {
    expect(readAnswer({ active: true, iss: ISSUER, scope: 'read' }, ISSUER)).toEqual({ iss: ISSUER, scope: 'read' });
    // An absent iss is the AS's own, and the claims say so (subject and session rules name the issuer).
    expect(readAnswer({ active: true, scope: 'read' }, ISSUER)).toEqual({ iss: ISSUER, scope: 'read' });
  });

  it.each([
    'Bearer',
    'bearer',
    'BEARER',
    'DPoP',
    'dpop',
    'N_A',
    'access_token',
    'urn:ietf:params:oauth:token-type:access_token',
  ])('accepts an access token type: token_type %p', (tokenType) => {
    expect(readAnswer({ active: true, scope: 'read', token_type: tokenType }, ISSUER)).toMatchObject({
      token_type: tokenType,
    });
  });

  it.each([
    [
      'an inactive token, whatever else it says',
      { ...answer, active: false },
      'invalid_token',
      'introspection-inactive',
    ],
    ["another issuer's token", { ...answer, iss: 'https://other.example.test' }, 'invalid_token', 'iss'],
    ['an answer without a boolean active', { ...answer, active: 'true' }, 'invalid_token', 'introspection-answer'],
    ['an answer that is no object', ['active', true], 'invalid_token', 'introspection-answer'],
    ['a refresh token', { ...answer, token_type: 'refresh_token' }, 'invalid_token', 'introspection-token-type'],
    ['an ID token', { ...answer, token_type: 'id_token' }, 'invalid_token', 'introspection-token-type'],
    [
      'a refresh token named by its URI',
      { ...answer, token_type: 'urn:ietf:params:oauth:token-type:refresh_token' },
      'invalid_token',
      'introspection-token-type',
    ],
    [
      'a token_type that is no string',
      { ...answer, token_type: ['Bearer'] },
      'invalid_token',
      'introspection-token-type',
    ],
    [
      'access_token spelt with the Kelvin sign (no Unicode folding)',
      { ...answer, token_type: 'access_to\u212Aen' },
      'invalid_token',
      'introspection-token-type',
    ],
  ])('refuses %s', (_case, body, code, why) => {
    let caught: unknown;
    try {
      readAnswer(body, ISSUER);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TokenAuthError);
    expect((caught as TokenAuthError).code).toBe(code);
    expect((caught as TokenAuthError).reason).toBe(why);
  });
});
