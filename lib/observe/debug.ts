// NODE_DEBUG=express-verified-user: one line per refusal (code, reason, iss, kid, alg, hint), never the token.
import { debuglog } from 'node:util';
import type { TokenAuthError } from '../base/errors';

// Node's own switch: NODE_DEBUG=express-verified-user turns the lines on; off, a refusal costs one property read.
const log = debuglog('express-verified-user');

/** Longest value from a token printed in a debug line, as spans cut theirs at 256: a forged `kid` may be 10 KB. */
export const MAX_DEBUG_VALUE = 128;

/**
 * A value from a token, quoted so that a hostile `iss` or `kid` cannot forge a second log line, and cut to
 * MAX_DEBUG_VALUE characters (marked with `…`) so that it cannot flood the log either. Hints quote a token's
 * `alg` and `typ` the same way.
 */
export function quotedFact(value: string): string {
  return JSON.stringify(value.length > MAX_DEBUG_VALUE ? `${value.slice(0, MAX_DEBUG_VALUE)}…` : value);
}

const quoted = (value: string | undefined) => (value === undefined ? '-' : quotedFact(value));

/**
 * One line per refusal when `NODE_DEBUG=express-verified-user` is set: code, reason, and the token's `iss`, `kid`,
 * `alg` (from `err.facts`), ending with `err.hint` (what was expected, from which option: config/refusal-hints.ts),
 * the same text `onError` gets. Never the token or its signature.
 */
export function debugRefusal(err: TokenAuthError): void {
  if (!log.enabled) return;
  const facts = err.facts ?? {};
  log(
    'refused %d %s reason=%s iss=%s kid=%s alg=%s%s',
    err.status,
    err.code,
    err.reason ?? '-',
    quoted(facts.iss),
    quoted(facts.kid),
    quoted(facts.alg),
    err.hint === undefined ? '' : ` (${err.hint})`,
  );
}
