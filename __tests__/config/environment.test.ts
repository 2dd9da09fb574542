import { createTokenAuth, OptionError } from '../../lib';
import { fromVariable, optionsFromEnv } from '../../lib/config/environment';
import { AUDIENCE, ISSUER } from '../fixtures/issuer';
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
