import path from 'node:path';
import ts from 'typescript';
import { diagnostics } from './fixtures/type-check';

describe('req.auth typing (declaration merging)', () => {
  const consumer = path.join(__dirname, 'types', 'consumer.ts');

  it('a strict consumer type-checks', () => {
    expect(diagnostics(consumer)).toEqual([]);
  });

  it('req.auth is RegisteredClaims | undefined (what every mode guarantees), not any', () => {
    const wrong = `
      import express from 'express';
      import { createTokenAuth } from '../../lib';
      const auth = createTokenAuth({ key: { secret: 'x' }, issuer: false, audience: false });
      express().get('/', auth.requireVerifiedUser(), (req) => { const n: number = req.auth.client_id; return n; });
      express().get('/', auth.requireVerifiedUser(), (req) => { const s: string | undefined = req.auth?.sub; return s; });
    `;
    const errors = diagnostics(consumer, wrong).join('\n');
    expect(errors).toMatch(/possibly 'undefined'/);
    expect(errors).toMatch(/Type 'unknown' is not assignable to type 'number'/);
    // Shape B's sub may be null, and req.auth is typed by what every mode guarantees.
    expect(errors).toMatch(/Type 'string \| null \| undefined' is not assignable to type 'string \| undefined'/);
  });
});

describe('createRedisStore typing', () => {
  it('accepts every client form of node-redis and ioredis (one server, Cluster, Sentinel)', () => {
    expect(diagnostics(path.join(__dirname, 'types', 'redis-clients.ts'))).toEqual([]);
  });
});

describe('honest types: each claims mode guarantees only what it checks', () => {
  const modes = path.join(__dirname, 'types', 'modes.ts');
  const source = ts.sys.readFile(modes) ?? '';

  it('a consumer of every mode type-checks, and each @ts-expect-error in it is needed', () => {
    // An unneeded @ts-expect-error is itself an error (TS2578), so an empty list proves every marked line fails.
    expect(diagnostics(modes)).toEqual([]);
  });

  it('without the markers, each marked line is an error', () => {
    const marked = source.split('\n').filter((line) => /^\s*\/\/ @ts-expect-error/.test(line)).length;
    expect(marked).toBe(14);
    const unmarked = source.replace(/^\s*\/\/ @ts-expect-error.*$/gm, '//');
    expect(diagnostics(modes, unmarked)).toHaveLength(marked);
  });
});

describe('honest types without strictNullChecks (TypeScript without strict, JavaScript with checkJs)', () => {
  const file = path.join(__dirname, 'types', 'non-strict.ts');
  const loose = { strict: false, strictNullChecks: false };

  it('auth.claims(req) and verify() are typed by the mode, so revoke(auth.claims(req)) compiles; each marker is needed', () => {
    expect(diagnostics(file, undefined, loose)).toEqual([]);
  });

  it('without the marker, reading client_id as a string in jwt mode is an error: the claims are JwtClaims, not any', () => {
    const unmarked = (ts.sys.readFile(file) ?? '').replace(/^\s*\/\/ @ts-expect-error.*$/gm, '//');
    const errors = diagnostics(file, unmarked, loose);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/'unknown' is not assignable to type 'string'/);
  });
});

// `store.revoke(claims.jti, claims.exp)` did not compile in claims: 'jwt' mode, the default with `issuerBaseURL`
// (issue 20); `store.revoke(auth.claims(req))` does, in every mode.

describe('revoke() in a logout route, claims: jwt (issuerBaseURL)', () => {
  const file = path.join(__dirname, 'types', 'revoke.ts');

  it('revoke(auth.claims(req)) type-checks, and the old revoke(claims.jti, claims.exp) is still marked as an error', () => {
    expect(diagnostics(file)).toEqual([]);
  });

  it('without the marker, revoke(claims.jti, claims.exp) is an error: jti may be absent in this mode', () => {
    const unmarked = (ts.sys.readFile(file) ?? '').replace(/^\s*\/\/ @ts-expect-error.*$/gm, '//');
    const errors = diagnostics(file, unmarked);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/'string \| undefined' is not assignable to parameter of type 'string'/);
  });
});
