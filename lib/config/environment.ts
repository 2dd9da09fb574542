// The claims mode and scope claim read from the environment (TOKEN_CLAIMS, TOKEN_SCOPE_CLAIM) for the top-level
// auth that default-auth.ts builds from environment variables.
import { resolveClaimsMode, type ClaimsMode } from '../token/claim-modes';
import { optionError } from '../base/option-error';

/** The claim options the environment can set: `TOKEN_CLAIMS` and `TOKEN_SCOPE_CLAIM` (a comma-separated list). */
export interface ClaimsFromEnv {
  claims?: ClaimsMode;
  scopeClaim?: string[];
}

/**
 * Read `TOKEN_CLAIMS` (`strict`, `jwt` or `at+jwt`) and `TOKEN_SCOPE_CLAIM` (claim names, comma-separated). A wrong
 * value is a TypeError naming the variable, thrown when the default TokenAuth is built (at app set-up).
 */
export function claimsFromEnv(env: NodeJS.ProcessEnv): ClaimsFromEnv {
  const found: ClaimsFromEnv = {};
  const mode = env.TOKEN_CLAIMS?.trim();
  if (mode !== undefined && mode !== '') {
    try {
      found.claims = resolveClaimsMode(mode, false);
    } catch {
      optionError(`TOKEN_CLAIMS must be strict, jwt or at+jwt (found ${JSON.stringify(mode)})`);
    }
  }
  const scopeClaim = env.TOKEN_SCOPE_CLAIM;
  if (scopeClaim !== undefined && scopeClaim.trim() !== '') {
    const names = scopeClaim.split(',').map((s) => s.trim());
    if (names.some((n) => n === '')) {
      optionError('TOKEN_SCOPE_CLAIM must be claim names separated by commas, none empty');
    }
    found.scopeClaim = names;
  }
  return found;
}
