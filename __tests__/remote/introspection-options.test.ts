/**
 * `introspection` and `introspect` misconfigured (RFC 7662; docs/introspection.md): a TypeError naming the option at
 * createTokenAuth, with no network call.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, OptionError, type TokenAuthOptions } from '../../lib';
import type { IssuerBase } from '../../lib/keys/discovery-options';
import { resolveIntrospection } from '../../lib/remote/introspection-options';
import { creating, OPTION_TEST_BASE } from '../fixtures/option-error';

const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

const create = creating;

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
      'signed: true (not one of the three)',
      { introspection: { clientId: 'api', clientSecret: 's', signed: true } },
      /"introspection.signed" must be 'required', 'preferred' or false/,
    ],
    [
      "signed: 'always'",
      { introspection: { clientId: 'api', clientSecret: 's', signed: 'always' } },
      /"introspection.signed" must be 'required', 'preferred' or false/,
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
      {
        issuerBaseURL: [OPTION_TEST_BASE, 'https://other.example.test'],
        introspection: { clientId: 'api', clientSecret: 's' },
      },
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

  it("takes signed 'preferred' by default, and 'required' or false as given", () => {
    const server: IssuerBase[] = [{ base: OPTION_TEST_BASE, url: new URL(OPTION_TEST_BASE) }];
    const resolve = (signed?: unknown) =>
      resolveIntrospection({ introspection: { clientId: 'api', clientSecret: 's', signed } }, server, false)?.signed;
    expect([resolve(), resolve('preferred'), resolve('required'), resolve(false)]).toEqual([
      'preferred',
      'preferred',
      'required',
      false,
    ]);
    expect(() => resolve(true)).toThrow(OptionError);
  });

  it('names this resource server for signed answers by its client id, then audience and resource', () => {
    const server: IssuerBase[] = [{ base: OPTION_TEST_BASE, url: new URL(OPTION_TEST_BASE) }];
    const names = (input: Record<string, unknown>) =>
      resolveIntrospection({ introspection: { clientId: 'api', clientSecret: 's' }, ...input }, server, false)
        ?.audiences;
    expect(names({ audience: 'https://api.example.test' })).toEqual(['api', 'https://api.example.test']);
    expect(names({ audience: ['a', 'api', 'b'], resource: 'https://api.example.test/mcp' })).toEqual([
      'api',
      'a',
      'b',
      'https://api.example.test/mcp',
    ]);
    expect(names({ audience: false })).toEqual(['api']);
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
