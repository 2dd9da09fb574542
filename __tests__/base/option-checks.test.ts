import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { knownFields, positiveInteger } from '../../lib/base/option-checks';
import { CONSUMER_OPTIONS } from '../fixtures/type-check';
import { optionErrorOf } from '../fixtures/option-error';

describe('knownFields', () => {
  const FIELDS = { max: true, ttl: true } as const;

  it('accepts the listed fields, and none', () => {
    expect(() => knownFields({ max: 1, ttl: 2 }, FIELDS, 'cache')).not.toThrow();
    expect(() => knownFields({}, FIELDS, 'cache')).not.toThrow();
  });

  it('refuses any other field as an OptionError at its dotted path', () => {
    const err = optionErrorOf(() => knownFields({ max: 1, size: 2 }, FIELDS, 'cache'));
    expect([err.option, err.message]).toEqual(['cache.size', 'express-verified-user: unknown option "cache.size"']);
    expect(optionErrorOf(() => knownFields({ isuer: 'x' }, FIELDS, '')).option).toBe('isuer');
  });

  it.each(['toString', 'constructor', 'hasOwnProperty', '__proto__'])(
    'refuses %s, a name every object inherits, as it refuses any unlisted name',
    (name) => {
      const value = JSON.parse(`{"${name}": 1}`) as object;
      expect(optionErrorOf(() => knownFields(value, FIELDS, 'cache')).option).toBe(`cache.${name}`);
    },
  );

  it('names the function that takes the options, and the fields it knows, when it is not createTokenAuth', () => {
    const err = optionErrorOf(() => knownFields({ view: 'claims' }, FIELDS, '', 'verifyRouter'));
    expect([err.option, err.message]).toEqual([
      'view',
      'express-verified-user: verifyRouter has no option "view" (known: max, ttl)',
    ]);
  });

  it('words the refusal as the room says, when "unknown" is not the word', () => {
    const err = optionErrorOf(() =>
      knownFields({ cooldown: 5 }, { secret: true }, 'key', undefined, (option, known) => {
        return `option "${option}" does not apply to key.secret (allowed: ${known})`;
      }),
    );
    expect([err.option, err.message]).toEqual([
      'key.cooldown',
      'express-verified-user: option "key.cooldown" does not apply to key.secret (allowed: secret)',
    ]);
  });
});

describe('positiveInteger', () => {
  it.each([1, 2, 10_000, Number.MAX_SAFE_INTEGER])('accepts %p', (value) => {
    expect(positiveInteger(value, 'cache.max', 7)).toBe(value);
  });

  it('gives the fallback when the option is absent', () => {
    expect(positiveInteger(undefined, 'cache.max', 7)).toBe(7);
    expect(positiveInteger(undefined, 'key.maxInflight', undefined)).toBeUndefined();
  });

  it.each([0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, '10', null])('refuses %p at its path', (value) => {
    const err = optionErrorOf(() => positiveInteger(value, 'cache.max', 7));
    expect([err.option, err.message]).toEqual([
      'cache.max',
      'express-verified-user: option "cache.max" must be a positive integer',
    ]);
  });

  it('names the option as the caller says', () => {
    const err = optionErrorOf(() => positiveInteger(0, 'maxPending', 1000, 'createRedisStore option "maxPending"'));
    expect([err.option, err.message]).toEqual([
      'maxPending',
      'express-verified-user: createRedisStore option "maxPending" must be a positive integer',
    ]);
  });
});

/**
 * Each options type with a field list, where it is declared and where its list is: a field added to the type and
 * not listed must fail type-checking, so that no option can be forgotten by its unknown-field check.
 */
const LISTED: ReadonlyArray<[type: string, declaredIn: string, listedIn: string]> = [
  ['TokenAuthOptions', 'lib/config/options.ts', 'lib/config/resolve.ts'],
  ['ResourceOptions', 'lib/config/resource.ts', 'lib/config/resolve.ts'],
  ['CacheOptions', 'lib/config/options.ts', 'lib/config/resolve.ts'],
  ['SecretKeyOption', 'lib/keys/options.ts', 'lib/keys/index.ts'],
  ['PublicKeyOption', 'lib/keys/options.ts', 'lib/keys/index.ts'],
  ['JwksKeyOption', 'lib/keys/options.ts', 'lib/keys/index.ts'],
  ['JwksKeySetOption', 'lib/keys/options.ts', 'lib/keys/index.ts'],
  ['UpstreamKeyOption', 'lib/remote/upstream.ts', 'lib/remote/index.ts'],
  ['BreakerOptions', 'lib/remote/breaker.ts', 'lib/remote/breaker.ts'],
  ['DiscoveryOptions', 'lib/keys/discovery-options.ts', 'lib/keys/discovery-options.ts'],
  ['IntrospectionOptions', 'lib/remote/introspection-options.ts', 'lib/remote/introspection-options.ts'],
  ['ClientCredentials', 'lib/remote/client-auth.ts', 'lib/remote/introspection-options.ts'],
  ['DpopOptions', 'lib/dpop/options.ts', 'lib/dpop/options.ts'],
  ['DpopNonceOptions', 'lib/dpop/options.ts', 'lib/dpop/options.ts'],
  ['MtlsOptions', 'lib/dpop/options.ts', 'lib/dpop/options.ts'],
  ['StepUpOptions', 'lib/token/step-up.ts', 'lib/token/step-up.ts'],
  ['RouteOptions', 'lib/authorize/route.ts', 'lib/authorize/route.ts'],
  ['RouteRequirements', 'lib/authorize/requirement.ts', 'lib/authorize/requirement.ts'],
  ['AuthorizationDetailRequirement', 'lib/authorize/details.ts', 'lib/authorize/details.ts'],
  ['ValueClaimOptions', 'lib/authorize/claim-values.ts', 'lib/config/resolve.ts'],
  ['McpCallRequirement', 'lib/mcp/gates.ts', 'lib/mcp/gates.ts'],
  ['VerifyRouterOptions', 'lib/http/router.ts', 'lib/http/router.ts'],
  ['RequireMcpAuthOptions', 'lib/mcp/require-mcp-auth.ts', 'lib/mcp/require-mcp-auth.ts'],
  ['McpTokenVerifierOptions', 'lib/mcp/token-verifier.ts', 'lib/mcp/token-verifier.ts'],
  ['RedisStoreOptions', 'lib/stores/redis.ts', 'lib/stores/redis.ts'],
];

describe('field lists tied to their options types', () => {
  const root = path.resolve(__dirname, '../..');
  const added = (type: string) => `addedTo${type}`;

  /** Type-check the listing files with one new optional field added to each options type. */
  function diagnosticsWithNewFields(): string[] {
    const edited = new Map<string, string>();
    for (const [type, declaredIn] of LISTED) {
      const file = path.join(root, declaredIn);
      const text = edited.get(file) ?? readFileSync(file, 'utf8');
      const declaration = new RegExp(`export interface ${type}\\b[^{]*\\{`);
      const match = declaration.exec(text);
      if (match === null) throw new Error(`no interface ${type} in ${declaredIn}`);
      const at = match.index + match[0].length;
      edited.set(file, `${text.slice(0, at)}\n  ${added(type)}?: unknown;${text.slice(at)}`);
    }
    const host = ts.createCompilerHost(CONSUMER_OPTIONS);
    const original = host.getSourceFile;
    host.getSourceFile = (name, version, ...rest) => {
      const text = edited.get(path.resolve(name));
      return text === undefined
        ? original.call(host, name, version, ...rest)
        : ts.createSourceFile(name, text, version);
    };
    const roots = [...new Set(LISTED.map(([, , listedIn]) => path.join(root, listedIn)))];
    const program = ts.createProgram(roots, CONSUMER_OPTIONS, host);
    return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }

  it('compiles as it is', () => {
    const roots = [...new Set(LISTED.map(([, , listedIn]) => path.join(root, listedIn)))];
    const program = ts.createProgram(roots, CONSUMER_OPTIONS);
    expect(ts.getPreEmitDiagnostics(program).map((d) => d.messageText)).toEqual([]);
  });

  it('fails to type-check when an options type gains a field its list does not name', () => {
    const found = diagnosticsWithNewFields().join('\n');
    const missing = LISTED.map(([type]) => type).filter((type) => !new RegExp(`\\b${added(type)}\\b`).test(found));
    expect(missing).toEqual([]);
  });
});
