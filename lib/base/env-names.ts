// Near misses among environment variable names: a variable set under a misspelt name (TOKEN_SECERT,
// TOKEN_ISSUER_BASEURL) that the package never reads, found so that a message can name it. Names only, never values.

/** Every environment variable the package reads (the top-level auth's configuration). */
export const TOKEN_VARIABLES: readonly string[] = [
  'TOKEN_SECRET',
  'TOKEN_PUBLIC_KEY',
  'TOKEN_JWKS_URI',
  'TOKEN_UPSTREAM_URL',
  'TOKEN_ISSUER_BASE_URL',
  'TOKEN_ISSUER',
  'TOKEN_AUDIENCE',
  'TOKEN_ALGORITHMS',
  'TOKEN_CLAIMS',
  'TOKEN_SCOPE_CLAIM',
];

/** Edit distance with adjacent transpositions (optimal string alignment), stopping early past `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    let best = Infinity;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, rows[i - 2][j - 2] + 1);
      rows[i][j] = value;
      best = Math.min(best, value);
    }
    if (best > limit) return limit + 1;
  }
  return rows[a.length][b.length];
}

/** The same name once case and separators are set aside (`token_issuer_baseurl` ~ `TOKEN_ISSUER_BASE_URL`). */
const folded = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]/g, '');

/**
 * The variables set in `env` (non-empty) whose names are near misses of `wanted` — the same letters in another
 * case or with other separators, or at most two edits away — and that are none of the `known` names.
 */
export function misspellingsOf(
  wanted: string,
  env: NodeJS.ProcessEnv,
  known: readonly string[] = TOKEN_VARIABLES,
): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '' || name === wanted || known.includes(name)) continue;
    if (folded(name) === folded(wanted) || distance(name.toUpperCase(), wanted, 2) <= 2) found.push(name);
  }
  return found.sort();
}

/** A clause for a message about an unset variable: ` (TOKEN_SECERT is set: a misspelling of TOKEN_SECRET?)`, or ''. */
export function misspellingNote(
  wanted: string,
  env: NodeJS.ProcessEnv,
  known: readonly string[] = TOKEN_VARIABLES,
): string {
  const near = misspellingsOf(wanted, env, known);
  if (near.length === 0) return '';
  return ` (${near.join(' and ')} ${near.length === 1 ? 'is' : 'are'} set: a misspelling of ${wanted}?)`;
}

/** The variables an option is conventionally read from: `issuerBaseURL` → ISSUER_BASE_URL and TOKEN_ISSUER_BASE_URL. */
export function variablesFor(option: string): string[] {
  const name = option.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  return [name, `TOKEN_${name}`];
}

/**
 * `issuerBaseURL: process.env.ISSUER_BASE_URL` with the variable unset: the option is present but undefined. Says so
 * (rather than naming the option that is then missing), with the variables it was probably read from, which of
 * them are set, and near misses that are (names only, never values); `instead` says what else would do.
 */
export function undefinedOptionMessage(option: string, env: NodeJS.ProcessEnv, instead: string): string {
  const head = `option "${option}" was given as undefined`;
  const variables = variablesFor(option);
  const set = variables.filter((name) => env[name] !== undefined && env[name] !== '');
  if (set.length > 0) {
    return (
      `${head}, though ${set.join(' and ')} ${set.length === 1 ? 'is' : 'are'} set in process.env: check the ` +
      `variable name your code reads (${option}: process.env.${set[0]}), or ${instead}`
    );
  }
  const near = [...new Set(variables.flatMap((name) => misspellingsOf(name, env, variables)))];
  const misspelt =
    near.length === 0
      ? ''
      : `; ${near.join(' and ')} ${near.length === 1 ? 'is' : 'are'} set: a misspelling of ${variables[0]}?`;
  return (
    `${head}: probably read from an environment variable that is not set in this process (${variables.join(' and ')} ` +
    `are unset${misspelt}). Set the variable your code reads (and load your .env file before createTokenAuth runs), ` +
    `or ${instead}`
  );
}
