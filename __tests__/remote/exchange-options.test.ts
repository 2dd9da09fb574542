/**
 * `tokenExchange` misconfigured (RFC 8693; docs/exchange.md): an OptionError naming the option's dotted path at
 * createTokenAuth, with no network call; and a malformed target of `exchange()`, refused before anything is asked.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, OptionError } from '../../lib';
import { creating, OPTION_TEST_BASE, optionErrorOf } from '../fixtures/option-error';

const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

const create = creating;

describe('tokenExchange options', () => {
  it('accepts a client secret or a private key, with one issuerBaseURL or an endpoint', () => {
    expect(create({ tokenExchange: { clientId: 'api', clientSecret: 's3cret' } })).not.toThrow();
    expect(create({ tokenExchange: { clientId: 'api', privateKey: ec.privateKey, cache: false } })).not.toThrow();
    expect(
      create({
        issuerBaseURL: [OPTION_TEST_BASE, 'https://other.example.test'],
        tokenExchange: {
          clientId: 'api',
          clientSecret: 's',
          endpoint: `${OPTION_TEST_BASE}/token`,
          cache: { max: 10 },
        },
      }),
    ).not.toThrow();
  });

  it.each([
    ['not an object', { tokenExchange: 'api' }, 'tokenExchange'],
    [
      'an unknown field',
      { tokenExchange: { clientId: 'api', clientSecret: 's', audience: 'x' } },
      'tokenExchange.audience',
    ],
    ['no client id', { tokenExchange: { clientSecret: 's' } }, 'tokenExchange.clientId'],
    ['no secret or key', { tokenExchange: { clientId: 'api' } }, 'tokenExchange.clientSecret'],
    [
      'both a secret and a key',
      { tokenExchange: { clientId: 'api', clientSecret: 's', privateKey: ec.privateKey } },
      'tokenExchange.privateKey',
    ],
    [
      'an unknown auth method',
      { tokenExchange: { clientId: 'api', clientSecret: 's', authMethod: 'tls' } },
      'tokenExchange.authMethod',
    ],
    [
      'an http endpoint off loopback',
      { tokenExchange: { clientId: 'api', clientSecret: 's', endpoint: 'http://as.example.test/token' } },
      'tokenExchange.endpoint',
    ],
    [
      'no endpoint with two issuers',
      {
        issuerBaseURL: [OPTION_TEST_BASE, 'https://other.example.test'],
        tokenExchange: { clientId: 'api', clientSecret: 's' },
      },
      'tokenExchange.endpoint',
    ],
    ['a bad timeout', { tokenExchange: { clientId: 'api', clientSecret: 's', timeout: -1 } }, 'tokenExchange.timeout'],
    [
      'a bad cap',
      { tokenExchange: { clientId: 'api', clientSecret: 's', maxInflight: 0 } },
      'tokenExchange.maxInflight',
    ],
    [
      'a bad cache bound',
      { tokenExchange: { clientId: 'api', clientSecret: 's', cache: { max: 1.5 } } },
      'tokenExchange.cache.max',
    ],
    [
      'an unknown cache field',
      { tokenExchange: { clientId: 'api', clientSecret: 's', cache: { ttl: 5 } } },
      'tokenExchange.cache.ttl',
    ],
    [
      'a bad breaker',
      { tokenExchange: { clientId: 'api', clientSecret: 's', breaker: { failures: 0 } } },
      'tokenExchange.breaker.failures',
    ],
  ])('refuses %s at createTokenAuth', (_what, options, option) => {
    expect(optionErrorOf(create(options)).option).toBe(option);
  });

  it('refuses exchange() without the option, naming it', async () => {
    const auth = createTokenAuth({ issuerBaseURL: OPTION_TEST_BASE, audience: 'https://api.example.test' });
    try {
      const err = await auth.exchange('token', { audience: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OptionError);
      expect((err as OptionError).option).toBe('tokenExchange');
    } finally {
      auth.close();
    }
  });

  it.each([
    ['no audience or resource', { scope: 'read' }, 'exchange'],
    ['a resource with a fragment', { resource: 'https://api.example.test/#x' }, 'exchange.resource'],
    ['a relative resource', { resource: '/api' }, 'exchange.resource'],
    ['an empty audience', { audience: '' }, 'exchange.audience'],
    ['a scope with a quote', { audience: 'api', scope: ['a"b'] }, 'exchange.scope'],
    ['too many audiences', { audience: Array.from({ length: 17 }, (_, i) => `a${i}`) }, 'exchange.audience'],
    ['an unknown field', { audience: 'api', actorToken: 'x' }, 'exchange.actorToken'],
    ['a token type with a space', { audience: 'api', requestedTokenType: 'urn:x y' }, 'exchange.requestedTokenType'],
  ])('refuses a target with %s before any verification', async (_what, target, option) => {
    const auth = createTokenAuth({
      issuerBaseURL: OPTION_TEST_BASE,
      audience: 'https://api.example.test',
      tokenExchange: { clientId: 'api', clientSecret: 's' },
    });
    try {
      // The token is garbage: a target checked after verification would answer invalid_token instead.
      const err = await auth.exchange('garbage', target as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OptionError);
      expect((err as OptionError).option).toBe(option);
    } finally {
      auth.close();
    }
  });
});
