// A route's requirement not met: 403 `forbidden` with its reason, and a hint naming what the route requires, where it
// was read and what the token held by count and shape only; and an `allow` hook that threw, a 500.
import { TokenAuthError } from '../base/errors';
import { quotedList } from '../base/printable';

/** Why a verified token was refused by a route's requirements (`err.reason`). */
export type ForbiddenReason = 'issuer' | 'role' | 'permission' | 'group' | 'claim' | 'authorization-details' | 'policy';

/**
 * Who set a requirement, as hints name it, given the requirement's field: `the route (requireVerifiedUser option
 * "roles")`, `tool "deploy" (requireMcpAuth option "tools")`.
 */
export type RequirementOwner = (field: string) => string;

/** The owner of `requireVerifiedUser(scopes, options)`'s requirements. */
export const ROUTE_OWNER: RequirementOwner = (field) =>
  field === 'scopes' ? "the route (requireVerifiedUser's scopes)" : `the route (requireVerifiedUser option "${field}")`;

/** 403 `forbidden` (`{ "status": "error", "message": "Forbidden" }`), its hint made now: only refusals pay for it. */
export function refuse(reason: ForbiddenReason, hint: string): TokenAuthError {
  return new TokenAuthError('forbidden', { reason, hint });
}

/** A route's app hook (`allow`) that threw or rejected: a 500 whose cause goes to `onError`, never to the client. */
export function hookThrew(reason: string, cause: unknown): TokenAuthError {
  return new TokenAuthError('internal', { reason, cause });
}

/** What an `{ all, any }` requirement asks, as a hint says it: `role "a" and one of "b" or "c"`. */
export function wanted(noun: string, all: readonly string[], any: readonly string[]): string {
  const parts: string[] = [];
  if (all.length > 0) parts.push(`${noun}${all.length === 1 ? '' : 's'} ${quotedList(all, 'and')}`);
  if (any.length === 1) parts.push(`${noun} ${quotedList(any, 'or')}`);
  else if (any.length > 1) parts.push(`one of ${noun}s ${quotedList(any, 'or')}`);
  return parts.join(' and ');
}
