/**
 * Every option of createTokenAuth is checked once, before anything is built: a wrong value is an OptionError (a
 * TypeError) whose `option` is the option's dotted path, thrown by resolveOptions and so by createTokenAuth itself.
 * Key forms, secrets and public keys, shared verdicts and introspection are among them (they were once checked while
 * the sources were built).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { resolveOptions } from '../../lib/config/resolve';
import { createTokenSource } from '../../lib/remote';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';
import { optionErrorOf } from '../fixtures/option-error';

const SECRET_KEY = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE };
const JWKS = { key: { jwksUri: 'https://as.example/jwks' }, issuer: ISSUER, audience: AUDIENCE };
const UPSTREAM = { key: { upstream: 'https://id.example' }, issuer: ISSUER, audience: AUDIENCE };
const DISCOVERY = { issuerBaseURL: 'https://as.example', audience: AUDIENCE };
const CLIENT = { clientId: 'api', clientSecret: 'introspection-secret' };
const INTROSPECTION = { ...DISCOVERY, introspection: CLIENT };
const STORE = { getVerdict: async () => undefined, setVerdict: async () => undefined };
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });

type Case = [path: string, why: string, options: Record<string, unknown>];

const CASES: Case[] = [
  ['', 'options that are not an object', null as unknown as Record<string, unknown>],
  ['isuer', 'an unknown option', { ...SECRET_KEY, isuer: ISSUER }],
  ['key', 'no key', { issuer: ISSUER, audience: AUDIENCE }],
  ['key', 'a key that is a string', { ...SECRET_KEY, key: 'secret' }],
  ['key', 'two key forms', { ...SECRET_KEY, key: { secret: SECRET, jwksUri: 'https://as.example/jwks' } }],
  ['key', 'key with issuerBaseURL', { ...DISCOVERY, key: { secret: SECRET } }],
  ['key.secret', 'a short secret', { ...SECRET_KEY, key: { secret: 'short' } }],
  ['key.secret', 'a secret of the wrong type', { ...SECRET_KEY, key: { secret: 42 } }],
  ['key.secret', 'a secret left undefined (an unset variable)', { ...SECRET_KEY, key: { secret: undefined } }],
  ['key.publicKey', 'a public key that is no key', { ...SECRET_KEY, key: { publicKey: 'not a key' } }],
  ['key.publicKey', 'a private key', { ...SECRET_KEY, key: { publicKey: rsa.privateKey } }],
  ['key.jwksUri', 'plain http off loopback', { ...JWKS, key: { jwksUri: 'http://as.example/jwks' } }],
  [
    'key.jwksUri',
    'a discovery metadata address',
    { ...JWKS, key: { jwksUri: 'https://as.example/.well-known/openid-configuration' } },
  ],
  ['key.cooldown', 'a field of another form', { ...SECRET_KEY, key: { secret: SECRET, cooldown: 5 } }],
  ['key.cooldown', 'a negative cooldown', { ...JWKS, key: { jwksUri: 'https://as.example/jwks', cooldown: -1 } }],
  ['key.timeout', 'a timeout of zero', { ...JWKS, key: { jwksUri: 'https://as.example/jwks', timeout: 0 } }],
  ['key.upstream', 'an upstream with a query', { ...UPSTREAM, key: { upstream: 'https://id.example/?x=1' } }],
  ['key.breaker', 'a breaker that is a number', { ...UPSTREAM, key: { upstream: 'https://id.example', breaker: 3 } }],
  [
    'key.breaker.failures',
    'zero failures',
    { ...UPSTREAM, key: { upstream: 'https://id.example', breaker: { failures: 0 } } },
  ],
  [
    'key.breaker.cooldown',
    'a breaker cooldown of zero',
    { ...UPSTREAM, key: { upstream: 'https://id.example', breaker: { cooldown: 0 } } },
  ],
  [
    'key.breaker.failure',
    'an unknown breaker field',
    { ...UPSTREAM, key: { upstream: 'https://id.example', breaker: { failure: 1 } } },
  ],
  ['key.maxInflight', 'maxInflight 0', { ...UPSTREAM, key: { upstream: 'https://id.example', maxInflight: 0 } }],
  ['algorithms', 'none', { ...SECRET_KEY, algorithms: ['none'] }],
  ['algorithms', 'an algorithm the secret cannot verify', { ...SECRET_KEY, algorithms: ['RS256'] }],
  [
    'algorithms',
    'an algorithm the public key cannot verify',
    { ...SECRET_KEY, key: { publicKey: rsa.publicKey }, algorithms: ['ES256'] },
  ],
  ['algorithms', 'HS256 with a JWKS', { ...JWKS, algorithms: ['HS256'] }],
  ['algorithms', 'HS256 with discovery', { ...DISCOVERY, algorithms: ['HS256'] }],
  ['algorithms', 'algorithms with upstream mode', { ...UPSTREAM, algorithms: ['RS256'] }],
  ['algorithms', 'a resolver without algorithms', { ...SECRET_KEY, key: () => undefined }],
  ['issuer', 'no issuer', { ...SECRET_KEY, issuer: undefined }],
  ['issuer', 'issuer with issuerBaseURL', { ...DISCOVERY, issuer: 'https://as.example' }],
  ['audience', 'no audience', { ...SECRET_KEY, audience: undefined }],
  ['audience', 'an empty audience', { ...SECRET_KEY, audience: [] }],
  ['issuerBaseURL', 'an issuerBaseURL that is no URL', { ...DISCOVERY, issuerBaseURL: 'as.example' }],
  ['issuerBaseURL[1]', 'a second issuer that is no string', { ...DISCOVERY, issuerBaseURL: ['https://a.example', 7] }],
  [
    'issuerBaseURL[1]',
    'one issuer twice',
    { ...DISCOVERY, issuerBaseURL: ['https://a.example/t', 'https://a.example/t/'] },
  ],
  ['discovery', 'discovery without issuerBaseURL', { ...SECRET_KEY, discovery: { timeout: 1 } }],
  ['discovery.timeout', 'a discovery timeout of zero', { ...DISCOVERY, discovery: { timeout: 0 } }],
  ['discovery.cooldown', 'an unknown discovery field', { ...DISCOVERY, discovery: { cooldown: 1 } }],
  ['claims', 'an unknown claims mode', { ...SECRET_KEY, claims: 'loose' }],
  ['claims', "claims: 'at+jwt' in upstream mode", { ...UPSTREAM, claims: 'at+jwt' }],
  ['typ', 'typ in upstream mode', { ...UPSTREAM, claims: 'jwt', typ: 'at+jwt' }],
  ['typ', 'a typ that names another JWT', { ...SECRET_KEY, typ: 'dpop+jwt' }],
  ['scopeClaim', 'an empty scopeClaim', { ...SECRET_KEY, scopeClaim: '' }],
  ['requiredClaims', 'requiredClaims that are no names', { ...SECRET_KEY, requiredClaims: [1] }],
  ['validateClaims', 'validateClaims that is no function', { ...SECRET_KEY, validateClaims: true }],
  ['clockTolerance', 'a negative clockTolerance', { ...SECRET_KEY, clockTolerance: -1 }],
  ['maxTokenAge', 'maxTokenAge without a unit', { ...SECRET_KEY, maxTokenAge: '10' }],
  ['maxLifetime', 'maxLifetime NaN', { ...SECRET_KEY, maxLifetime: Number.NaN }],
  ['maxTokenLength', 'maxTokenLength 0', { ...SECRET_KEY, maxTokenLength: 0 }],
  ['clock', 'a clock that is no function', { ...SECRET_KEY, clock: 5 }],
  ['isRevoked', 'isRevoked that is no function', { ...SECRET_KEY, isRevoked: true }],
  ['getToken', 'getToken that is no function', { ...SECRET_KEY, getToken: 'query' }],
  ['onError', 'onError that is no function', { ...SECRET_KEY, onError: {} }],
  ['errors', 'an unknown errors mode', { ...SECRET_KEY, errors: 'throw' }],
  ['realm', 'a realm with a quote', { ...SECRET_KEY, realm: 'a"b' }],
  ['allowInsecureHttp', 'allowInsecureHttp that is no boolean', { ...SECRET_KEY, allowInsecureHttp: 'yes' }],
  ['cache', 'cache true', { ...SECRET_KEY, cache: true }],
  ['cache.size', 'an unknown cache field', { ...SECRET_KEY, cache: { size: 1 } }],
  ['cache.max', 'cache.max 0', { ...SECRET_KEY, cache: { max: 0 } }],
  ['cache.maxBytes', 'a fractional cache.maxBytes', { ...SECRET_KEY, cache: { maxBytes: 1.5 } }],
  ['cache.ttl', 'a cache.ttl that is no duration', { ...SECRET_KEY, cache: { ttl: 'soon' } }],
  ['cache.errorTtl', 'a negative cache.errorTtl', { ...SECRET_KEY, cache: { errorTtl: -1 } }],
  ['cache.shared', 'a shared store that is no store', { ...UPSTREAM, cache: { shared: {} } }],
  ['cache.shared', 'shared verdicts with a local key', { ...SECRET_KEY, cache: { shared: STORE } }],
  ['cache.shared', 'shared verdicts with discovery alone', { ...DISCOVERY, cache: { shared: STORE } }],
  ['dpop', 'dpop that is no object', { ...SECRET_KEY, dpop: true }],
  ['dpop.requried', 'an unknown dpop field', { ...SECRET_KEY, dpop: { requried: true } }],
  ['dpop.required', 'dpop.required that is no boolean', { ...SECRET_KEY, dpop: { required: 'yes' } }],
  ['dpop.iatWindow', 'a dpop.iatWindow under a second', { ...SECRET_KEY, dpop: { iatWindow: 0.5 } }],
  ['dpop.algorithms', 'an HMAC proof algorithm', { ...SECRET_KEY, dpop: { algorithms: ['HS256'] } }],
  ['dpop.nonce', 'a nonce option that is no object', { ...SECRET_KEY, dpop: { nonce: 'x' } }],
  ['dpop.nonce.secret', 'a short nonce secret', { ...SECRET_KEY, dpop: { nonce: { secret: 'short' } } }],
  [
    'dpop.nonce.lifetime',
    'a nonce lifetime under a second',
    { ...SECRET_KEY, dpop: { nonce: { secret: SECRET, lifetime: 0 } } },
  ],
  ['dpop.nonce.ttl', 'an unknown nonce field', { ...SECRET_KEY, dpop: { nonce: { secret: SECRET, ttl: 5 } } }],
  ['dpop.replay', 'a replay store that is no store', { ...SECRET_KEY, dpop: { replay: {} } }],
  ['mtls', 'mtls that is no object', { ...SECRET_KEY, mtls: 'header' }],
  ['mtls.header', 'an unknown mtls field', { ...SECRET_KEY, mtls: { header: 'x' } }],
  ['mtls.getCertificate', 'getCertificate that is no function', { ...SECRET_KEY, mtls: { getCertificate: 'x' } }],
  ['revocation', 'a revocation store that is no store', { ...SECRET_KEY, revocation: {} }],
  ['introspection', 'introspection without issuerBaseURL', { ...SECRET_KEY, introspection: CLIENT }],
  [
    'introspection',
    'introspection with two issuers',
    { ...INTROSPECTION, issuerBaseURL: ['https://a.example', 'https://b.example'] },
  ],
  ['introspection', 'introspection that is no object', { ...INTROSPECTION, introspection: 'api' }],
  [
    'introspection.secret',
    'an unknown introspection field',
    { ...INTROSPECTION, introspection: { ...CLIENT, secret: 'x' } },
  ],
  ['introspection.clientId', 'no client id', { ...INTROSPECTION, introspection: { clientSecret: 'x' } }],
  ['introspection.clientSecret', 'no client secret', { ...INTROSPECTION, introspection: { clientId: 'api' } }],
  [
    'introspection.privateKey',
    'a private key that is no key',
    { ...INTROSPECTION, introspection: { clientId: 'api', privateKey: 'not a key' } },
  ],
  [
    'introspection.privateKey',
    'a secret and a key together',
    { ...INTROSPECTION, introspection: { ...CLIENT, privateKey: rsa.privateKey } },
  ],
  [
    'introspection.authMethod',
    'an unknown client authentication method',
    { ...INTROSPECTION, introspection: { ...CLIENT, authMethod: 'tls_client_auth' } },
  ],
  [
    'introspection.endpoint',
    'an endpoint off loopback in plain http',
    { ...INTROSPECTION, introspection: { ...CLIENT, endpoint: 'http://as.example/introspect' } },
  ],
  ['introspection.timeout', 'a timeout of zero', { ...INTROSPECTION, introspection: { ...CLIENT, timeout: 0 } }],
  [
    'introspection.breaker.failures',
    'a breaker of zero failures',
    { ...INTROSPECTION, introspection: { ...CLIENT, breaker: { failures: 0 } } },
  ],
  [
    'introspection.maxInflight',
    'maxInflight 1.5',
    { ...INTROSPECTION, introspection: { ...CLIENT, maxInflight: 1.5 } },
  ],
  ['introspect', 'introspect without introspection', { ...DISCOVERY, introspect: 'always' }],
  ['introspect', 'an unknown introspect mode', { ...INTROSPECTION, introspect: 'sometimes' }],
  ['resource', 'a resource with a fragment', { ...SECRET_KEY, resource: 'https://api.example/mcp#x' }],
  ['scopesSupported', 'scopesSupported without resource', { ...SECRET_KEY, scopesSupported: ['read'] }],
  [
    'scopesSupported',
    'a scope with a space',
    { ...SECRET_KEY, resource: 'https://api.example/mcp', scopesSupported: ['a b'] },
  ],
  ['resourceName', 'an empty resourceName', { ...SECRET_KEY, resource: 'https://api.example/mcp', resourceName: ' ' }],
  [
    'resourceDocumentation',
    'documentation that is no URL',
    { ...SECRET_KEY, resource: 'https://api.example/mcp', resourceDocumentation: 'docs' },
  ],
];

describe('resolveOptions: every option checked once, before anything is built', () => {
  it.each(CASES)('refuses "%s" (%s) with an OptionError naming it', (path, _why, options) => {
    const resolved = optionErrorOf(() => resolveOptions(options as TokenAuthOptions<never>));
    expect(resolved).toBeInstanceOf(TypeError);
    expect(resolved.name).toBe('OptionError');
    expect(resolved.option).toBe(path);
    expect(resolved.message).toMatch(/^express-verified-user: /);
    // The message names the option too (an array's element by the array's name at least).
    expect(resolved.message).toContain(path.replace(/\[\d+\]$/, ''));

    // createTokenAuth itself throws it, with the same path and words.
    const created = optionErrorOf(() => createTokenAuth(options as TokenAuthOptions));
    expect([created.option, created.message]).toEqual([resolved.option, resolved.message]);
  });

  it.each([
    ['a secret', SECRET_KEY],
    ['a public key', { ...SECRET_KEY, key: { publicKey: rsa.publicKey } }],
    ['a resolver', { ...SECRET_KEY, key: () => undefined, algorithms: ['RS256'] }],
    ['a JWKS', JWKS],
    ['upstream mode with shared verdicts', { ...UPSTREAM, cache: { shared: STORE } }],
    ['discovery', DISCOVERY],
    ['introspection with shared verdicts', { ...INTROSPECTION, cache: { shared: STORE } }],
  ])('builds the sources of what it resolved for %s without another check', (_case, options) => {
    const resolved = resolveOptions(options as TokenAuthOptions<never>);
    const source = createTokenSource(resolved);
    expect(['jws', 'remote']).toContain(source.kind);
    source.close();
    createTokenAuth(options as TokenAuthOptions).close();
  });
});

const base = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE } as TokenAuthOptions;
const make = (changes: Record<string, unknown>) => () => createTokenAuth({ ...base, ...changes } as TokenAuthOptions);

describe('createTokenAuth option validation', () => {
  it('accepts the minimal options', () => {
    expect(() => createTokenAuth(base)).not.toThrow();
  });

  it.each([
    ['issuer given as undefined', { issuer: undefined }, /"issuer" was given as undefined/],
    ['audience given as undefined', { audience: undefined }, /"audience" was given as undefined/],
    ['issuer empty', { issuer: '' }, /"issuer"/],
    ['audience an empty array', { audience: [] }, /"audience"/],
    ['issuer true', { issuer: true }, /"issuer"/],
    ['an unknown option', { isuer: ISSUER }, /unknown option "isuer"/],
    ['key missing', { key: undefined }, /"key" is required/],
    ['key a string', { key: 'secret' }, /"key" must be/],
    ['two key forms', { key: { secret: SECRET, publicKey: 'x' } }, /exactly one of/],
    ['no key form', { key: {} }, /exactly one of/],
    ['a short secret', { key: { secret: 'short' } }, /at least 32 bytes/],
    ['a secret of the wrong type', { key: { secret: 42 } }, /key.secret must be/],
    ['algorithms with none', { algorithms: ['none'] }, /never include "none"/],
    ['algorithms with None', { algorithms: ['HS256', 'None'] }, /never include "none"/],
    ['an unsupported algorithm', { algorithms: ['ES256K'] }, /unsupported algorithm/],
    ['an empty algorithms list', { algorithms: [] }, /"algorithms"/],
    ['RS256 with a secret (key confusion)', { algorithms: ['RS256'] }, /cannot verify/],
    ['claims mode unknown', { claims: 'loose' }, /"claims"/],
    ['errors mode unknown', { errors: 'throw' }, /"errors"/],
    ['realm with a quote', { realm: 'a"b' }, /"realm"/],
    ['clockTolerance negative', { clockTolerance: -1 }, /"clockTolerance"/],
    ['clockTolerance a bare numeric string', { clockTolerance: '10' }, /"clockTolerance"/],
    ['maxTokenAge without a known unit', { maxTokenAge: '1 fortnight' }, /"maxTokenAge"/],
    ['maxLifetime NaN', { maxLifetime: Number.NaN }, /"maxLifetime"/],
    ['maxTokenLength zero', { maxTokenLength: 0 }, /"maxTokenLength"/],
    ['cache.max zero', { cache: { max: 0 } }, /"cache.max"/],
    ['cache.maxBytes fractional', { cache: { maxBytes: 1.5 } }, /"cache.maxBytes"/],
    ['cache.ttl garbage', { cache: { ttl: 'soon' } }, /"cache.ttl"/],
    ['an unknown cache option', { cache: { size: 1 } }, /"cache.size"/],
    ['cache true', { cache: true }, /"cache"/],
    ['isRevoked not a function', { isRevoked: true }, /"isRevoked"/],
    ['getToken not a function', { getToken: 'query' }, /"getToken"/],
    ['onError not a function', { onError: {} }, /"onError"/],
    ['clock not a function', { clock: 5 }, /"clock"/],
    ['allowInsecureHttp not a boolean', { allowInsecureHttp: 'yes' }, /"allowInsecureHttp"/],
  ])('throws a TypeError for %s', (_case, changes, message) => {
    expect(make(changes)).toThrow(TypeError);
    expect(make(changes)).toThrow(message);
  });

  it('requires algorithms with a resolver function', () => {
    expect(make({ key: () => undefined })).toThrow(/"algorithms" is required/);
    expect(make({ key: () => undefined, algorithms: ['RS256'] })).not.toThrow();
  });
});
