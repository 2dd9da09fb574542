// The test issuer's token endpoint under hostile input: every refusal an RFC 6749 §5.2 / RFC 8693 §2.2.2 error
// answer (status, `error`, no-store), never the request's own text, and no token issued.
import { randomUUID } from 'node:crypto';
import { createTestIssuer, signToken, type TestIssuer } from '../../lib/testing';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  text: string;
  headers: Headers;
}

/** One request to the endpoint, answered whole. */
async function post(issuer: TestIssuer, form: Record<string, string | string[]> | string, init: RequestInit = {}) {
  const body =
    typeof form === 'string'
      ? form
      : new URLSearchParams(
          Object.entries(form).flatMap(([name, value]) => [value].flat().map((v) => [name, v] as [string, string])),
        ).toString();
  const answer = await fetch(issuer.tokenEndpoint as string, {
    method: 'POST',
    body,
    ...init,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(init.headers as Record<string, string>) },
  });
  const text = await answer.text();
  return { status: answer.status, body: JSON.parse(text) as Record<string, unknown>, text, headers: answer.headers };
}

describe('the test issuer token endpoint (RFC 6749 §3.2, RFC 8693 §2)', () => {
  let issuer: TestIssuer;
  let basic: string;
  let subject: string;
  const exchange = (extra: Record<string, string | string[]> = {}) => ({
    grant_type: GRANT,
    subject_token: subject,
    subject_token_type: ACCESS,
    audience: 'ci.test',
    ...extra,
  });
  const asClient = { headers: { Authorization: '' } };

  beforeAll(async () => {
    issuer = await createTestIssuer({ alg: 'ES256', exchange: { targets: { 'ci.test': ['read'] } } });
    const { clientId, clientSecret } = issuer.options.tokenExchange as { clientId: string; clientSecret: string };
    basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    asClient.headers.Authorization = basic;
    subject = issuer.sign();
  });
  afterAll(() => issuer.close());

  /** The answer is an RFC 6749 §5.2 error that does not echo the subject token, and is never cached. */
  function expectRefused(answer: Answer, status: number, error: string) {
    expect([answer.status, answer.body.error]).toEqual([status, error]);
    expect(typeof answer.body.error_description).toBe('string');
    expect(answer.body.access_token).toBeUndefined();
    expect(answer.text).not.toContain(subject);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('content-type')).toBe('application/json');
  }

  it('issues a token for a well-formed request (the baseline the refusals below differ from)', async () => {
    const answer = await post(issuer, exchange({ scope: 'read' }), asClient);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ token_type: 'Bearer', issued_token_type: ACCESS, scope: 'read' });
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('pragma')).toBe('no-cache');
  });

  describe('the request itself', () => {
    it('answers a GET 405 with Allow: POST', async () => {
      const answer = await fetch(issuer.tokenEndpoint as string);
      expect([answer.status, answer.headers.get('allow')]).toEqual([405, 'POST']);
      expect(await answer.json()).toMatchObject({ error: 'invalid_request' });
    });

    it('refuses a body that is not a form, and a form over 64 KiB (413)', async () => {
      const json = await post(issuer, JSON.stringify(exchange()), {
        headers: { ...asClient.headers, 'Content-Type': 'application/json' },
      });
      expectRefused(json, 400, 'invalid_request');
      expectRefused(await post(issuer, exchange({ scope: 'a'.repeat(70_000) }), asClient), 413, 'invalid_request');
    });

    it('refuses a parameter sent twice (RFC 6749 §3.2), but takes audience and resource as lists', async () => {
      expectRefused(
        await post(issuer, exchange({ subject_token: [subject, subject] }), asClient),
        400,
        'invalid_request',
      );
      expectRefused(
        await post(issuer, `${new URLSearchParams(exchange())}&grant_type=${GRANT}`, asClient),
        400,
        'invalid_request',
      );
      const twice = await post(issuer, exchange({ audience: ['ci.test', 'ci.test'] }), asClient);
      expect(twice.status).toBe(200);
    });

    it('refuses a missing grant_type (invalid_request) and another grant (unsupported_grant_type)', async () => {
      expectRefused(await post(issuer, exchange({ grant_type: '' }), asClient), 400, 'invalid_request');
      const other = await post(issuer, exchange({ grant_type: 'client_credentials' }), asClient);
      expectRefused(other, 400, 'unsupported_grant_type');
      const proto = await post(issuer, exchange({ grant_type: '__proto__' }), asClient);
      expectRefused(proto, 400, 'unsupported_grant_type');
    });
  });

  describe('client authentication (RFC 6749 §2.3, §5.2)', () => {
    it('answers 401 invalid_client with a Basic challenge without credentials, or with wrong ones', async () => {
      for (const headers of [
        {} as Record<string, string>,
        { Authorization: 'Basic dGVzdC1jbGllbnQ6d3Jvbmc=' },
        { Authorization: 'Bearer x' },
      ]) {
        const answer = await post(issuer, exchange(), { headers });
        expectRefused(answer, 401, 'invalid_client');
        expect(answer.headers.get('www-authenticate')).toBe('Basic realm="test-issuer"');
      }
    });

    it('refuses two methods in one request (invalid_request) and a method it is not registered for (401)', async () => {
      const { clientId, clientSecret } = issuer.options.tokenExchange as { clientId: string; clientSecret: string };
      const both = await post(issuer, exchange({ client_secret: clientSecret }), asClient);
      expectRefused(both, 400, 'invalid_request');
      const posted = await post(issuer, exchange({ client_id: clientId, client_secret: clientSecret }));
      expectRefused(posted, 401, 'invalid_client');
      const mismatch = await post(issuer, exchange({ client_id: 'someone-else' }), asClient);
      expectRefused(mismatch, 400, 'invalid_request');
    });

    it('private_key_jwt: refuses an assertion replayed, for another audience, or signed by another key', async () => {
      const jwt = await createTestIssuer({ exchange: { authMethod: 'private_key_jwt' } });
      try {
        const { clientId, privateKey } = jwt.options.tokenExchange as { clientId: string; privateKey: never };
        const now = Math.floor(Date.now() / 1000);
        const claims = (extra = {}) => ({
          iss: clientId,
          sub: clientId,
          aud: jwt.tokenEndpoint,
          jti: randomUUID(),
          iat: now,
          exp: now + 60,
          ...extra,
        });
        const withAssertion = (assertion: string) => ({
          grant_type: GRANT,
          subject_token: jwt.sign(),
          subject_token_type: ACCESS,
          audience: 'ci.test',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        });
        const good = signToken(claims(), privateKey, 'ES256');
        expect((await post(jwt, withAssertion(good))).status).toBe(200);
        expectRefused(await post(jwt, withAssertion(good)), 401, 'invalid_client');
        const elsewhere = signToken(claims({ aud: 'https://other.example/token' }), privateKey, 'ES256');
        expectRefused(await post(jwt, withAssertion(elsewhere)), 401, 'invalid_client');
        const other = (await createTestIssuer({ alg: 'ES256' })).sign(claims());
        expectRefused(await post(jwt, withAssertion(other)), 401, 'invalid_client');
        const long = signToken(claims({ exp: now + 3600 }), privateKey, 'ES256');
        expectRefused(await post(jwt, withAssertion(long)), 401, 'invalid_client');
        const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}.`;
        expectRefused(await post(jwt, withAssertion(none)), 401, 'invalid_client');
      } finally {
        await jwt.close();
      }
    });
  });

  describe('the subject token (RFC 8693 §2.2.2: invalid_request)', () => {
    it.each([
      ['without a subject token', () => ({ subject_token: '' })],
      [
        'naming another subject token type',
        () => ({ subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }),
      ],
      ['with an actor token', () => ({ actor_token: subject, actor_token_type: ACCESS })],
      ['asking another token type', () => ({ requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' })],
      ['whose subject token is not a JWT', () => ({ subject_token: 'opaque-token' })],
    ])('refuses a request %s', async (_case, extra) => {
      expectRefused(await post(issuer, exchange(extra()), asClient), 400, 'invalid_request');
    });

    it('refuses a token of another issuer, a forged, unsigned, expired or not-yet-valid one, and one for another API', async () => {
      const now = Math.floor(Date.now() / 1000);
      // Same issuer name, its own key: what a forger with a key of its own makes.
      const stranger = await createTestIssuer({ alg: 'ES256', issuer: issuer.claims().iss as string });
      const [head, payload] = subject.split('.');
      const tokens = [
        stranger.sign(),
        `${head}.${payload}.${subject.split('.')[2].split('').reverse().join('')}`,
        `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`,
        issuer.sign({ exp: now - 10 }),
        issuer.sign({ nbf: now + 600 }),
        issuer.sign({ iss: 'https://other.test' }),
        issuer.sign({ aud: 'ci.test' }),
        issuer.sign({}, { alg: 'HS256' }),
      ];
      for (const token of tokens) {
        const answer = await post(issuer, exchange({ subject_token: token }), asClient);
        expectRefused(answer, 400, 'invalid_request');
        expect(answer.text).not.toContain(token);
      }
    });
  });

  describe('the target and scope (RFC 8693 §2.1, RFC 8707 §2)', () => {
    it('refuses no target, two targets, a resource with a fragment or not absolute, or one outside targets: invalid_target', async () => {
      const cases: Array<Record<string, string | string[]>> = [
        { audience: [] },
        { audience: ['ci.test', 'cd.test'] },
        { audience: [], resource: 'https://ci.test/api#x' },
        { audience: [], resource: 'ci/api' },
        { audience: 'cd.test' },
      ];
      for (const extra of cases) {
        expectRefused(await post(issuer, exchange(extra), asClient), 400, 'invalid_target');
      }
    });

    it('refuses a malformed scope, and one the client may not ask for the target: invalid_scope', async () => {
      expectRefused(await post(issuer, exchange({ scope: 'read "write"' }), asClient), 400, 'invalid_scope');
      expectRefused(await post(issuer, exchange({ scope: 'read write' }), asClient), 400, 'invalid_scope');
    });
  });

  it('counts every request it answered', () => {
    expect(issuer.tokenRequests).toBeGreaterThan(20);
  });
});
