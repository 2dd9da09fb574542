import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { clearVariables } from '../fixtures/environment';
import { optionErrorOf } from '../fixtures/option-error';
import { AUDIENCE, ISSUER } from '../fixtures/issuer';
import { optionsFromEnv } from '../../lib/config/environment';

// Misconfiguration names its cause: the first run of a new app fails with a sentence the user can act on.

const KEY_VARIABLES = ['TOKEN_SECRET', 'TOKEN_PUBLIC_KEY', 'TOKEN_JWKS_URI', 'TOKEN_UPSTREAM_URL'];
let restore: () => void;
beforeEach(() => {
  restore = clearVariables(KEY_VARIABLES);
});
afterEach(() => restore());

function messageOf(options: unknown): string {
  try {
    createTokenAuth(options as TokenAuthOptions).close();
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  throw new Error('createTokenAuth accepted the options');
}

const PEM = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString();

const UNSET =
  ': if your code read it from an environment variable, that variable is probably unset in this process. Set it ' +
  '(check the name your code reads, and that your .env file is loaded before createTokenAuth runs), or ';

describe('key.secret (or another key form) given but undefined', () => {
  it('says key.secret was given as undefined and that a variable it was read from is probably unset, not "exactly one of"', () => {
    const message = messageOf({ key: { secret: process.env.TOKEN_SECRET }, issuer: ISSUER, audience: AUDIENCE });
    expect(message).toBe(
      `express-verified-user: option "key.secret" was given as undefined, so no key is configured${UNSET}pass another key form`,
    );
    expect(message).not.toMatch(/exactly one of/);
  });

  it('names no variable the package cannot know, whatever the code read (JWT_SECRET) or the environment holds', () => {
    process.env.TOKEN_SECRET = 'x'.repeat(40);
    process.env.TOKEN_SECERT = 'y'.repeat(40);
    try {
      const message = messageOf({ key: { secret: process.env.JWT_SECRET }, issuer: ISSUER, audience: AUDIENCE });
      expect(message).toBe(
        `express-verified-user: option "key.secret" was given as undefined, so no key is configured${UNSET}pass another key form`,
      );
      expect(message).not.toMatch(/TOKEN_|JWT_/);
      const publicKey = messageOf({ key: { publicKey: undefined }, issuer: ISSUER, audience: AUDIENCE });
      expect(publicKey).toMatch(/^express-verified-user: option "key\.publicKey" was given as undefined, so no key/);
      expect(publicKey).not.toMatch(/TOKEN_/);
    } finally {
      delete process.env.TOKEN_SECERT;
    }
  });

  it('says an empty secret is empty, as an environment variable set to nothing gives it', () => {
    expect(messageOf({ key: { secret: '' }, issuer: ISSUER, audience: AUDIENCE })).toBe(
      'express-verified-user: key.secret is empty (an environment variable set to an empty string, such as TOKEN_SECRET=?)',
    );
  });

  it('still says "exactly one of" for an empty key object', () => {
    expect(messageOf({ key: {}, issuer: ISSUER, audience: AUDIENCE })).toMatch(/exactly one of/);
  });
});

describe('an option given as undefined (an unset variable) says so, not that another option is missing', () => {
  const VARIABLES = ['ISSUER_BASE_URL', 'TOKEN_ISSUER_BASE_URL', 'AUTH0_ISSUER_BASE_URL', 'AUDIENCE', 'TOKEN_AUDIENCE'];
  let put: () => void;
  beforeEach(() => {
    put = clearVariables(VARIABLES);
  });
  afterEach(() => put());

  /** The OptionError createTokenAuth throws for these options. */
  const refusal = (options: unknown) => optionErrorOf(() => createTokenAuth(options as TokenAuthOptions).close());

  it('issuerBaseURL: process.env.AUTH0_ISSUER_BASE_URL unset names issuerBaseURL, and no variable, not "key is required"', () => {
    const err = refusal({ issuerBaseURL: process.env.AUTH0_ISSUER_BASE_URL, audience: AUDIENCE });
    expect(err.option).toBe('issuerBaseURL');
    expect(err.message).toBe(
      `express-verified-user: option "issuerBaseURL" was given as undefined${UNSET}give key (and issuer) instead`,
    );
  });

  it('names no conventional variable even when one is set: the code may have read any other', () => {
    process.env.TOKEN_ISSUER_BASE_URL = 'https://as.example';
    process.env.ISSUER_BASE_URL = 'https://secret-looking.example';
    const err = refusal({ issuerBaseURL: process.env.AUTH0_ISSUER_BASE_URL, audience: AUDIENCE });
    expect(err.message).not.toMatch(/ISSUER_BASE_URL|secret-looking/);
  });

  it('audience and issuer given as undefined say so, each with its own option path', () => {
    const audience = refusal({ key: { secret: 's'.repeat(32) }, issuer: ISSUER, audience: process.env.AUDIENCE });
    expect(audience.option).toBe('audience');
    expect(audience.message).toBe(
      `express-verified-user: option "audience" was given as undefined${UNSET}pass false to leave the audience unchecked on purpose`,
    );
    const issuer = refusal({ key: { secret: 's'.repeat(32) }, issuer: undefined, audience: AUDIENCE });
    expect(issuer.option).toBe('issuer');
    expect(issuer.message).toMatch(/"issuer" was given as undefined: .*or pass false to leave the issuer unchecked/);
  });

  it('leaves the old messages where the option is truly absent, and accepts issuerBaseURL: undefined beside a key', () => {
    expect(refusal({ audience: AUDIENCE }).message).toMatch(/option "key" is required/);
    expect(refusal({ key: { secret: 's'.repeat(32) }, audience: AUDIENCE }).message).toMatch(
      /option "issuer" is required/,
    );
    expect(() =>
      createTokenAuth({
        issuerBaseURL: undefined,
        key: { secret: 's'.repeat(32) },
        issuer: ISSUER,
        audience: AUDIENCE,
      }).close(),
    ).not.toThrow();
  });

  it('the default instance, which reads TOKEN_* itself, still names its own variables', () => {
    expect(() => optionsFromEnv({ TOKEN_SECERT: 'x'.repeat(40), TOKEN_AUDIENCE: 'api', TOKEN_ISSUER: 'i' })).toThrow(
      /no key configured: set one of TOKEN_SECRET, .*\(TOKEN_SECERT is set: a misspelling of TOKEN_SECRET\?\)/,
    );
  });
});

describe('key.publicKey that is not a readable PEM', () => {
  const read = (publicKey: string) => messageOf({ key: { publicKey }, issuer: ISSUER, audience: AUDIENCE });

  it('hints at literal \\n escapes (a PEM pasted into one line)', () => {
    const message = read(PEM.trim().replace(/\n/g, '\\n'));
    expect(message).toMatch(
      /^express-verified-user: key\.publicKey could not be read as a public key: it holds literal "\\n" sequences where the PEM needs line breaks/,
    );
  });

  it('hints at surrounding quotes', () => {
    const message = read(`"${PEM.trim()}"`);
    expect(message).toMatch(/could not be read as a public key: it is wrapped in quotes, which are part of the value/);
  });

  it('says when there is no PEM armour at all', () => {
    expect(read('MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE')).toMatch(/it has no "-----BEGIN PUBLIC KEY-----" line/);
  });
});
