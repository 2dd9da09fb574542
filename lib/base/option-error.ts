// The one way an option is refused: an OptionError (a TypeError) naming the option by its dotted path, thrown while
// `createTokenAuth` (or another factory) runs, so a misconfigured app stops at start-up and never at request time.

/**
 * A refused option: a `TypeError` whose `option` is the option's dotted path as the factory takes it
 * (`'cache.max'`, `'introspection.clientId'`, `'issuerBaseURL[1]'`; `''` for the options object itself). Apps tell it
 * apart with `instanceof OptionError` and read `option`, never the message.
 */
export class OptionError extends TypeError {
  /** The dotted path of the option refused, within the options of the function that refused it. */
  readonly option: string;

  constructor(option: string, message: string) {
    super(message);
    this.name = 'OptionError';
    this.option = option;
  }
}

/** Throw the package's OptionError for `option` (its dotted path): `express-verified-user: <message>`. */
export function optionError(option: string, message: string): never {
  throw new OptionError(option, `express-verified-user: ${message}`);
}

/**
 * How a message names an option: `option "cache.max"`, or with the function that takes it when that is not
 * createTokenAuth: `verifyRouter option "defaultView"`.
 */
export function optionName(option: string, owner?: string): string {
  return owner === undefined ? `option "${option}"` : `${owner} option "${option}"`;
}

/** The dotted path of field `name` inside the option at `path` (`''`: the options object itself). */
export function optionPath(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}
