// NODE_DEBUG=express-verified-user: one line per refusal (code, reason, iss, aud, kid, alg, hint), never the token.
import { debuglog } from 'node:util';
import type { TokenAuthError } from '../base/errors';
import { escapeControls, quotedValue } from '../base/printable';

// Node's own switch: NODE_DEBUG=express-verified-user turns the lines on; off, a refusal costs one property read.
const log = debuglog('express-verified-user');

/** A fact of the token, or `-` when it has none: quoted, escaped and cut by base/printable.ts. */
const fact = (value: unknown) => (value === undefined ? '-' : quotedValue(value));

/**
 * One line per refusal when `NODE_DEBUG=express-verified-user` is set: code, reason, and the token's `iss`, `aud`,
 * `kid`, `alg` (from `err.facts`, each quoted, escaped and cut so that a hostile value can neither forge a line nor
 * flood the log; an `aud` array shows its first items), ending with `err.hint` (what was expected, from which
 * option: config/refusal-hints.ts), the same text `onError` gets. Never the token or its signature. The reason and
 * the hint are escaped again as a whole: nothing a room wrote can break the line.
 */
export function debugRefusal(err: TokenAuthError): void {
  if (!log.enabled) return;
  const facts = err.facts ?? {};
  log(
    'refused %d %s reason=%s iss=%s aud=%s kid=%s alg=%s%s',
    err.status,
    err.code,
    err.reason === undefined ? '-' : escapeControls(err.reason),
    fact(facts.iss),
    fact(facts.aud),
    fact(facts.kid),
    fact(facts.alg),
    err.hint === undefined ? '' : ` (${escapeControls(err.hint)})`,
  );
}
