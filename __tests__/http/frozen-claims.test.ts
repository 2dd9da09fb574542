import path from 'node:path';
import ts from 'typescript';
import request from 'supertest';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { appWith, EXPRESS_VERSIONS } from '../fixtures/express';
import { AUDIENCE, ISSUER, NOW, SECRET, shapeB, sign } from '../fixtures/issuer';
import { diagnostics } from '../fixtures/type-check';

// Issue 19 item 8: the cache hands one claims object to every request with the same token, so a route that
// changed `req.auth` changed the next request's verdict (a scope pushed → 403 became 200; `jti` deleted → a revoked
// token passed). Claims are deep-frozen when they become shared (cached, or handed to requests waiting on one
// verification): a later decision always reads what was signed.

const base: TokenAuthOptions = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE, clock: () => NOW };

/** Try one change to the claims; the name of what it threw, or 'changed' when nothing stopped it. */
function attempt(change: () => void): string {
  try {
    change();
    return 'changed';
  } catch (err) {
    return (err as Error).name;
  }
}

describe.each(EXPRESS_VERSIONS)('claims on req.auth cannot change later verdicts, through %s', (_name, express) => {
  function app(revoked: Set<string>) {
    const auth = createTokenAuth({ ...base, isRevoked: (claims) => revoked.has(claims.jti as string) });
    const server = appWith(express, auth, {
      routes: (made) => {
        made.get('/me', auth.requireVerifiedUser(), (req, res) => {
          res.json({ jti: req.auth?.jti });
        });
        made.get('/admin', auth.requireVerifiedUser(['admin']), (_req, res) => {
          res.json({ admin: true });
        });
        // A careless (or compromised) route that edits the claims it was handed.
        made.get('/edit', auth.requireVerifiedUser(), (req, res) => {
          const claims = req.auth as unknown as {
            scopes: string[];
            jti?: string;
            providers: Record<string, unknown>;
            [k: string]: unknown;
          };
          res.json({
            push: attempt(() => claims.scopes.push('admin')),
            remove: attempt(() => delete claims.jti),
            nested: attempt(() => delete claims.providers.google),
            add: attempt(() => (claims.extra = 1)),
            frozen: Object.isFrozen(claims) && Object.isFrozen(claims.scopes) && Object.isFrozen(claims.providers),
          });
        });
      },
    });
    return { auth, server };
  }
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('a scope pushed onto req.auth.scopes is refused, and the next request with that token is still 403 on /admin', async () => {
    const { auth, server } = app(new Set());
    const claims = shapeB(NOW, { scopes: ['identify'] });
    const token = sign(claims);
    await request(server).get('/me').set(bearer(token)).expect(200);
    await request(server).get('/me').set(bearer(token)).expect(200); // second sighting: the claims are cached now
    const edit = await request(server).get('/edit').set(bearer(token)).expect(200);
    await request(server).get('/admin').set(bearer(token)).expect(403);
    expect(edit.body).toEqual({
      push: 'TypeError',
      remove: 'TypeError',
      nested: 'TypeError',
      add: 'TypeError',
      frozen: true,
    });
    const me = await request(server).get('/me').set(bearer(token)).expect(200);
    expect(me.body).toEqual({ jti: claims.jti });
    expect(auth.stats().hits).toBeGreaterThanOrEqual(3); // every request after the second was a cache hit
  });

  it('a jti deleted from req.auth does not let the token pass once it is revoked', async () => {
    const revoked = new Set<string>();
    const { server } = app(revoked);
    const claims = shapeB(NOW);
    const token = sign(claims);
    await request(server).get('/me').set(bearer(token)).expect(200);
    await request(server).get('/edit').set(bearer(token)).expect(200);
    revoked.add(claims.jti as string);
    await request(server).get('/me').set(bearer(token)).expect(401);
  });

  it("freezes the claims when they become shared: a first sighting's claims are that request's own, and its changes reach no other request", async () => {
    const { auth, server } = app(new Set());
    const token = sign(shapeB(NOW, { scopes: ['identify'] }));
    // First sighting: verified for this request alone and not cached (the admission rule), so not frozen: the
    // cold path pays nothing for it, and nothing else will ever read this object.
    const first = await request(server).get('/edit').set(bearer(token)).expect(200);
    expect(first.body).toEqual({
      push: 'changed',
      remove: 'changed',
      nested: 'changed',
      add: 'changed',
      frozen: false,
    });
    expect(auth.stats().size).toBe(0);
    // The second sighting is verified again from the token and cached: what /edit did above is not there.
    await request(server).get('/admin').set(bearer(token)).expect(403);
    const later = await request(server).get('/edit').set(bearer(token)).expect(200);
    expect(later.body).toEqual({
      push: 'TypeError',
      remove: 'TypeError',
      nested: 'TypeError',
      add: 'TypeError',
      frozen: true,
    });
    await request(server).get('/admin').set(bearer(token)).expect(403);
  });
});

describe('verify() hands out frozen claims', () => {
  it('a change to what verify() resolved with throws, and the next verify() of the token answers as signed', async () => {
    const auth = createTokenAuth(base);
    const claims = shapeB(NOW, { scopes: ['identify'] });
    const token = sign(claims);
    await auth.verify(token);
    const held = (await auth.verify(token)) as unknown as { scopes: string[]; jti?: string };
    expect(attempt(() => held.scopes.push('admin'))).toBe('TypeError');
    expect(attempt(() => delete held.jti)).toBe('TypeError');
    const again = await auth.verify(token);
    expect(again.scopes).toEqual(['identify']);
    expect(again.jti).toBe(claims.jti);
  });
});

describe('the types say so: req.auth, auth.claims(req) and verify() are read-only', () => {
  const file = path.join(__dirname, '..', 'types', 'frozen.ts');

  it('each marked write is an error, and nothing else is', () => {
    const source = ts.sys.readFile(file) ?? '';
    expect(diagnostics(file, source)).toEqual([]); // an unneeded @ts-expect-error would be an error itself
    const unmarked = source.replace(/^\s*\/\/ @ts-expect-error.*$/gm, '//');
    const errors = diagnostics(file, unmarked);
    expect(errors).toHaveLength(3);
    for (const error of errors) expect(error).toMatch(/read-only|only permits reading/);
  });
});
