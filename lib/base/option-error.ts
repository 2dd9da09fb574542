// The one way an option is refused: a TypeError naming it, thrown while `createTokenAuth` (or another factory)
// runs, so a misconfigured app stops at start-up and never at request time.

/** Throw the package's option TypeError: `express-verified-user: <message>`. */
export function optionError(message: string): never {
  throw new TypeError(`express-verified-user: ${message}`);
}
