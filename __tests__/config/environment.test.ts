// The TOKEN_* environment variables read into createTokenAuth's options: every problem named in one TypeError, by
// variable name, never by value.
import { createTokenAuth } from '../../lib';
import { optionsFromEnv } from '../../lib/config/environment';
import { AUDIENCE, ISSUER, SECRET } from '../fixtures/issuer';

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
