// How a resource server authenticates to an authorization server's endpoint, as it goes on the wire: the client
// assertion of private_key_jwt (RFC 7523 §3) and client_secret_basic (RFC 6749 §2.3.1).
import { generateKeyPairSync, verify } from 'node:crypto';
import { ASSERTION_LIFETIME, resolveClientAuth } from '../../lib/remote/client-auth';

const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

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
