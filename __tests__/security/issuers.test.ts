/**
 * Hostile input, part 5: attacks on issuer routing (`issuerBaseURL`; docs/any-issuer.md). The token's `iss` is read
 * before its signature is checked, so it is attacker-controlled: it must never make the package fetch anything from a
 * server that is not configured, never match an issuer loosely, and never let one issuer's key (even under the same
 * `kid`) verify a token that names another. Authorization servers here are loopback servers that record every request.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TokenAuthOptions } from '../../lib';
import { EXPRESS_VERSIONS } from '../fixtures/express';
import { sign } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { expectRefused, getMe, protectedApp, rawToken, type ProtectedApp } from './harness';

const AUDIENCE = 'https://api.example.test';
const KID = 'shared-kid';
const bearer = (token: string) => `Bearer ${token}`;
const keyA = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const keyB = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/** An authorization server publishing OIDC metadata for `{origin}/tenant` and one ES256 key under KID. */
function authorizationServer(key: KeyObject): (req: IncomingMessage, res: ServerResponse, origin: string) => void {
  return (req, res, origin) => {
    if (req.url === '/tenant/.well-known/openid-configuration')
      json(res, 200, { issuer: `${origin}/tenant`, jwks_uri: `${origin}/tenant/keys` });
    else if (req.url === '/tenant/keys')
      json(res, 200, { keys: [{ ...key.export({ format: 'jwk' }), kid: KID, alg: 'ES256', use: 'sig' }] });
    else json(res, 404, {});
  };
}

async function recordingServer(key: KeyObject): Promise<LoopbackServer> {
  const handle = authorizationServer(key);
  const server: LoopbackServer = await startLoopbackServer((req, res) => handle(req, res, server.origin));
  return server;
}

function token(iss: unknown, key: KeyObject = keyA.privateKey, extra: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  return sign({ iss, aud: AUDIENCE, sub: 'client', iat: now, exp: now + 300, scope: 'read', ...extra }, key, 'ES256', {
    kid: KID,
  });
}

describe.each(EXPRESS_VERSIONS)('issuer routing attacks through %s', (_name, express) => {
  let a: LoopbackServer;
  let b: LoopbackServer;
  let app: ProtectedApp;
  let baseA: string;
  let baseB: string;
  beforeAll(async () => {
    [a, b] = await Promise.all([recordingServer(keyA.publicKey), recordingServer(keyB.publicKey)]);
    baseA = `${a.origin}/tenant`;
    baseB = `${b.origin}/tenant`;
    const options: TokenAuthOptions = { issuerBaseURL: [baseA, baseB], audience: AUDIENCE, claims: 'jwt' };
    app = await protectedApp(express, options, ['read']);
  });
  afterAll(() => Promise.all([app.close(), a.close(), b.close()]));
  beforeEach(() => {
    a.reset();
    b.reset();
  });

  it("accepts each configured issuer's genuine token (control)", async () => {
    expect((await getMe(app.server, bearer(token(baseA)))).status).toBe(200);
    expect((await getMe(app.server, bearer(token(baseB, keyB.privateKey)))).status).toBe(200);
  });

  describe('an iss that is not configured: 401, and no server is asked anything', () => {
    // A fresh app per case: nothing discovered yet, so only the pre-match can keep the servers unasked.
    let fresh: ProtectedApp;
    beforeEach(async () => {
      fresh = await protectedApp(express, { issuerBaseURL: [baseA, baseB], audience: AUDIENCE, claims: 'jwt' }, [
        'read',
      ]);
    });
    afterEach(() => fresh.close());

    it.each([
      ['another host', () => 'https://evil.example/tenant'],
      ['a configured origin with another path', () => `${a.origin}/other`],
      ['the configured origin without the path', () => a.origin],
      ['two trailing slashes', () => `${baseA}//`],
      ['a different case', () => baseA.toUpperCase()],
      ['a query string', () => `${baseA}?tenant=b`],
      ['a fragment', () => `${baseA}#x`],
      ['surrounding space', () => ` ${baseA}`],
      ['a NUL after the issuer', () => `${baseA}\u0000`],
      ['the well-known path itself', () => `${baseA}/.well-known/openid-configuration`],
      ['an empty string', () => ''],
    ])('refuses %s', async (_case, iss) => {
      await expectRefused(fresh.server, bearer(token(iss())), 'invalid');
      expect(a.requests + b.requests).toBe(0);
    });

    it.each([
      ['a number', 42],
      ['null', null],
      ['true', true],
      ['an array holding the issuer', ['BASE']],
      ['an object', { href: 'BASE' }],
    ])('refuses a non-string iss: %s', async (_case, iss) => {
      const value = JSON.parse(JSON.stringify(iss).replace('BASE', baseA)) as unknown;
      await expectRefused(fresh.server, bearer(token(value)), 'invalid');
      expect(a.requests + b.requests).toBe(0);
    });

    it('refuses a token without iss', async () => {
      await expectRefused(fresh.server, bearer(token(undefined)), 'invalid');
      expect(a.requests + b.requests).toBe(0);
    });

    it('refuses a duplicated iss member whose last value is not configured (JSON.parse keeps the last)', async () => {
      const now = Math.floor(Date.now() / 1000);
      const payload = `{"iss":"${baseA}","aud":"${AUDIENCE}","iat":${now},"exp":${now + 300},"scope":"read","iss":"https://evil.example"}`;
      await expectRefused(
        fresh.server,
        bearer(rawToken(JSON.stringify({ alg: 'ES256', kid: KID }), payload, keyA.privateKey, 'ES256')),
        'invalid',
      );
      expect(a.requests + b.requests).toBe(0);
    });
  });

  describe('trailing-slash variants of a configured issuer', () => {
    it('refuses an iss with a trailing slash the discovered issuer lacks, after discovery, without a key fetch', async () => {
      await getMe(app.server, bearer(token(baseA))); // discovery done (or already held)
      a.reset();
      await expectRefused(app.server, bearer(token(`${baseA}/`)), 'invalid');
      expect(a.requests).toBe(0);
    });
  });

  describe('colliding kids across issuers', () => {
    it("refuses a token of issuer A presented as issuer B (same kid, B's key does not fit)", async () => {
      await expectRefused(app.server, bearer(token(baseB, keyA.privateKey)), 'invalid');
    });

    it('refuses a token of issuer B presented as issuer A', async () => {
      await expectRefused(app.server, bearer(token(baseA, keyB.privateKey)), 'invalid');
    });
  });
});
