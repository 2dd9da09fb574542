import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { isThenable } from '../../lib/base/values';
import { resolveOptions } from '../../lib/config/resolve';
import { createTokenSource } from '../../lib/remote';
import { ResultCache } from '../../lib/verify/cache';
import { createVerifier } from '../../lib/verify/verifier';
import { AUDIENCE, ISSUER, NOW, rsaKeys, SECRET, shapeB, sign } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };
const ed25519 = generateKeyPairSync('ed25519');
const ed448 = generateKeyPairSync('ed448');
const rsa = rsaKeys();

function verifierFor(options: Partial<TokenAuthOptions>) {
  const resolved = resolveOptions({ ...base, ...options } as TokenAuthOptions<never>);
  const cache = new ResultCache(resolved.cache, resolved.rules.clockTolerance);
  return createVerifier({
    source: createTokenSource(resolved),
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

describe('verify(token)', () => {
  it('resolves with the claims exactly as signed', async () => {
    const claims = shapeB(NOW, { custom: [1, 2, 3] });
    await expect(createTokenAuth(base).verify(sign(claims))).resolves.toEqual(claims);
  });

  it('applies the extraction rules to a token handed over directly', async () => {
    const auth = createTokenAuth({ ...base, maxTokenLength: 600 });
    for (const bad of ['', ' ', 'a b.c.d', 'a+b.c.d', 'x'.repeat(601), 42 as unknown as string]) {
      const err = await rejection(auth.verify(bad));
      expect({ status: err.status, code: err.code }).toEqual({ status: 401, code: 'invalid_token' });
    }
  });

  it('carries the RFC 6750 challenge on its errors', async () => {
    const err = await rejection(createTokenAuth(base).verify(sign(shapeB(NOW - 3600))));
    expect(err.code).toBe('token_expired');
    expect(err.headers['WWW-Authenticate']).toBe(
      'Bearer realm="api", error="invalid_token", error_description="Access token expired"',
    );
    expect(err.toJSON()).toEqual({ status: 'error', message: 'Access token expired' });
  });

  it('asks isRevoked with req undefined', async () => {
    const asked: unknown[] = [];
    const auth = createTokenAuth({
      ...base,
      isRevoked: (_claims, req) => {
        asked.push(req);
        return true;
      },
    });
    const err = await rejection(auth.verify(sign(shapeB(NOW))));
    expect(err.code).toBe('invalid_token');
    expect(asked).toEqual([undefined]);
  });

  it('reports failures to onError with req undefined', async () => {
    const seen: Array<[string, unknown]> = [];
    const auth = createTokenAuth({
      ...base,
      onError: (err, req) => {
        seen.push([err.code, req]);
      },
    });
    await rejection(auth.verify('a.b.c'));
    expect(seen).toEqual([['invalid_token', undefined]]);
  });
});

describe('key and algorithm fit at verification (resolver keys)', () => {
  it('never lets an Ed25519 key verify an RS256 token', async () => {
    const verifier = createTokenAuth({ ...base, key: () => ed25519.publicKey, algorithms: ['RS256', 'EdDSA'] });
    expect(await rejection(verifier.verify(sign(shapeB(NOW), rsa.privateKey, 'RS256')))).toMatchObject({
      code: 'invalid_token',
      reason: 'key-mismatch',
    });
  });

  it('never lets an RSA key verify an EdDSA token', async () => {
    const verifier = createTokenAuth({ ...base, key: () => rsa.publicKey, algorithms: ['RS256', 'EdDSA'] });
    expect(await rejection(verifier.verify(sign(shapeB(NOW), ed25519.privateKey, 'EdDSA')))).toMatchObject({
      code: 'invalid_token',
      reason: 'key-mismatch',
    });
  });

  it('never lets an Ed448 key verify an Ed25519 token', async () => {
    const verifier = createTokenAuth({ ...base, key: () => ed448.publicKey, algorithms: ['Ed25519'] });
    expect(await rejection(verifier.verify(sign(shapeB(NOW), ed25519.privateKey, 'Ed25519')))).toMatchObject({
      code: 'invalid_token',
      reason: 'key-mismatch',
    });
  });
});
