// The options of the top-level auth that token-auth.ts builds from TOKEN_* environment variables. Every missing
// or wrong variable is named in one TypeError, with near-miss names that were set instead; never a value.
import { resolveClaimsMode } from '../token/claim-modes';
import { isSupportedAlgorithm, type Algorithm } from '../jose/algorithms';
import type { KeyOption } from './options';
import { misspellingNote, misspellingsOf } from '../base/env-names';
import { optionError, OptionError } from '../base/option-error';
import type { TokenAuthOptions } from './options';

/** The variables that each give the key, one of which must be set. */
export const KEY_VARIABLES = [
  'TOKEN_SECRET',
  'TOKEN_PUBLIC_KEY',
  'TOKEN_JWKS_URI',
  'TOKEN_UPSTREAM_URL',
  'TOKEN_ISSUER_BASE_URL',
] as const;

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const isSet = (env: NodeJS.ProcessEnv, name: string) => env[name] !== undefined && env[name]?.trim() !== '';

/** The problems found so far, each a sentence naming a variable and the option it feeds; thrown together by `optionsFromEnv`. */
type Problems = Array<{ option: string; text: string }>;

/** TOKEN_ISSUER or TOKEN_AUDIENCE: a value, a comma list, or "false". */
function accepted(
  env: NodeJS.ProcessEnv,
  name: 'TOKEN_ISSUER' | 'TOKEN_AUDIENCE',
  problems: Problems,
): string | string[] | false {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    problems.push({
      option: name === 'TOKEN_ISSUER' ? 'issuer' : 'audience',
      text: `set ${name} (a value, a comma-separated list, or "false" to leave it unchecked on purpose)${misspellingNote(name, env)}`,
    });
    return false;
  }
  if (value.trim() === 'false') return false;
  const values = list(value);
  return values.length === 1 ? values[0] : values;
}

/** The key variable's option (undefined with a problem noted when none, or more than one, is set). */
function keyFromEnv(
  env: NodeJS.ProcessEnv,
  problems: Problems,
): { name: (typeof KEY_VARIABLES)[number]; value: string } | undefined {
  const set = KEY_VARIABLES.filter((name) => isSet(env, name));
  if (set.length > 1) {
    problems.push({ option: 'key', text: `set only one of ${KEY_VARIABLES.join(', ')} (found ${set.join(' and ')})` });
    return undefined;
  }
  if (set.length === 0) {
    const notes = KEY_VARIABLES.map((name) => misspellingNote(name, env)).join('');
    problems.push({ option: 'key', text: `no key configured: set one of ${KEY_VARIABLES.join(', ')}${notes}` });
    return undefined;
  }
  return { name: set[0], value: env[set[0]] as string };
}

/** TOKEN_ALGORITHMS, TOKEN_CLAIMS and TOKEN_SCOPE_CLAIM, when set: each checked here, so that all are named at once. */
function optionalFromEnv(env: NodeJS.ProcessEnv, problems: Problems): Partial<TokenAuthOptions> {
  const found: Partial<TokenAuthOptions> = {};
  if (isSet(env, 'TOKEN_ALGORITHMS')) {
    const algorithms = list(env.TOKEN_ALGORITHMS as string);
    if (algorithms.every(isSupportedAlgorithm)) found.algorithms = algorithms as Algorithm[];
    else
      problems.push({
        option: 'algorithms',
        text: 'TOKEN_ALGORITHMS must be a comma-separated list of supported algorithms (HS256, RS256, ES256, EdDSA, …; never none)',
      });
  }
  if (isSet(env, 'TOKEN_CLAIMS')) {
    try {
      found.claims = resolveClaimsMode((env.TOKEN_CLAIMS as string).trim(), false);
    } catch {
      problems.push({ option: 'claims', text: 'TOKEN_CLAIMS must be strict, jwt or at+jwt' });
    }
  }
  if (isSet(env, 'TOKEN_SCOPE_CLAIM')) {
    const names = (env.TOKEN_SCOPE_CLAIM as string).split(',').map((s) => s.trim());
    if (names.some((n) => n === ''))
      problems.push({
        option: 'scopeClaim',
        text: 'TOKEN_SCOPE_CLAIM must be claim names separated by commas, none empty',
      });
    else found.scopeClaim = names;
  }
  return found;
}

/**
 * Options for the default TokenAuth from environment variables: one of TOKEN_SECRET, TOKEN_PUBLIC_KEY (PEM),
 * TOKEN_JWKS_URI, TOKEN_UPSTREAM_URL or TOKEN_ISSUER_BASE_URL, plus TOKEN_ISSUER (not with TOKEN_ISSUER_BASE_URL),
 * TOKEN_AUDIENCE and optionally TOKEN_ALGORITHMS, TOKEN_CLAIMS and TOKEN_SCOPE_CLAIM. Every problem found is
 * named in one TypeError, thrown when the default TokenAuth is built (at app set-up).
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv): TokenAuthOptions {
  const problems: Problems = [];
  const key = keyFromEnv(env, problems);
  // A misspelt TOKEN_ISSUER_BASE_URL counts as meant: TOKEN_ISSUER is then not demanded as well.
  const discovery =
    key === undefined ? misspellingsOf('TOKEN_ISSUER_BASE_URL', env).length > 0 : key.name === 'TOKEN_ISSUER_BASE_URL';
  // With discovery the issuer is discovered: TOKEN_ISSUER is passed on only when set, for createTokenAuth to refuse.
  const issuer = discovery && !isSet(env, 'TOKEN_ISSUER') ? undefined : accepted(env, 'TOKEN_ISSUER', problems);
  const audience = accepted(env, 'TOKEN_AUDIENCE', problems);
  const optional = optionalFromEnv(env, problems);
  if (problems.length === 1) optionError(problems[0].option, problems[0].text);
  if (problems.length > 1) {
    const texts = problems.map((problem) => problem.text);
    optionError('', `the environment does not configure the default TokenAuth:\n- ${texts.join('\n- ')}`);
  }
  const { name, value } = key as NonNullable<typeof key>;
  const options: TokenAuthOptions =
    name === 'TOKEN_ISSUER_BASE_URL'
      ? { issuerBaseURL: list(value).length === 1 ? list(value)[0] : list(value), audience }
      : { key: keyOption(name, value), issuer, audience };
  if (discovery && issuer !== undefined) options.issuer = issuer;
  return Object.assign(options, optional);
}

/** The variable each option comes from when the environment configures it, for `fromVariable`. */
const VARIABLE_OF_OPTION: Readonly<Record<string, string>> = {
  'key.secret': 'TOKEN_SECRET',
  'key.publicKey': 'TOKEN_PUBLIC_KEY',
  'key.jwksUri': 'TOKEN_JWKS_URI',
  'key.upstream': 'TOKEN_UPSTREAM_URL',
  issuerBaseURL: 'TOKEN_ISSUER_BASE_URL',
  algorithms: 'TOKEN_ALGORITHMS',
  issuer: 'TOKEN_ISSUER',
  audience: 'TOKEN_AUDIENCE',
  claims: 'TOKEN_CLAIMS',
  scopeClaim: 'TOKEN_SCOPE_CLAIM',
};

/**
 * An OptionError of `createTokenAuth` on options read from the environment, naming the variable its option came
 * from too (`… key.secret must be at least 32 bytes (got 12) [from TOKEN_SECRET]`); other errors as they are.
 */
export function fromVariable(err: unknown): unknown {
  if (!(err instanceof OptionError)) return err;
  // `issuerBaseURL[1]`: one of the comma-separated URLs of TOKEN_ISSUER_BASE_URL.
  const option = err.option.replace(/\[\d+\]$/, '');
  const variable = Object.hasOwn(VARIABLE_OF_OPTION, option) ? VARIABLE_OF_OPTION[option] : undefined;
  return variable === undefined ? err : new OptionError(err.option, `${err.message} [from ${variable}]`);
}

function keyOption(name: Exclude<(typeof KEY_VARIABLES)[number], 'TOKEN_ISSUER_BASE_URL'>, value: string): KeyOption {
  switch (name) {
    case 'TOKEN_SECRET':
      return { secret: value };
    case 'TOKEN_PUBLIC_KEY':
      return { publicKey: value.replace(/\\n/g, '\n') };
    case 'TOKEN_JWKS_URI':
      return { jwksUri: value };
    case 'TOKEN_UPSTREAM_URL':
      return { upstream: value };
  }
}
