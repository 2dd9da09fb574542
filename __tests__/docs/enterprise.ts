// Drivers of docs/enterprise.md's code blocks (see __tests__/fixtures/doc-run.ts): each runs against loopback
// servers in the vendor's shape: the Entra ID-shaped server of __tests__/fixtures/entra-server.ts, and servers
// publishing one issuer per path (Okta's /oauth2/<id>, Keycloak's /realms/<realm>), each path with its own key.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { call, type DocDrivers } from '../fixtures/doc-run';
import { startEntraServer, TENANT_A, TENANT_B } from '../fixtures/entra-server';
import { sign } from '../fixtures/issuer';
import { json, startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';

const ENTRA = 'https://login.microsoftonline.com';

/** A server publishing an issuer at each of `paths` (`<origin><path>`), each with its own ES256 key. */
interface PathIssuers {
  readonly origin: string;
  readonly server: LoopbackServer;
  issuer(path: string): string;
  /** A token of the issuer at `path`, signed with the key of `signer` (default: that path's). */
  token(path: string, claims: Record<string, unknown>, signer?: string): string;
  close(): Promise<void>;
}

async function startPathIssuers(paths: string[]): Promise<PathIssuers> {
  const keys = new Map<string, { privateKey: KeyObject; publicKey: KeyObject }>(
    paths.map((path) => [path, generateKeyPairSync('ec', { namedCurve: 'prime256v1' })]),
  );
  const kid = (path: string) => `key-of-${path.split('/').pop()}`;
  // Every path's key under one kid naming the issuer: a token signed by another path's key never fits.
  const server: LoopbackServer = await startLoopbackServer((req, res) => {
    const url = req.url ?? '';
    for (const [path, key] of keys) {
      if (url === `${path}/.well-known/openid-configuration`)
        return json(res, 200, { issuer: `${server.origin}${path}`, jwks_uri: `${server.origin}${path}/certs` });
      if (url === `${path}/certs`)
        return json(res, 200, { keys: [{ ...key.publicKey.export({ format: 'jwk' }), kid: 'shared', alg: 'ES256' }] });
    }
    json(res, 404, {});
  });
  return {
    origin: server.origin,
    server,
    issuer: (path) => `${server.origin}${path}`,
    token(path, claims, signer = path) {
      const now = Math.floor(Date.now() / 1000);
      const payload = { iss: `${server.origin}${path}`, iat: now, exp: now + 300, sub: kid(path), ...claims };
      return sign(payload, keys.get(signer)?.privateKey as KeyObject, 'ES256', { kid: 'shared' });
    },
    close: () => server.close(),
  };
}

export const drivers: DocDrivers = {
  // Tenant A's token → 200 with its tid and oid; discovery done before listening, so the request fetches nothing;
  // tenant B's, a tid that is not the tenant of iss, no tid → 401.
  'enterprise-entra-multi-tenant': {
    async run(t) {
      const entra = t.own(await startEntraServer());
      const app = await t.serve({ replace: { [ENTRA]: entra.origin } });
      const loaded = entra.server.requests;
      expect(loaded).toBe(2);
      const good = await call(`${app.origin}/orders`, { token: entra.token(TENANT_A) });
      expect(good.status).toBe(200);
      expect(good.body).toEqual({ tenant: TENANT_A, user: 'b9b0e2f5-3f1a-4c0e-9d65-3a1f0f5e7c21' });
      expect(entra.server.requests).toBe(loaded);
      for (const token of [
        entra.token(TENANT_B),
        entra.token(TENANT_B, { tid: TENANT_A }),
        entra.token(TENANT_A, { tid: undefined }),
        entra.token(TENANT_A, { iss: entra.template }),
      ])
        expect((await call(`${app.origin}/orders`, { token })).status).toBe(401);
    },
  },
  // aud = the client ID → 200; aud = the resource URL → 401 naming the resource's metadata; the document names it.
  'enterprise-entra-single-tenant': {
    async run(t) {
      const entra = t.own(await startEntraServer());
      const app = await t.serve({ replace: { [ENTRA]: entra.origin } });
      const good = await call(`${app.origin}/orders`, { token: entra.token(TENANT_A) });
      expect(good.status).toBe(200);
      expect(good.body).toEqual({ tenant: TENANT_A });
      const wrongAud = await call(`${app.origin}/orders`, {
        token: entra.token(TENANT_A, { aud: 'https://api.contoso.com/orders' }),
      });
      expect(wrongAud.status).toBe(401);
      expect(wrongAud.headers.get('www-authenticate')).toContain(
        'resource_metadata="https://api.contoso.com/.well-known/oauth-protected-resource/orders"',
      );
      expect((await call(`${app.origin}/orders`, { token: entra.token(TENANT_B) })).status).toBe(401);
      const metadata = await call(`${app.origin}/.well-known/oauth-protected-resource/orders`);
      expect(metadata.status).toBe(200);
      expect(metadata.body).toMatchObject({
        resource: 'https://api.contoso.com/orders',
        authorization_servers: [entra.issuer(TENANT_A)],
      });
    },
  },
  // A v1.0 token of tenant A → 200; of tenant B, or a v2.0 token → 401.
  'enterprise-entra-v1': {
    async run(t) {
      const entra = t.own(await startEntraServer());
      const app = await t.serve({ replace: { [ENTRA]: entra.origin } });
      const good = await call(`${app.origin}/orders`, { token: entra.v1Token(TENANT_A) });
      expect(good.status).toBe(200);
      expect(good.body).toEqual({ tenant: TENANT_A });
      expect((await call(`${app.origin}/orders`, { token: entra.v1Token(TENANT_B) })).status).toBe(401);
      const v2 = entra.token(TENANT_A, { aud: 'api://orders' });
      expect((await call(`${app.origin}/orders`, { token: v2 })).status).toBe(401);
    },
  },
  // Each org's token → 200; a token of acme's org authorization server (iss without /oauth2/…) → 401.
  'enterprise-okta': {
    async run(t) {
      const acme = t.own(await startPathIssuers(['/oauth2/default']));
      const globex = t.own(await startPathIssuers(['/oauth2/aus1a2b3c4d5e6f7g8h9']));
      const app = await t.serve({
        replace: { 'https://acme.okta.com': acme.origin, 'https://globex.okta.com': globex.origin },
      });
      const claims = { aud: 'api://orders', scp: ['orders:read'] };
      for (const [org, path] of [
        [acme, '/oauth2/default'],
        [globex, '/oauth2/aus1a2b3c4d5e6f7g8h9'],
      ] as const) {
        const res = await call(`${app.origin}/orders`, { token: org.token(path, claims) });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ issuer: org.issuer(path) });
      }
      const orgServer = acme.token('/oauth2/default', { ...claims, iss: acme.origin });
      expect((await call(`${app.origin}/orders`, { token: orgServer })).status).toBe(401);
    },
  },
  // Each realm's token → 200; a token naming realm acme signed with globex's key → 401.
  'enterprise-keycloak': {
    async run(t) {
      const sso = t.own(await startPathIssuers(['/realms/acme', '/realms/globex']));
      const app = await t.serve({ replace: { 'https://sso.example.com': sso.origin } });
      const claims = { aud: 'orders-api', scope: 'orders profile' };
      for (const realm of ['/realms/acme', '/realms/globex']) {
        const res = await call(`${app.origin}/orders`, { token: sso.token(realm, claims) });
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ issuer: sso.issuer(realm) });
      }
      const crossed = sso.token('/realms/acme', claims, '/realms/globex');
      expect((await call(`${app.origin}/orders`, { token: crossed })).status).toBe(401);
    },
  },
  // Up: 204 (and the next request fetches nothing). Down (connections refused): 503, and again 503 within the cooldown.
  'enterprise-readiness': {
    async run(t) {
      const entra = t.own(await startEntraServer());
      const up = await t.serve({ replace: { [ENTRA]: entra.origin } });
      expect((await call(`${up.origin}/readyz`)).status).toBe(204);
      const loaded = entra.server.requests;
      expect((await call(`${up.origin}/readyz`)).status).toBe(204);
      expect(entra.server.requests).toBe(loaded);
      const gone = t.own(await startLoopbackServer(() => undefined));
      await gone.stop();
      const down = await t.serve({ replace: { [ENTRA]: gone.origin } });
      expect((await call(`${down.origin}/readyz`)).status).toBe(503);
      expect((await call(`${down.origin}/readyz`)).status).toBe(503);
    },
  },
};
