import { generateKeyPairSync } from 'node:crypto';
import { createTokenAuth, type TokenAuthOptions } from '../../lib';
import { clearVariables } from '../fixtures/environment';
import { optionErrorOf } from '../fixtures/option-error';
import { AUDIENCE, ISSUER } from '../fixtures/issuer';

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

describe('key.secret (or another key form) given but undefined', () => {
  it('says key.secret is undefined and that TOKEN_SECRET is unset, not "exactly one of"', () => {
    const message = messageOf({ key: { secret: process.env.TOKEN_SECRET }, issuer: ISSUER, audience: AUDIENCE });
    expect(message).toBe(
      'express-verified-user: option "key.secret" is undefined, so no key is configured. It was probably ' +
        'read from an environment variable that is not set in this process: TOKEN_SECRET is unset (so are TOKEN_PUBLIC_KEY, ' +
        'TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL). Set TOKEN_SECRET (check its spelling and that your .env file is loaded before ' +
        'createTokenAuth runs), or pass another key form',
    );
    expect(message).not.toMatch(/exactly one of/);
  });

  it('lists only the key variables that really are unset', () => {
    process.env.TOKEN_JWKS_URI = 'https://issuer.example/jwks';
    const message = messageOf({ key: { publicKey: undefined }, issuer: ISSUER, audience: AUDIENCE });
    expect(message).toMatch(/"key\.publicKey" is undefined/);
    expect(message).toMatch(/TOKEN_PUBLIC_KEY is unset \(so are TOKEN_SECRET, TOKEN_UPSTREAM_URL\)/);
  });

  it('says the value came from elsewhere when the conventional variable is set', () => {
    process.env.TOKEN_SECRET = 'x'.repeat(40);
    const message = messageOf({ key: { secret: process.env.TOKEN_SECRT }, issuer: ISSUER, audience: AUDIENCE });
    expect(message).toMatch(
      /TOKEN_SECRET is set in process\.env, so the value was read from somewhere else: check the variable name/,
    );
    expect(message).not.toContain('x'.repeat(40)); // names, never values
  });

  it('names a variable set under a misspelt name (TOKEN_SECERT) as the likely cause, not "TOKEN_SECRET is unset"', () => {
    process.env.TOKEN_SECERT = 'y'.repeat(40);
    try {
      const message = messageOf({ key: { secret: process.env.TOKEN_SECRET }, issuer: ISSUER, audience: AUDIENCE });
      expect(message).toBe(
        'express-verified-user: option "key.secret" is undefined, so no key is configured. It was probably ' +
          'read from TOKEN_SECRET, which is not set in this process; TOKEN_SECERT is set instead: a misspelling of TOKEN_SECRET? ' +
          'Rename it to TOKEN_SECRET',
      );
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
  const VARIABLES = ['ISSUER_BASE_URL', 'TOKEN_ISSUER_BASE_URL', 'ISSUER_BASEURL', 'AUDIENCE', 'TOKEN_AUDIENCE'];
  let put: () => void;
  beforeEach(() => {
    put = clearVariables(VARIABLES);
  });
  afterEach(() => put());

  /** The OptionError createTokenAuth throws for these options. */
  const refusal = (options: unknown) => optionErrorOf(() => createTokenAuth(options as TokenAuthOptions).close());

  it('issuerBaseURL: process.env.ISSUER_BASE_URL unset names issuerBaseURL and the variables, not "key is required"', () => {
    const err = refusal({ issuerBaseURL: process.env.ISSUER_BASE_URL, audience: AUDIENCE });
    expect(err.option).toBe('issuerBaseURL');
    expect(err.message).toBe(
      'express-verified-user: option "issuerBaseURL" was given as undefined: probably read from an environment ' +
        'variable that is not set in this process (ISSUER_BASE_URL and TOKEN_ISSUER_BASE_URL are unset). Set the ' +
        'variable your code reads (and load your .env file before createTokenAuth runs), or give key (and issuer) instead',
    );
  });

  it('names a near miss that is set (ISSUER_BASEURL), names only', () => {
    process.env.ISSUER_BASEURL = 'https://secret-looking.example';
    const err = refusal({ issuerBaseURL: process.env.ISSUER_BASE_URL, audience: AUDIENCE });
    expect(err.option).toBe('issuerBaseURL');
    expect(err.message).toMatch(/are unset; ISSUER_BASEURL is set: a misspelling of ISSUER_BASE_URL\?\)/);
    expect(err.message).not.toContain('secret-looking');
  });

  it('says the value came from elsewhere when the conventional variable is set', () => {
    process.env.TOKEN_ISSUER_BASE_URL = 'https://as.example';
    const err = refusal({ issuerBaseURL: process.env.ISSUER_BASE_URL, audience: AUDIENCE });
    expect(err.message).toMatch(
      /"issuerBaseURL" was given as undefined, though TOKEN_ISSUER_BASE_URL is set in process\.env/,
    );
  });

  it('audience and issuer given as undefined say so, each with its own option path', () => {
    const audience = refusal({ key: { secret: 's'.repeat(32) }, issuer: ISSUER, audience: process.env.AUDIENCE });
    expect(audience.option).toBe('audience');
    expect(audience.message).toMatch(/"audience" was given as undefined: .*\(AUDIENCE and TOKEN_AUDIENCE are unset\)/);
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
