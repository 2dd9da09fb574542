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

/**
 * An option present but undefined (`issuerBaseURL: process.env.ISSUER_BASE_URL` with the variable unset): says so,
 * rather than that another option is missing, and that an environment variable it was read from is probably unset,
 * without naming one: which variable the app's code read, the package cannot know (JWT_SECRET, AUTH0_ISSUER_BASE_URL
 * …). Only the default instance, which reads TOKEN_* itself, names its variables (config/environment.ts).
 * `consequence` follows the head (`, so no key is configured`); `instead` says what else would do.
 */
export function undefinedOptionMessage(option: string, consequence: string, instead: string): string {
  return (
    `option "${option}" was given as undefined${consequence}: if your code read it from an environment variable, ` +
    'that variable is probably unset in this process. Set it (check the name your code reads, and that your .env ' +
    `file is loaded before createTokenAuth runs), or ${instead}`
  );
}
