import { ResultCache } from '../../lib/verify/cache';
import { normalizeTyp } from '../../lib/jose/jws';
import { modeHint, typRefused } from '../../lib/token/claim-modes';
import { createKeySource } from '../../lib/keys';
import { resolveOptions } from '../../lib/config/resolve';
import { scopesFromValue } from '../../lib/token/scope-claim';
import { createVerifier } from '../../lib/verify/verifier';
import type { TokenAuthOptions } from '../../lib';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { isThenable } from '../../lib/base/values';

function verifierFor(options: Partial<TokenAuthOptions>) {
  const resolved = resolveOptions({
    key: { secret: SECRET },
    issuer: ISSUER,
    audience: AUDIENCE,
    clock: () => NOW,
    ...options,
  } as TokenAuthOptions<never>);
  const cache = new ResultCache(resolved.cache, resolved.rules.clockTolerance);
  return createVerifier({
    source: createKeySource(resolved),
    rules: resolved.rules,
    claims: resolved.claims,
    clock: resolved.clock,
    cache,
  });
}

describe('static-key verification stays synchronous', () => {
  const token = sign(shapeB(NOW));

  it('without validateClaims, and with a synchronous one', () => {
    for (const options of [{}, { validateClaims: () => true }]) {
      const answer = verifierFor(options).verify(token);
      expect(isThenable(answer)).toBe(false);
      expect(answer).toMatchObject({ iss: ISSUER });
    }
  });

  it('answers with a promise only when validateClaims does, and not again once the verdict is cached', async () => {
    const verifier = verifierFor({ validateClaims: async () => true });
    const first = verifier.verify(token);
    expect(isThenable(first)).toBe(true);
    await expect(first).resolves.toMatchObject({ iss: ISSUER });
    expect(isThenable(verifier.verify(token))).toBe(false);
  });
});

describe('typ (RFC 8725 §3.11)', () => {
  it('is normalised case-insensitively, application/ optional', () => {
    expect(normalizeTyp('Application/AT+JWT')).toBe('at+jwt');
    expect(normalizeTyp('JWT')).toBe('jwt');
    expect(normalizeTyp('application/jwt')).toBe('jwt');
  });

  it('refuses any other kind of JWT, accepts JWT, at+jwt and no typ when no list narrows it', () => {
    for (const typ of ['dpop+jwt', 'logout+jwt', 'secevent+jwt', 'id_token+jwt', 'application/DPoP+JWT', 'x+jwt']) {
      expect(typRefused(typ, undefined)).toBe(true);
    }
    for (const typ of [undefined, 'JWT', 'at+jwt', 'application/at+jwt'])
      expect(typRefused(typ, undefined)).toBe(false);
    expect(typRefused(7, undefined)).toBe(true);
  });

  it('with a list, refuses a missing typ and any value outside it', () => {
    const accepted = new Set(['at+jwt']);
    expect(typRefused('AT+JWT', accepted)).toBe(false);
    expect(typRefused(undefined, accepted)).toBe(true);
    expect(typRefused('JWT', accepted)).toBe(true);
  });
});

describe('scopesFromValue', () => {
  it('reads a space-separated string or an array of strings, and nothing else', () => {
    expect(scopesFromValue('a  b ')).toEqual(['a', 'b']);
    expect(scopesFromValue(['a', 'b'])).toEqual(['a', 'b']);
    for (const value of [undefined, null, 1, true, { a: 1 }, ['a', 1], [['a']]])
      expect(scopesFromValue(value)).toBeUndefined();
  });
});

describe('modeHint', () => {
  it('names the mode only for refusals the mode caused', () => {
    expect(modeHint('strict', 'shape:providers')).toMatch(/claims: 'jwt'/);
    expect(modeHint('strict', 'shape:scopes')).toMatch(/claims: 'jwt'/);
    expect(modeHint('at+jwt', 'at+jwt:client_id')).toMatch(/RFC 9068/);
    expect(modeHint('at+jwt', 'typ')).toMatch(/RFC 9068/);
    expect(modeHint('strict', 'signature')).toBeUndefined();
    expect(modeHint('jwt', 'aud')).toBeUndefined();
    expect(modeHint('jwt', undefined)).toBeUndefined();
  });
});
