// Checks every options object shares: only the fields its type names, and counts that are positive integers. Each
// room keeps its own rules; these are written once so that every room refuses the same way.
import { optionError, optionName, optionPath } from './option-error';

/**
 * The fields an options type accepts, each listed once as `true`. Declared as `FieldList<TheOptions>`, so that a
 * field added to the type and not listed here fails type-checking (and a listed field the type lacks too).
 */
export type FieldList<T> = Readonly<Record<keyof T & string, true>>;

/**
 * Refuse a field of `value` that `fields` does not list, as an OptionError at its dotted path under `path`:
 * `unknown option "cache.size"`, or, for the options of another function (`owner`), `verifyRouter has no option
 * "view" (known: …)`. `refusal` words the message instead, for a rule other than "unknown".
 */
export function knownFields(
  value: object,
  fields: Readonly<Record<string, true>>,
  path: string,
  owner?: string,
  refusal?: (option: string, known: string, name: string) => string,
): void {
  for (const name of Object.keys(value)) {
    if (Object.hasOwn(fields, name)) continue;
    const option = optionPath(path, name);
    const known = Object.keys(fields).join(', ');
    if (refusal !== undefined) optionError(option, refusal(option, known, name));
    optionError(
      option,
      owner === undefined ? `unknown option "${option}"` : `${owner} has no option "${option}" (known: ${known})`,
    );
  }
}

/**
 * A count option (`cache.max`, `maxInflight`, …): a positive safe integer, or `fallback` when absent; an
 * OptionError at `path` otherwise, named in the message as `label`.
 */
export function positiveInteger<F>(value: unknown, path: string, fallback: F, label = optionName(path)): number | F {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    optionError(path, `${label} must be a positive integer`);
  return value;
}
