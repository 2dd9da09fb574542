/**
 * Refusal hints (lib/config/refusal-hints.ts): every reason a room of lib/ refuses with has a row; each row, under
 * every form of configuration, answers a non-empty hint that names the option it comes from; and no hint holds
 * the token beyond its short header fields, quoted and cut.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { TokenAuthError, type TokenAuthErrorCode } from '../../lib';
import { resolveOptions } from '../../lib/config/resolve';
import { HINTED_REASONS, refusalHints } from '../../lib/config/refusal-hints';
import type { TokenAuthOptions } from '../../lib/config/options';
import { SECRET } from '../fixtures/issuer';

const LIB = join(__dirname, '..', '..', 'lib');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * The reasons lib/ refuses with, read from its source: `reason: '…'` and the rooms' reason makers (`invalid('…')`,
 * `invalidProof('…')` → `dpop:…`, step-up's `refused(stepUp, '…')` → `step-up:…`, …). A template keeps its text
 * before the first `${`: `upstream-${failure}` is the `upstream-` family.
 */
function reasonsInLib(): Set<string> {
  const found = new Set<string>();
  const add = (text: string, prefix = '') => {
    const head = text.split('${')[0];
    if (head !== '') found.add(prefix + head);
  };
  for (const file of sources(LIB)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/reason: ['`]([^'`]+)['`]/g)) add(m[1]);
    for (const m of text.matchAll(/\b(?:invalid|refuse|unbelievable|unavailable|DiscoveryError)\(\s*['`]([^'`]+)['`]/g))
      add(m[1]);
    for (const m of text.matchAll(/\binvalidProof\(\s*'([^']+)'/g)) add(m[1], 'dpop:');
    for (const m of text.matchAll(/\brefused\(stepUp, '([^']+)'/g)) add(m[1], 'step-up:');
    for (const m of text.matchAll(/limitInflight\([^)]*'([a-z-]+-busy)'/g)) add(m[1]);
    for (const m of text.matchAll(/^\s*'([a-z]+-busy)',$/gm)) add(m[1]);
  }
  return found;
}

const covered = (reason: string) =>
  HINTED_REASONS.exact.includes(reason) || HINTED_REASONS.prefixes.some((prefix) => reason.startsWith(prefix));

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });

/** The configurations hints are made for: each key form, the audience from a resource, introspection, DPoP. */
const CONFIGURATIONS: Record<string, TokenAuthOptions> = {
  'key.secret': { key: { secret: SECRET }, issuer: 'https://as.example', audience: 'api' },
  'key.publicKey': { key: { publicKey: ec.publicKey }, issuer: 'https://as.example', audience: ['a', 'b'] },
  'key.jwksUri': { key: { jwksUri: 'https://as.example/jwks' }, issuer: 'https://as.example', audience: 'api' },
  'a key resolver': { key: () => ec.publicKey, algorithms: ['ES256'], issuer: false, audience: false },
  issuerBaseURL: { issuerBaseURL: 'https://as.example', resource: 'https://api.example/mcp', claims: 'at+jwt' },
  'key.upstream': { key: { upstream: 'https://id.example' }, issuer: 'id.example', audience: 'api' },
  introspection: {
    issuerBaseURL: 'https://as.example',
    audience: 'api',
    introspection: { clientId: 'api', clientSecret: 'secret-of-the-api-client' },
    dpop: { nonce: { secret: 'n'.repeat(32) } },
    typ: ['at+jwt', 'jwt'],
  },
};

/** A hostile header: an alg and typ long enough to be cut, a kid that tries to forge a line. */
const HOSTILE = { alg: `ES256${'x'.repeat(400)}`, typ: `JWT\n${'t'.repeat(400)}`, kid: 'k1\nFORGED', iss: 'evil' };

/** The reasons found in lib/, with the families' detail filled in as a room would. */
function reasonsToHint(): string[] {
  const samples: Record<string, string> = {
    'shape:': 'shape:providers',
    'at+jwt:': 'at+jwt:client_id',
    'required:': 'required:tenant',
    'upstream-': 'upstream-timeout',
    'upstream-status-': 'upstream-status-502',
    'introspection-': 'introspection-network',
    'introspection-status-': 'introspection-status-500',
    'jwks-': 'jwks-timeout',
    'discovery-': 'discovery-json',
    'discovery-status-': 'discovery-status-404',
    'upstream-shape:': 'upstream-shape:providers',
    'step-up:': 'step-up:acr',
  };
  return [...reasonsInLib()].map((reason) => samples[reason] ?? reason).concat(['header-json', 'payload-type']);
}

/** The status of the code a reason comes with: the tests below ask refusals (401, 403, 503) to name an option. */
function codeOf(reason: string): TokenAuthErrorCode {
  if (/threw|non-key|shape$|unexpected|another-TokenAuth/.test(reason)) return 'internal';
  if (reason.startsWith('step-up:')) return 'insufficient_user_authentication';
  if (reason === 'scope' || reason === 'upstream-403') return 'insufficient_scope';
  if (
    /^(jwks-|discovery-|breaker|store-|revocation-not|revoke-outcome|dpop:replay-)|busy$|-status-|-timeout|-network/.test(
      reason,
    )
  )
    return 'verification_unavailable';
  if (reason === 'method') return 'method_not_allowed';
  if (reason === 'view') return 'invalid_request';
  if (reason === 'profile') return 'not_found';
  return 'invalid_token';
}

describe('refusal hints', () => {
  it('have a row for every reason lib/ refuses with (a new reason needs its row in config/refusal-hints.ts)', () => {
    const reasons = [...reasonsInLib()];
    // The scan itself finds the rooms' reasons: a broken pattern would pass the check below vacuously.
    expect(reasons).toEqual(
      expect.arrayContaining(['aud', 'alg', 'typ', 'signature', 'exp', 'kid-unknown', 'dpop:htu', 'step-up:acr']),
    );
    expect(reasons.length).toBeGreaterThan(60);
    expect(reasons.filter((reason) => !covered(reason))).toEqual([]);
  });

  describe.each(Object.entries(CONFIGURATIONS))('with %s', (_form, options) => {
    const explain = refusalHints(resolveOptions(options as TokenAuthOptions<never>));

    it('every reason: a non-empty hint that names what was expected and the option, never the token', () => {
      const problems: string[] = [];
      for (const reason of reasonsToHint()) {
        const code = codeOf(reason);
        const err = new TokenAuthError(code, {
          reason,
          facts: HOSTILE,
          scope: 'read write',
          acrValues: 'urn:mfa',
          maxAge: 600,
        });
        const hint = explain(err);
        // A token in the URL is refused by RFC 6750 §2.3 and §5.3, not by an option: its hint names none.
        const refusal =
          !['internal', 'method_not_allowed', 'not_found', 'invalid_request'].includes(code) &&
          reason !== 'token-in-query';
        if (hint.trim() === '') problems.push(`${reason}: empty`);
        if (refusal && !/option "|options "|claims: '/.test(hint)) problems.push(`${reason}: names no option: ${hint}`);
        // The token's header fields appear quoted and cut at 128 characters at most; its kid and iss never.
        if (/x{129}|t{129}|\n|FORGED|evil/.test(hint))
          problems.push(`${reason}: holds more of the token than allowed: ${hint}`);
      }
      expect(problems).toEqual([]);
    });

    it('keeps a hint the refusing room set (what a key address answered)', () => {
      const err = new TokenAuthError('verification_unavailable', { reason: 'jwks-fetch', hint: 'room hint' });
      expect(explain(err)).toBe('room hint');
    });

    it('falls back on the code for a reason no row names', () => {
      for (const code of ['invalid_token', 'verification_unavailable', 'missing_token'] as const) {
        const hint = explain(new TokenAuthError(code, { reason: code === 'missing_token' ? undefined : 'new-reason' }));
        expect(hint).toMatch(/option "|options "|claims: '/);
      }
    });
  });
});

describe('the hints the issue names, word for word', () => {
  const hintOf = (options: TokenAuthOptions, reason: string, facts: Record<string, string> = {}) =>
    refusalHints(resolveOptions(options as TokenAuthOptions<never>))(
      new TokenAuthError(reason === 'jwks-fetch' ? 'verification_unavailable' : 'invalid_token', { reason, facts }),
    );
  const secret: TokenAuthOptions = { key: { secret: SECRET }, issuer: 'https://as.example', audience: 'api' };

  it('aud: the audiences, from option "audience", or from option "resource"', () => {
    expect(hintOf(secret, 'aud')).toMatch(/^expected aud "api", from option "audience"; /);
    expect(hintOf({ ...secret, audience: ['a', 'b', 'c'] }, 'aud')).toMatch(
      /^expected aud "a", "b" or "c", from option "audience"/,
    );
    expect(hintOf({ ...secret, audience: undefined, resource: 'https://api.example/mcp' }, 'aud')).toMatch(
      /^expected aud "https:\/\/api.example\/mcp", from option "resource"/,
    );
  });

  it('alg: the algorithms the key allows, the one the token used, and the key an ES256 token needs', () => {
    expect(hintOf(secret, 'alg', { alg: 'ES256' })).toBe(
      'expected alg "HS256": what option "key.secret" allows (option "algorithms" narrows it, within what the key fits); ' +
        'the token used "ES256": a ES256 token needs an EC key of its curve: option "key.publicKey", "key.jwksUri" or "issuerBaseURL", not option "key.secret"',
    );
    expect(hintOf(secret, 'alg', { alg: 'HS384' })).toMatch(/the token used "HS384": add it to option "algorithms"/);
    expect(hintOf(secret, 'alg', { alg: 'none' })).toMatch(/"none" is never accepted, whatever the options$/);
  });

  it('typ: the values accepted, from claims: \'at+jwt\' or option "typ"; another kind of JWT in every mode', () => {
    expect(hintOf({ ...secret, claims: 'at+jwt' }, 'typ', { typ: 'JWT' })).toBe(
      'expected typ "at+jwt" (with or without "application/", any case), from claims: \'at+jwt\' (RFC 9068 §2.1); the token\'s typ is "JWT"',
    );
    expect(hintOf({ ...secret, claims: 'jwt', typ: ['at+jwt', 'jwt'] }, 'typ')).toMatch(
      /^expected typ "at\+jwt" or "jwt" .*, from option "typ"; the token has no typ$/,
    );
    expect(hintOf(secret, 'typ', { typ: 'id_token+jwt' })).toMatch(
      /names another kind of JWT .* refused in every claims mode/,
    );
  });

  it("shape: under the default 'strict', the mode that fits a standard token", () => {
    expect(hintOf(secret, 'shape:scopes')).toBe(
      "Shape B's scopes is missing or malformed; claims: 'strict' (the default with option \"key\") accepts only the identity service's Shape B; tokens of other authorization servers (OpenID Connect, RFC 9068) need claims: 'jwt' or 'at+jwt'",
    );
  });
});

describe('token exchange hints: what the token endpoint did', () => {
  const explain = refusalHints(
    resolveOptions({
      issuerBaseURL: 'https://as.example',
      audience: 'api',
      tokenExchange: { clientId: 'api', clientSecret: 'secret-of-the-api-client' },
    } as TokenAuthOptions<never>),
  );
  const hintOf = (code: TokenAuthErrorCode, reason: string) => explain(new TokenAuthError(code, { reason }));

  it('a 400 without a standard error code is a refusal of this exchange, never an outage', () => {
    expect(hintOf('exchange_refused', 'exchange-status-400')).toBe(
      'the token endpoint of option "tokenExchange" refused this exchange (HTTP 400) without an error code of RFC 6749 §5.2',
    );
  });

  it('our client refused, no endpoint, and outages each say so', () => {
    expect(hintOf('verification_unavailable', 'exchange-client-auth')).toMatch(/refused our client authentication/);
    expect(hintOf('verification_unavailable', 'exchange-endpoint-missing')).toMatch(/"tokenExchange.endpoint"/);
    expect(hintOf('verification_unavailable', 'exchange-status-502')).toMatch(/could not be reached, timed out/);
  });
});
