/**
 * `introspection` and `introspect` misconfigured (SPEC §16): a TypeError naming the option at createTokenAuth, with no
 * network call; and the client assertion of private_key_jwt as it goes on the wire (RFC 7523 §3).
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { ASSERTION_LIFETIME, resolveClientAuth } from '../../lib/remote/client-auth';

const BASE = 'https://as.example.test';
const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

function create(options: Record<string, unknown>) {
  return () =>
    createTokenAuth({
      issuerBaseURL: BASE,
      audience: 'https://api.example.test',
      ...options,
    } as TokenAuthOptions).close();
}

describe('introspection options', () => {
  it('accepts a client secret, or a private key, with one issuerBaseURL', () => {
    expect(create({ introspection: { clientId: 'api', clientSecret: 's3cret' } })).not.toThrow();
    expect(
      create({ introspection: { clientId: 'api', privateKey: ec.privateKey }, introspect: 'always' }),
    ).not.toThrow();
    expect(create({ introspection: { clientId: 'api', clientSecret: 's3cret', maxInflight: 1 } })).not.toThrow();
  });

  it.each([
    ['no client secret or key', { introspection: { clientId: 'api' } }, /"introspection.clientSecret" is required/],
    [
      'a secret left undefined (an unset variable)',
      { introspection: { clientId: 'api', clientSecret: undefined } },
      /"introspection.clientSecret" is required/,
    ],
    [
      'no client id',
      { introspection: { clientSecret: 's3cret' } },
      /"introspection.clientId" must be a non-empty string/,
    ],
    [
      'both a secret and a key',
      { introspection: { clientId: 'api', clientSecret: 's', privateKey: ec.privateKey } },
      /exclude each other/,
    ],
    [
      'private_key_jwt without a key',
      { introspection: { clientId: 'api', authMethod: 'private_key_jwt' } },
      /"introspection.privateKey" is required/,
    ],
    [
      'a secret method with a key',
      { introspection: { clientId: 'api', privateKey: ec.privateKey, authMethod: 'client_secret_post' } },
      /"introspection.privateKey" applies to authMethod 'private_key_jwt' only/,
    ],
    [
      'a public key for private_key_jwt',
      { introspection: { clientId: 'api', privateKey: ec.publicKey } },
      /"introspection.privateKey" must be a private key/,
    ],
    [
      'an unreadable PEM',
      { introspection: { clientId: 'api', privateKey: '-----BEGIN PRIVATE KEY-----\\nAAAA' } },
      /"introspection.privateKey" is not a readable private key/,
    ],
    [
      'an unknown auth method',
      { introspection: { clientId: 'api', clientSecret: 's', authMethod: 'client_secret_jwt' } },
      /"introspection.authMethod" must be/,
    ],
    [
      'an unknown field',
      { introspection: { clientId: 'api', clientSecret: 's', secret: 'typo' } },
      /unknown option "introspection.secret"/,
    ],
    [
      'a plain http endpoint off loopback',
      { introspection: { clientId: 'api', clientSecret: 's', endpoint: 'http://as.example.test/introspect' } },
      /"introspection.endpoint" must be an https: URL/,
    ],
    [
      'a zero timeout',
      { introspection: { clientId: 'api', clientSecret: 's', timeout: 0 } },
      /"introspection.timeout" must be more than zero/,
    ],
    [
      'a maxInflight of 0',
      { introspection: { clientId: 'api', clientSecret: 's', maxInflight: 0 } },
      /"introspection.maxInflight" must be a positive integer/,
    ],
    [
      'a maxInflight of 1.5',
      { introspection: { clientId: 'api', clientSecret: 's', maxInflight: 1.5 } },
      /"introspection.maxInflight" must be a positive integer/,
    ],
    [
      'a maxInflight of "10" (a string)',
      { introspection: { clientId: 'api', clientSecret: 's', maxInflight: '10' } },
      /"introspection.maxInflight" must be a positive integer/,
    ],
    [
      'a maxInflight of -1',
      { introspection: { clientId: 'api', clientSecret: 's', maxInflight: -1 } },
      /"introspection.maxInflight" must be a positive integer/,
    ],
    [
      'introspect without introspection',
      { introspect: 'always' },
      /"introspect" applies only with option "introspection"/,
    ],
    [
      'an unknown introspect mode',
      { introspection: { clientId: 'api', clientSecret: 's' }, introspect: 'sometimes' },
      /"introspect" must be 'opaque' or 'always'/,
    ],
    [
      'several authorization servers',
      { issuerBaseURL: [BASE, 'https://other.example.test'], introspection: { clientId: 'api', clientSecret: 's' } },
      /"issuerBaseURL" must name exactly one/,
    ],
    [
      "typ with introspect: 'always' (no header to check)",
      { introspection: { clientId: 'api', clientSecret: 's' }, introspect: 'always', typ: 'at+jwt' },
      /introspect: 'always'/,
    ],
  ])('refuses %s with a TypeError naming the option', (_case, options, message) => {
    expect(create(options)).toThrow(TypeError);
    expect(create(options)).toThrow(message);
  });

  it('refuses introspection without issuerBaseURL (no server to discover)', () => {
    const options = {
      key: { secret: 'x'.repeat(32) },
      issuer: 'i',
      audience: 'a',
      introspection: { clientId: 'api', clientSecret: 's' },
    };
    expect(() => createTokenAuth(options as TokenAuthOptions)).toThrow(/"introspection" needs option "issuerBaseURL"/);
  });
});

describe('private_key_jwt client assertion', () => {
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;

  function assertion(now: number): {
    header: Record<string, unknown>;
    claims: Record<string, unknown>;
    form: URLSearchParams;
    jws: string;
  } {
    const client = resolveClientAuth(
      { clientId: 'api', privateKey: { ...ec.privateKey.export({ format: 'jwk' }), kid: 'k-1' } },
      'introspection',
    );
    const form = new URLSearchParams();
    client.apply(form, {}, 'https://as.example.test/introspect', now);
    const jws = form.get('client_assertion') ?? '';
    const [header, claims] = jws.split('.');
    return { header: decode(header), claims: decode(claims), form, jws };
  }

  it('is signed by the key, for the endpoint called, short-lived, with a fresh jti each call', () => {
    const one = assertion(1_700_000_000);
    const two = assertion(1_700_000_000);
    expect(one.form.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    expect(one.form.get('client_id')).toBe('api');
    expect(one.header).toEqual({ alg: 'ES256', typ: 'JWT', kid: 'k-1' });
    expect(one.claims).toMatchObject({
      iss: 'api',
      sub: 'api',
      aud: 'https://as.example.test/introspect',
      iat: 1_700_000_000,
    });
    expect(one.claims.exp).toBe(1_700_000_000 + ASSERTION_LIFETIME);
    expect(ASSERTION_LIFETIME).toBeLessThanOrEqual(60);
    expect(typeof one.claims.jti).toBe('string');
    expect(one.claims.jti).not.toBe(two.claims.jti);
    const [h, c, s] = one.jws.split('.');
    expect(
      verify(
        'sha256',
        Buffer.from(`${h}.${c}`),
        { key: ec.publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(s, 'base64url'),
      ),
    ).toBe(true);
  });

  it('form-encodes id and secret before Basic encoding (RFC 6749 §2.3.1)', () => {
    const client = resolveClientAuth({ clientId: 'my api', clientSecret: 'a:b+c/d%' }, 'introspection');
    const headers: Record<string, string> = {};
    client.apply(new URLSearchParams(), headers, 'https://as.example.test/introspect', 0);
    expect(Buffer.from(headers.Authorization.slice('Basic '.length), 'base64').toString()).toBe(
      'my+api:a%3Ab%2Bc%2Fd%25',
    );
  });
});
