import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };

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
