// Shape A, the verify endpoint's profile view, built from Shape B claims.
import type { RegisteredClaims } from './claim-modes';
import { isObject } from '../base/values';

/** The user of a profile result: who the token's owner is at the identity provider. */
export interface ProfileUser {
  id: string;
  name: string;
  email: string;
  picture: string;
}

/** The service's Shape A: `{ status: 'success', user: { id, name, email, picture } }`. */
export interface ProfileResult {
  status: 'success';
  user: ProfileUser;
}

const USER_FIELDS = ['id', 'name', 'email', 'picture'] as const;

/**
 * Whether a value is a complete Shape A: `status: 'success'` and a user whose four fields are strings, `id`
 * non-empty. The verify endpoint uses it to refuse to send a half-built profile from an app's `resolveProfile`.
 */
export function isProfileResult(value: unknown): value is ProfileResult {
  if (!isObject(value) || value.status !== 'success' || !isObject(value.user)) return false;
  return completeUser(value.user) !== undefined;
}

function completeUser(account: Record<string, unknown>): ProfileUser | undefined {
  for (const field of USER_FIELDS) if (typeof account[field] !== 'string') return undefined;
  if (account.id === '') return undefined;
  const { id, name, email, picture } = account as unknown as ProfileUser;
  return { id, name, email, picture };
}

/**
 * Shape A from the linked `google` account, or undefined when there is none. A google entry that lacks one of
 * `id`, `name`, `email`, `picture` (possible only outside `claims: 'strict'`, which rejects such a token) counts
 * as no profile: Shape A has four required fields, and inventing one would hand the client a false identity.
 */
export function toProfile(claims: RegisteredClaims): ProfileResult | undefined {
  const providers: unknown = claims.providers;
  if (!isObject(providers) || !isObject(providers.google)) return undefined;
  const user = completeUser(providers.google);
  return user === undefined ? undefined : { status: 'success', user };
}
