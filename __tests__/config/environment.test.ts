// The TOKEN_* environment variables read into createTokenAuth's options: every problem named in one TypeError, by
// variable name, never by value.
import { createTokenAuth, OptionError } from '../../lib';
import { fromVariable, optionsFromEnv } from '../../lib/config/environment';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';
import { optionErrorOf } from '../fixtures/option-error';

describe('optionsFromEnv', () => {
  it.each([
    ['key', { TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE }],
    [
      'key',
      {
        TOKEN_SECRET: 'x'.repeat(32),
        TOKEN_JWKS_URI: 'https://a.example/jwks',
        TOKEN_ISSUER: ISSUER,
        TOKEN_AUDIENCE: AUDIENCE,
      },
    ],
    ['issuer', { TOKEN_SECRET: 'x'.repeat(32), TOKEN_AUDIENCE: AUDIENCE }],
    ['audience', { TOKEN_SECRET: 'x'.repeat(32), TOKEN_ISSUER: ISSUER }],
    [
      'algorithms',
      { TOKEN_SECRET: 'x'.repeat(32), TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE, TOKEN_ALGORITHMS: 'none' },
    ],
    ['claims', { TOKEN_SECRET: 'x'.repeat(32), TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE, TOKEN_CLAIMS: 'loose' }],
    [
      'scopeClaim',
      { TOKEN_SECRET: 'x'.repeat(32), TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE, TOKEN_SCOPE_CLAIM: ',' },
    ],
    ['', {}],
  ])(
    'refuses with an OptionError at "%s", the option the variable feeds (the options object for several)',
    (option, env) => {
      expect(optionErrorOf(() => optionsFromEnv(env)).option).toBe(option);
    },
  );
});

describe('fromVariable', () => {
  /** The error createTokenAuth throws for these environment variables, as the default TokenAuth reports it. */
  function reported(env: NodeJS.ProcessEnv): OptionError {
    const options = optionsFromEnv({ TOKEN_AUDIENCE: AUDIENCE, ...env });
    const err = fromVariable(optionErrorOf(() => createTokenAuth(options)));
    expect(err).toBeInstanceOf(OptionError);
    return err as OptionError;
  }

  it.each([
    ['key.secret', 'TOKEN_SECRET', { TOKEN_SECRET: 'short', TOKEN_ISSUER: ISSUER }],
    ['key.publicKey', 'TOKEN_PUBLIC_KEY', { TOKEN_PUBLIC_KEY: 'not a key', TOKEN_ISSUER: ISSUER }],
    ['key.jwksUri', 'TOKEN_JWKS_URI', { TOKEN_JWKS_URI: 'http://a.example/jwks', TOKEN_ISSUER: ISSUER }],
    ['key.upstream', 'TOKEN_UPSTREAM_URL', { TOKEN_UPSTREAM_URL: 'http://a.example', TOKEN_ISSUER: ISSUER }],
    ['issuerBaseURL', 'TOKEN_ISSUER_BASE_URL', { TOKEN_ISSUER_BASE_URL: 'http://a.example' }],
    ['issuerBaseURL[1]', 'TOKEN_ISSUER_BASE_URL', { TOKEN_ISSUER_BASE_URL: 'https://a.example,http://b.example' }],
    ['issuer', 'TOKEN_ISSUER', { TOKEN_ISSUER_BASE_URL: 'https://a.example', TOKEN_ISSUER: ISSUER }],
    [
      'algorithms',
      'TOKEN_ALGORITHMS',
      { TOKEN_SECRET: 'x'.repeat(32), TOKEN_ISSUER: ISSUER, TOKEN_ALGORITHMS: 'RS256' },
    ],
  ])('names the variable an error at "%s" came from: %s', (option, variable, env) => {
    const err = reported(env);
    expect(err.option).toBe(option);
    expect(err.message).toMatch(new RegExp(`\\[from ${variable}\\]$`));
  });

  it('reads the option, not the message: an error whose words name another option keeps its own variable', () => {
    // "… may not name an HS* algorithm with key.jwksUri": the algorithms came from TOKEN_ALGORITHMS.
    const err = reported({ TOKEN_JWKS_URI: 'https://a.example/jwks', TOKEN_ISSUER: ISSUER, TOKEN_ALGORITHMS: 'HS256' });
    expect(err.message).toContain('key.jwksUri');
    expect([err.option, err.message.endsWith('[from TOKEN_ALGORITHMS]')]).toEqual(['algorithms', true]);
  });

  it('leaves an error of another kind, and an option no variable feeds, as they are', () => {
    const plain = new TypeError('express-verified-user: option "key.secret" is wrong');
    expect(fromVariable(plain)).toBe(plain);
    const unfed = new OptionError('cache.max', 'express-verified-user: option "cache.max" must be a positive integer');
    expect(fromVariable(unfed)).toBe(unfed);
  });
});

describe('optionsFromEnv', () => {
  function messageOf(env: NodeJS.ProcessEnv): string {
    try {
      optionsFromEnv(env);
    } catch (err) {
      expect(err).toBeInstanceOf(TypeError);
      return (err as Error).message;
    }
    throw new Error('optionsFromEnv accepted the environment');
  }

  it('names every missing or wrong variable in one TypeError, never a value', () => {
    const message = messageOf({
      TOKEN_CLAIMS: 'oidc-secret-word',
      TOKEN_SCOPE_CLAIM: 'scope,,scp',
      TOKEN_ALGORITHMS: 'HS256,none',
    });
    expect(message).toBe(
      [
        'express-verified-user: the environment does not configure the default TokenAuth:',
        '- no key configured: set one of TOKEN_SECRET, TOKEN_PUBLIC_KEY, TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL, TOKEN_ISSUER_BASE_URL',
        '- set TOKEN_ISSUER (a value, a comma-separated list, or "false" to leave it unchecked on purpose)',
        '- set TOKEN_AUDIENCE (a value, a comma-separated list, or "false" to leave it unchecked on purpose)',
        '- TOKEN_ALGORITHMS must be a comma-separated list of supported algorithms (HS256, RS256, ES256, EdDSA, …; never none)',
        '- TOKEN_CLAIMS must be strict, jwt or at+jwt',
        '- TOKEN_SCOPE_CLAIM must be claim names separated by commas, none empty',
      ].join('\n'),
    );
    expect(message).not.toContain('oidc-secret-word');
  });

  it('names a variable set under a misspelt name as the likely cause, by name only', () => {
    const message = messageOf({
      TOKEN_SECERT: 's3cret-value-never-shown',
      TOKEN_ISSUER: ISSUER,
      token_audience: AUDIENCE,
    });
    expect(message).toContain(
      'no key configured: set one of TOKEN_SECRET, TOKEN_PUBLIC_KEY, TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL, ' +
        'TOKEN_ISSUER_BASE_URL (TOKEN_SECERT is set: a misspelling of TOKEN_SECRET?)',
    );
    expect(message).toContain(
      'set TOKEN_AUDIENCE (a value, a comma-separated list, or "false" to leave it unchecked on purpose) ' +
        '(token_audience is set: a misspelling of TOKEN_AUDIENCE?)',
    );
    expect(message).not.toContain('s3cret-value-never-shown');
    expect(messageOf({ TOKEN_ISSUER_BASEURL: 'https://a.example', TOKEN_AUDIENCE: AUDIENCE })).toBe(
      'express-verified-user: no key configured: set one of TOKEN_SECRET, TOKEN_PUBLIC_KEY, TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL, ' +
        'TOKEN_ISSUER_BASE_URL (TOKEN_ISSUER_BASEURL is set: a misspelling of TOKEN_ISSUER_BASE_URL?)',
    );
  });

  it('reads comma lists, "false", and TOKEN_ALGORITHMS', () => {
    const options = optionsFromEnv({
      TOKEN_SECRET: SECRET,
      TOKEN_ISSUER: 'a.example, b.example',
      TOKEN_AUDIENCE: 'false',
      TOKEN_ALGORITHMS: 'HS256,HS512',
    });
    expect(options).toEqual({
      key: { secret: SECRET },
      issuer: ['a.example', 'b.example'],
      audience: false,
      algorithms: ['HS256', 'HS512'],
    });
  });

  it('maps each key variable to its key form', () => {
    const rest = { TOKEN_ISSUER: ISSUER, TOKEN_AUDIENCE: AUDIENCE };
    expect(
      optionsFromEnv({ ...rest, TOKEN_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\\nAAA\\n-----END PUBLIC KEY-----' }).key,
    ).toEqual({ publicKey: '-----BEGIN PUBLIC KEY-----\nAAA\n-----END PUBLIC KEY-----' });
    expect(optionsFromEnv({ ...rest, TOKEN_JWKS_URI: 'https://i.example/jwks' }).key).toEqual({
      jwksUri: 'https://i.example/jwks',
    });
    expect(optionsFromEnv({ ...rest, TOKEN_UPSTREAM_URL: 'https://i.example/api' }).key).toEqual({
      upstream: 'https://i.example/api',
    });
  });
});

describe('TOKEN_CLAIMS and TOKEN_SCOPE_CLAIM', () => {
  it('reads the claims mode and the scope claims, comma-separated', () => {
    const options = optionsFromEnv({
      TOKEN_SECRET: SECRET,
      TOKEN_ISSUER: ISSUER,
      TOKEN_AUDIENCE: AUDIENCE,
      TOKEN_CLAIMS: 'jwt',
      TOKEN_SCOPE_CLAIM: 'permissions, scope',
    });
    expect(options).toMatchObject({ claims: 'jwt', scopeClaim: ['permissions', 'scope'] });
  });
});

describe('TOKEN_ISSUER_BASE_URL', () => {
  it('reads one base URL, or a comma list for several issuers', () => {
    expect(optionsFromEnv({ TOKEN_ISSUER_BASE_URL: 'https://a.example/', TOKEN_AUDIENCE: AUDIENCE })).toEqual({
      issuerBaseURL: 'https://a.example/',
      audience: AUDIENCE,
    });
    expect(
      optionsFromEnv({
        TOKEN_ISSUER_BASE_URL: 'https://a.example, https://b.example',
        TOKEN_AUDIENCE: AUDIENCE,
        TOKEN_ALGORITHMS: 'EdDSA',
      }),
    ).toEqual({ issuerBaseURL: ['https://a.example', 'https://b.example'], audience: AUDIENCE, algorithms: ['EdDSA'] });
  });

  it('takes TOKEN_CLAIMS and TOKEN_SCOPE_CLAIM with it, as every key variable does', () => {
    expect(
      optionsFromEnv({
        TOKEN_ISSUER_BASE_URL: 'https://a.example',
        TOKEN_AUDIENCE: AUDIENCE,
        TOKEN_CLAIMS: 'at+jwt',
        TOKEN_SCOPE_CLAIM: 'scp',
      }),
    ).toEqual({ issuerBaseURL: 'https://a.example', audience: AUDIENCE, claims: 'at+jwt', scopeClaim: ['scp'] });
  });

  it('is a key variable: refused together with another one', () => {
    expect(() =>
      optionsFromEnv({
        TOKEN_ISSUER_BASE_URL: 'https://a.example',
        TOKEN_JWKS_URI: 'https://a.example/jwks',
        TOKEN_AUDIENCE: AUDIENCE,
      }),
    ).toThrow(/set only one of/);
  });

  it('passes TOKEN_ISSUER on, for createTokenAuth to refuse', () => {
    const options = optionsFromEnv({
      TOKEN_ISSUER_BASE_URL: 'https://a.example',
      TOKEN_ISSUER: 'https://a.example',
      TOKEN_AUDIENCE: AUDIENCE,
    });
    expect(() => createTokenAuth(options)).toThrow(/"issuerBaseURL" replaces "issuer"/);
  });
});
