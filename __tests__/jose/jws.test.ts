// Reading a compact JWS: the memo of the last flat JOSE header (a shortcut the hot path takes, measured in bench/)
// must never change an answer.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import type { JwsHeader } from '../../lib/jose/jws';
import { AUDIENCE, b64, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { rejection } from '../fixtures/rejection';

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };
const secretKey = createSecretKey(Buffer.from(SECRET));

describe('the memo of the last flat header', () => {
  it('gives every token its own header object, so a resolver that changes one changes no other', async () => {
    const seen: JwsHeader[] = [];
    const resolver = (header: JwsHeader): KeyObject => {
      seen.push({ ...header });
      header.kid = 'changed';
      header.extra = 'added';
      return secretKey;
    };
    const auth = createTokenAuth({ ...base, key: resolver, algorithms: ['HS256'], cache: false });
    const token = sign(shapeB(NOW), SECRET, 'HS256', { kid: 'k1' });
    for (let i = 0; i < 3; i++) await auth.verify(token);
    await auth.verify(sign(shapeB(NOW), SECRET, 'HS256', { kid: 'k1' }));
    expect(seen).toEqual(Array(4).fill({ alg: 'HS256', typ: 'JWT', kid: 'k1' }));
  });

  it('decodes a header holding objects afresh for every token', async () => {
    const seen: JwsHeader[] = [];
    const resolver = (header: JwsHeader): KeyObject => {
      seen.push(header);
      (header.x5c as string[]).push('changed');
      return secretKey;
    };
    const auth = createTokenAuth({ ...base, key: resolver, algorithms: ['HS256'], cache: false });
    const token = sign(shapeB(NOW), SECRET, 'HS256', { x5c: ['a'] });
    await auth.verify(token);
    await auth.verify(token);
    expect(seen.map((h) => h.x5c)).toEqual([
      ['a', 'changed'],
      ['a', 'changed'],
    ]);
    expect(seen[0]).not.toBe(seen[1]);
  });

  it('never lets the memo answer for a header that differs, even by one character', async () => {
    const auth = createTokenAuth(base);
    const good = sign(shapeB(NOW));
    await auth.verify(good);
    const [, payload, signature] = good.split('.');
    const relabelled = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`;
    expect((await rejection(auth.verify(relabelled))).code).toBe('invalid_token');
    const noTyp = `${b64({ alg: 'HS256' })}.${payload}.${signature}`;
    expect((await rejection(auth.verify(noTyp))).code).toBe('invalid_token');
  });
});
