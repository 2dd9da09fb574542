// Durations as options take them (seconds, or '30s', '10m' with a unit) turned into seconds; a bad one is an
// option error. Imports only base/.
import ms from 'ms';
import { optionError, optionName } from './option-error';

/** A number of seconds, or a string with a unit: `'500ms'`, `'30s'`, `'10m'`, `'90d'`. */
export type Duration = number | string;

const HAS_UNIT = /^\s*-?\d*\.?\d+\s*[a-z]+\s*$/i;

/**
 * Seconds from a Duration; an OptionError at `option` (its dotted path), named in the message as `label`, for
 * anything else. Parsing is `ms`'s; a bare numeric string is refused because `ms` would read it as milliseconds.
 */
export function parseDuration(value: unknown, option: string, label = optionName(option)): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0) return value;
  } else if (typeof value === 'string' && HAS_UNIT.test(value)) {
    const millis = ms(value as ms.StringValue);
    if (typeof millis === 'number' && Number.isFinite(millis) && millis >= 0) return millis / 1000;
  }
  optionError(
    option,
    `${label} must be a non-negative number of seconds or a string with a unit such as '30s', '10m' or '90d'`,
  );
}

/** A limit in time (a timeout, a cooldown): a Duration above zero, in seconds, or `fallback` when absent. */
export function positiveDuration<F>(
  value: unknown,
  option: string,
  fallback: F,
  label = optionName(option),
): number | F {
  if (value === undefined) return fallback;
  const seconds = parseDuration(value, option, label);
  if (!(seconds > 0)) optionError(option, `${label} must be more than zero`);
  return seconds;
}
