// Messages that name the likely cause of a key misconfiguration, so a first run fails with a sentence the user
// can act on instead of a generic "exactly one of" or "could not be read".
import { misspellingsOf } from '../base/env-names';

/** The environment variable each key form is conventionally read from (the top-level default reads these). */
const VARIABLE_OF: Record<string, string> = {
  secret: 'TOKEN_SECRET',
  publicKey: 'TOKEN_PUBLIC_KEY',
  jwksUri: 'TOKEN_JWKS_URI',
  upstream: 'TOKEN_UPSTREAM_URL',
};

const isSet = (env: NodeJS.ProcessEnv, name: string) => env[name] !== undefined && env[name] !== '';

/**
 * `key: { secret: process.env.X }` with X unset: the field is present but undefined. Names the variable it most
 * likely came from and says which of the key variables are unset (names only, never a value).
 */
export function undefinedKeyFieldMessage(form: string, env: NodeJS.ProcessEnv): string {
  const variable = VARIABLE_OF[form];
  const unset = Object.values(VARIABLE_OF).filter((name) => !isSet(env, name));
  const head = `option "key.${form}" is undefined, so no key is configured`;
  if (variable === undefined) return `${head}; give it a value`;
  if (isSet(env, variable)) {
    return (
      `${head}. ${variable} is set in process.env, so the value was read from somewhere else: check the ` +
      `variable name your code reads (key.${form}: process.env.${variable})`
    );
  }
  const others = unset.filter((name) => name !== variable);
  const misspelt = misspellingsOf(variable, env);
  if (misspelt.length > 0) {
    return (
      `${head}. It was probably read from ${variable}, which is not set in this process; ${misspelt.join(' and ')} ` +
      `${misspelt.length === 1 ? 'is' : 'are'} set instead: a misspelling of ${variable}? Rename it to ${variable}`
    );
  }
  return (
    `${head}. It was probably read from an environment variable that is not set in this process: ${variable} ` +
    `is unset${others.length > 0 ? ` (so are ${others.join(', ')})` : ''}. Set ${variable} (check its spelling and ` +
    'that your .env file is loaded before createTokenAuth runs), or pass another key form'
  );
}

/**
 * Why a string did not parse as a PEM public key, when the text shows it: escaped newlines kept literally (a PEM
 * pasted into one line of a .env file), surrounding quotes kept by a loader, or no PEM armour at all.
 */
export function pemHint(text: string): string {
  const hints: string[] = [];
  if (text.includes('\\n')) {
    hints.push(
      'it holds literal "\\n" sequences where the PEM needs line breaks (replace them: value.replace(/\\\\n/g, \'\\n\'))',
    );
  }
  const trimmed = text.trim();
  if (/^["'`]/.test(trimmed) || /["'`]$/.test(trimmed)) {
    hints.push(
      'it is wrapped in quotes, which are part of the value (remove them, or let your .env loader strip them)',
    );
  }
  if (!/-----BEGIN [A-Z ]+-----/.test(text)) {
    hints.push('it has no "-----BEGIN PUBLIC KEY-----" line (a PEM public key or certificate is expected)');
  }
  return hints.length > 0 ? `: ${hints.join('; ')}` : '';
}
