/**
 * OpenID Connect Back-Channel Logout 1.0 end to end: oidc-provider's own backchannelLogout feature, a user logged in
 * twice through its login pages, one session ended through its end_session flow; the provider posts its logout token
 * to events.router(), which stores a session rule: that session's token is refused, the other session's is not.
 */
import express from 'express';
import { createTokenAuth, type SecurityEvents, type TokenAuth } from '../../lib';
import { listen, type Listening } from '../fixtures/listen';
import { startLogoutProvider, type LogoutProvider } from '../fixtures/logout-provider';
import { recordingStore, type RecordingStore } from '../fixtures/rule-store';

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;

describe("Back-Channel Logout from oidc-provider's own feature", () => {
  let op: LogoutProvider;
  let app: Listening;
  let auth: TokenAuth;
  let events: SecurityEvents;
  let store: RecordingStore;

  beforeAll(async () => {
    const server = express();
    let router: express.RequestHandler = (_req, _res, next) => next();
    server.use('/security-events', (req, res, next) => router(req, res, next));
    server.get(
      '/me',
      (req, res, next) => auth.requireVerifiedUser()(req, res, next),
      (req, res) => {
        res.json({ sub: req.auth?.sub });
      },
    );
    app = await listen(server);
    op = await startLogoutProvider({ logoutUri: `${app.origin}/security-events` });
    store = recordingStore();
    auth = createTokenAuth({
      issuerBaseURL: op.issuer,
      audience: op.resource,
      claims: 'jwt',
      revocation: store as never,
      maxLifetime: '1h',
    });
    events = auth.securityEvents({ backchannelLogout: { issuer: op.issuer, clientId: op.clientId } });
    router = events.router();
  });

  afterAll(async () => {
    await events.close();
    auth.close();
    await op.close();
    await app.close();
  });

  it('stores a session rule for the session the provider ended, with its sub, and answers the provider 200', async () => {
    const first = await op.login('alice');
    const second = await op.login('alice');
    const [one, two] = [claimsOf(first.accessToken), claimsOf(second.accessToken)];
    expect(typeof one.sid).toBe('string');
    expect(one.sid).not.toBe(two.sid);
    await first.logout();
    expect(await op.notices()).toEqual({ success: 1, error: 0 });
    expect(store.stored).toEqual([
      expect.objectContaining({ rule: 'session', iss: op.issuer, sid: one.sid, sub: 'alice' }),
    ]);
    expect(events.stats().backchannelLogout).toMatchObject({ received: 1, applied: 1 });
  });
});
