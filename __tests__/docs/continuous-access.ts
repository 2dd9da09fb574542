// Drivers of docs/continuous-access.md's code blocks (see __tests__/fixtures/doc-run.ts): the Keycloak push set-up
// against the loopback transmitter in Keycloak's formats and a real redis-server; Back-Channel Logout against
// oidc-provider's own feature.
import { call, excerpt, type DocDrivers } from '../fixtures/doc-run';
import { startLogoutProvider } from '../fixtures/logout-provider';
import { until } from '../fixtures/loopback-server';
import { freePort, startRedisServer } from '../fixtures/redis-server';
import { CAEP, keycloakSubjects, RISC, startSsfTransmitter } from '../fixtures/ssf-transmitter';

const TOKEN_AUTH = 'declare const auth: TokenAuth;\n';

export const drivers: DocDrivers = {
  // The page's app on the realm: its stream created with this router's URL and verified; a user's token accepted,
  // then refused once Keycloak pushes the logout of its session; another user's accepted throughout.
  'continuous-access-push': {
    async run(t) {
      const redis = t.own(await startRedisServer());
      const transmitter = t.own(await startSsfTransmitter({ audience: 'orders-api' }));
      const port = await freePort();
      const app = await t.serve({
        port,
        replace: {
          "'https://keycloak.example.com/realms/acme'": `'${transmitter.issuer}'`,
          "'https://api.example.com/security-events'": `'http://127.0.0.1:${port}/security-events'`,
          "clientId: 'orders-api-ssf'": `clientId: '${transmitter.clientId}'`,
        },
        env: { REDIS_URL: redis.url, SSF_PUSH_TOKEN: 'push-secret', SSF_CLIENT_SECRET: transmitter.clientSecret },
      });
      await until(() => app.stdout().includes('security events: stream verified'), 'the stream verified', 1000);
      const now = Math.floor(Date.now() / 1000);
      const token = (sub: string, sid: string) =>
        transmitter.sign(
          { iss: transmitter.issuer, aud: 'orders-api', sub, sid, iat: now - 5, exp: now + 600 },
          { header: { typ: 'JWT' } },
        );
      const [alice, bob] = [token('alice', 'session-a'), token('bob', 'session-b')];
      expect((await call(`${app.origin}/orders`, { token: alice })).body).toEqual({ user: 'alice' });
      const pushed = await transmitter.deliver(
        transmitter.set(`${CAEP}session-revoked`, keycloakSubjects.session(transmitter.issuer, 'alice', 'session-a'), {
          reason_admin: { en: 'User logout' },
        }),
      );
      expect(pushed?.status).toBe(202);
      await until(
        async () => (await call(`${app.origin}/orders`, { token: alice })).status === 401,
        'the session refused',
        200,
      );
      expect((await call(`${app.origin}/orders`, { token: bob })).status).toBe(200);
      await transmitter.deliver(
        transmitter.set(`${RISC}account-disabled`, keycloakSubjects.user(transmitter.issuer, 'bob')),
      );
      await until(
        async () => (await call(`${app.origin}/orders`, { token: bob })).status === 401,
        'the account refused',
        200,
      );
    },
  },
  'continuous-access-poll': excerpt(TOKEN_AUTH),
  // The page's app registered at oidc-provider: a user logs in, calls the API, logs out at the provider, and the
  // provider's logout token makes the API refuse that token.
  'continuous-access-backchannel': {
    async run(t) {
      const port = await freePort();
      const op = t.own(
        await startLogoutProvider({
          logoutUri: `http://127.0.0.1:${port}/backchannel-logout`,
          resource: 'https://api.example.com',
        }),
      );
      const app = await t.serve({ port, replace: { "'https://op.example.com'": `'${op.issuer}'` } });
      const session = await op.login('alice');
      expect((await call(`${app.origin}/orders`, { token: session.accessToken })).body).toEqual({ user: 'alice' });
      await session.logout();
      expect(await op.notices()).toEqual({ success: 1, error: 0 });
      expect((await call(`${app.origin}/orders`, { token: session.accessToken })).status).toBe(401);
    },
  },
  'continuous-access-oidc-provider': excerpt(`declare class Provider {
  constructor(
    issuer: string,
    configuration: { extraTokenClaims?: (ctx: unknown, token: { sid?: string }) => unknown; [option: string]: unknown },
  );
}
`),
  'continuous-access-actions': excerpt(TOKEN_AUTH),
};
