/**
 * RFC 9701 signed introspection answers through `verify()` (docs/introspection.md, "Signed answers"): checked with the
 * authorization server's keys, believed only while fresh and only once, `introspection.signed` ('preferred' by
 * default, 'required', false), and an `aud` that names this resource server by its client id, `audience` or
 * `resource`. Against a real oidc-provider 9 (a loopback proxy in front of its endpoint alters, captures and replays
 * answers) and a second server that signs its answers for the token's audience
 * (__tests__/fixtures/signing-authorization-server.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createTokenAuth, type TokenAuth, type TokenAuthError, type TokenAuthOptions } from '../../lib';
import { startAuthorizationServer, type AuthorizationServer } from '../fixtures/authorization-server';
import { forwardIntrospection, type Answer } from '../fixtures/introspection-proxy';
import { startLoopbackServer, type LoopbackServer } from '../fixtures/loopback-server';
import { rejection } from '../fixtures/rejection';
import {
  startSigningAuthorizationServer,
  type SigningAuthorizationServer,
} from '../fixtures/signing-authorization-server';

const JWT_TYPE = 'application/token-introspection+jwt';
let as: AuthorizationServer;
let proxy: LoopbackServer;
/** What the proxy does to the provider's answer, given the request's form. */
let alter: (answer: Answer, form: URLSearchParams) => Answer;
const accepts: string[] = [];
const opened: TokenAuth[] = [];
const errors: TokenAuthError[] = [];

/** Forward to the provider's introspection endpoint, then alter its answer. */
function forward(req: IncomingMessage, res: ServerResponse): void {
  accepts.push(String(req.headers.accept));
  forwardIntrospection(req, res, `${as.issuer}/token/introspection`, (answer, form) => alter(answer, form));
}

beforeAll(async () => {
  [as, proxy] = await Promise.all([startAuthorizationServer({ introspection: {} }), startLoopbackServer(forward)]);
}, 30_000);

afterAll(async () => {
  await Promise.all([as?.close(), proxy?.close()]);
});

beforeEach(() => {
  alter = (answer) => answer;
  accepts.length = 0;
  errors.length = 0;
  proxy.reset();
});

afterEach(() => {
  for (const auth of opened.splice(0)) auth.close();
});

function auth(options: Partial<TokenAuthOptions>): TokenAuth {
  const made = createTokenAuth({ onError: (err) => errors.push(err), ...options } as TokenAuthOptions);
  opened.push(made);
  return made;
}

/** Introspecting at the provider through the proxy, as `clientId` (rs-basic: signed answers; rs-plain: plain JSON). */
function through(introspection: Record<string, unknown> = {}, clientId = 'rs-basic'): TokenAuth {
  return auth({
    issuerBaseURL: as.issuer,
    audience: as.resource,
    introspection: {
      clientId,
      clientSecret: as.resourceServerSecret,
      endpoint: `${proxy.origin}/token/introspection`,
      ...introspection,
    },
  });
}

const part = (text: string, i: number) =>
  JSON.parse(Buffer.from(text.split('.')[i], 'base64url').toString()) as Record<string, unknown>;
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('a signed answer, checked', () => {
  it('is asked for when discovery offers one, plain JSON welcome too, and believed once checked', async () => {
    const seen: string[] = [];
    alter = (answer) => {
      seen.push(answer.type);
      return answer;
    };
    await expect(through().verify(await as.token())).resolves.toMatchObject({ scope: 'read', aud: as.resource });
    expect(accepts).toEqual([`${JWT_TYPE}, application/json;q=0.5`]);
    expect(seen[0]).toMatch(/^application\/token-introspection\+jwt/);
  });

  it.each([
    [
      'a payload altered under its signature',
      'introspection-jwt-signature',
      (body: string) => {
        const [header, , signature] = body.split('.');
        const claims = part(body, 1);
        const altered = {
          ...claims,
          token_introspection: { ...(claims.token_introspection as object), scope: 'read write' },
        };
        return `${header}.${encode(altered)}.${signature}`;
      },
    ],
    [
      'an unsigned (alg none) answer',
      'introspection-jwt-malformed',
      (body: string) => `${encode({ alg: 'none', typ: 'token-introspection+jwt' })}.${body.split('.')[1]}.`,
    ],
    [
      'an answer for another client',
      'introspection-jwt-aud',
      (body: string) =>
        `${body.split('.')[0]}.${encode({ ...part(body, 1), aud: 'someone-else' })}.${body.split('.')[2]}`,
    ],
  ])('never believes %s: 503, nothing cached, and the breaker not opened', async (_case, reason, tamper) => {
    alter = (answer) => ({ ...answer, body: tamper(answer.body) });
    const introspecting = through({ breaker: { failures: 2 } });
    const token = await as.token({ scope: 'read' });
    for (let i = 0; i < 3; i++) {
      const refused = await rejection(introspecting.verify(token));
      expect([refused.code, refused.reason]).toEqual(['verification_unavailable', reason]);
    }
    expect(proxy.requests).toBe(3);
    // The server answered: an answer that cannot be believed is no outage (one client's token can draw some).
    expect(introspecting.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
    alter = (answer) => answer;
    await expect(introspecting.verify(token)).resolves.toMatchObject({ scope: 'read' });
  });
});

describe('introspection.signed', () => {
  const downgrade = (answer: Answer): Answer => ({
    status: 200,
    type: 'application/json',
    body: JSON.stringify(part(answer.body, 1).token_introspection),
  });

  it.each([['preferred', undefined] as const, ['preferred', 'preferred'] as const])(
    "'%s' (given: %p) believes a plain JSON answer: TLS authenticates the server",
    async (_name, signed) => {
      alter = downgrade;
      await expect(through({ signed }).verify(await as.token())).resolves.toMatchObject({ scope: 'read' });
    },
  );

  it("'required' refuses a plain JSON answer where it asked for a signed one (a downgrade on the path)", async () => {
    alter = downgrade;
    const refused = await rejection(through({ signed: 'required' }).verify(await as.token()));
    expect([refused.code, refused.reason]).toEqual(['verification_unavailable', 'introspection-unsigned']);
    expect(accepts).toEqual([JWT_TYPE]);
  });

  describe('with a client the provider answers plain JSON (not registered for signed answers)', () => {
    it("'preferred' (the default) believes its plain JSON answers", async () => {
      const token = await as.token();
      await expect(through({}, 'rs-plain').verify(token)).resolves.toMatchObject({ scope: 'read', aud: as.resource });
      expect(accepts).toEqual([`${JWT_TYPE}, application/json;q=0.5`]);
    });

    it("'required' answers every token 503 introspection-unsigned, with a hint", async () => {
      const introspecting = through({ signed: 'required' }, 'rs-plain');
      for (let i = 0; i < 2; i++) {
        const refused = await rejection(introspecting.verify(await as.token()));
        expect([refused.code, refused.status, refused.reason]).toEqual([
          'verification_unavailable',
          503,
          'introspection-unsigned',
        ]);
        expect(refused.hint).toBe("introspection.signed is 'required' and the answer was not an RFC 9701 JWT");
      }
    });
  });

  it('false never asks for a signed answer, and believes the plain JSON the provider then sends', async () => {
    let type = '';
    alter = (answer) => {
      type = answer.type;
      return answer;
    };
    await expect(through({ signed: false }).verify(await as.token())).resolves.toMatchObject({ scope: 'read' });
    expect(accepts).toEqual(['application/json']);
    expect(type).toMatch(/^application\/json/);
  });
});

describe('a signed answer believed only while fresh and only once', () => {
  it("'required' never believes a replayed answer about another token: token B is refused (503) and gets no claims", async () => {
    let captured: string | undefined;
    const victim = await as.token({ scope: 'read write' });
    // The path keeps the victim's signed answer, and plays it back for any other token.
    alter = (answer, form) => {
      if (form.get('token') === victim) captured = answer.body;
      else if (captured !== undefined) return { status: 200, type: JWT_TYPE, body: captured };
      return answer;
    };
    const introspecting = through({ signed: 'required' });
    await expect(introspecting.verify(victim)).resolves.toMatchObject({ scope: 'read write' });
    const refused = await rejection(introspecting.verify('an-opaque-token-the-attacker-made-up'));
    expect([refused.code, refused.reason, refused.headers['Retry-After']]).toEqual([
      'verification_unavailable',
      'introspection-jwt-replayed',
      '1',
    ]);
  });

  it("'preferred' believes what the path answers, signed or plain: a path that could play an answer back could make one up", async () => {
    const victim = await as.token({ scope: 'read write' });
    let captured: string | undefined;
    alter = (answer, form) => {
      if (form.get('token') === victim) captured = answer.body;
      return answer;
    };
    const introspecting = through();
    await expect(introspecting.verify(victim)).resolves.toMatchObject({ scope: 'read write' });
    const made = {
      active: true,
      scope: 'read write',
      iss: as.issuer,
      aud: as.resource,
      exp: (part(captured!, 1).iat as number) + 60,
    };
    alter = () => ({ status: 200, type: 'application/json', body: JSON.stringify(made) });
    await expect(introspecting.verify('a-token-the-path-answers-plain-json-for')).resolves.toMatchObject({
      scope: 'read write',
    });
    alter = () => ({ status: 200, type: JWT_TYPE, body: captured! });
    await expect(introspecting.verify('a-token-the-path-plays-back-for')).resolves.toMatchObject({
      scope: 'read write',
    });
  });

  it("believes two tokens with the same signed answer (no jti in it, one second) with one call each under 'preferred'", async () => {
    // The provider's answers for two client-credentials tokens of one client, issued and asked about in one second,
    // are the very same JWT (RS256 is deterministic, and they name no jti): the proxy makes them so, whatever the time.
    let first: string | undefined;
    alter = (answer) => {
      if (!answer.type.startsWith(JWT_TYPE)) return answer;
      first ??= answer.body;
      return { ...answer, body: first };
    };
    const [a, b] = await Promise.all([as.token(), as.token()]);
    const preferred = through();
    await expect(preferred.verify(a)).resolves.toMatchObject({ scope: 'read' });
    await expect(preferred.verify(b)).resolves.toMatchObject({ scope: 'read' });
    // One call each: both asked for a signed answer, neither again as plain JSON.
    expect(accepts).toEqual([`${JWT_TYPE}, application/json;q=0.5`, `${JWT_TYPE}, application/json;q=0.5`]);
    // 'required' refuses the second: single use (Retry-After 1: the next second's answer differs).
    first = undefined;
    const required = through({ signed: 'required' });
    await expect(required.verify(a)).resolves.toMatchObject({ scope: 'read' });
    expect((await rejection(required.verify(b))).reason).toBe('introspection-jwt-replayed');
  });

  it('believes the same answer again about the same token (asked again within its window)', async () => {
    let kept: string | undefined;
    alter = (answer) => {
      kept ??= answer.body;
      return { ...answer, body: kept };
    };
    const introspecting = auth({
      issuerBaseURL: as.issuer,
      audience: as.resource,
      cache: false,
      introspection: {
        clientId: 'rs-basic',
        clientSecret: as.resourceServerSecret,
        endpoint: `${proxy.origin}/token/introspection`,
      },
    });
    const token = await as.token();
    for (let i = 0; i < 3; i++) await expect(introspecting.verify(token)).resolves.toMatchObject({ scope: 'read' });
    expect(proxy.requests).toBe(3);
  });
});

describe('a server that signs its answers for the token audience', () => {
  let second: SigningAuthorizationServer;

  beforeAll(async () => {
    second = await startSigningAuthorizationServer();
  });

  afterAll(async () => {
    await second?.close();
  });

  beforeEach(() => {
    second.answer = (claims) => claims;
  });

  const asking = (options: Partial<TokenAuthOptions> = {}) =>
    auth({
      issuerBaseURL: second.issuer,
      audience: second.audience,
      introspection: { clientId: 'orders-api', clientSecret: 'orders-api-secret' },
      ...options,
    });

  it('believes an answer whose aud is the configured audience (RFC 9701 §5: it names this resource server)', async () => {
    await expect(asking().verify(second.issue())).resolves.toMatchObject({ aud: second.audience, scope: 'read' });
  });

  it('believes an answer whose aud is the configured resource', async () => {
    const withResource = asking({ audience: undefined, resource: second.audience });
    await expect(withResource.verify(second.issue())).resolves.toMatchObject({ aud: second.audience });
  });

  it('refuses an answer whose aud names another resource server, with the aud received and expected in the hint', async () => {
    const other = 'https://other-api.example.test';
    const refused = await rejection(asking().verify(second.issue({ aud: other })));
    expect([refused.code, refused.reason]).toEqual(['verification_unavailable', 'introspection-jwt-aud']);
    expect(refused.hint).toBe(
      `the signed answer's aud is "${other}"; expected one of "orders-api", "${second.audience}" (introspection.clientId, audience, resource)`,
    );
  });

  it('refuses an answer one year old that has no exp (stale by its iat)', async () => {
    second.answer = (claims) => ({ ...claims, iat: (claims.iat as number) - 365 * 86_400 });
    const refused = await rejection(asking().verify(second.issue()));
    expect([refused.code, refused.reason]).toEqual(['verification_unavailable', 'introspection-jwt-stale']);
  });

  it('takes its HTTP 400 for an unknown token as an answer about that token: 401, not an outage', async () => {
    const introspecting = asking({
      introspection: { clientId: 'orders-api', clientSecret: 's', breaker: { failures: 2 } },
    });
    for (let i = 0; i < 4; i++) {
      const refused = await rejection(introspecting.verify(`made-up-${i}`));
      expect([refused.code, refused.status, refused.reason]).toEqual([
        'invalid_token',
        401,
        'introspection-status-400',
      ]);
    }
    expect(introspecting.stats().breaker).toMatchObject({ state: 'closed', failures: 0 });
    await expect(introspecting.verify(second.issue())).resolves.toMatchObject({ scope: 'read' });
  });
});
