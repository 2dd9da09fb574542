// A JSON Web Key (RFC 7517) as a plain structural type of our own, its private members, and its RFC 7638
// thumbprint. node:crypto's `JsonWebKey` left @types/node 25, so the published declarations name this type,
// which every @types/node version's JWKs are assignable to.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';

/**
 * A JSON Web Key: the members this package reads, all optional and all strings but `key_ops` and `ext`. A type
 * alias (not an interface), so that it also fits where @types/node ≤ 24 expects a JWK with an index signature.
 */
export type Jwk = {
  kty?: string;
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
  ext?: boolean;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  d?: string;
  p?: string;
  q?: string;
  dp?: string;
  dq?: string;
  qi?: string;
  k?: string;
  x5c?: string[];
  x5t?: string;
  'x5t#S256'?: string;
};

/** Members that hold private or symmetric key material (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2). */
export const PRIVATE_JWK_MEMBERS: readonly string[] = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** The first member of `jwk` that holds private or symmetric material, or undefined for a public JWK. */
export function privateMemberOf(jwk: Record<string, unknown>): string | undefined {
  return PRIVATE_JWK_MEMBERS.find((member) => jwk[member] !== undefined);
}

/** RFC 7638 §3.2: the required members of each public key type, in lexicographic order. A Map, so that a `kty` of
 * `constructor` or `toString` finds nothing rather than a member of Object.prototype. */
const THUMBPRINT_MEMBERS: ReadonlyMap<unknown, readonly string[]> = new Map([
  ['EC', ['crv', 'kty', 'x', 'y']],
  ['RSA', ['e', 'kty', 'n']],
  ['OKP', ['crv', 'kty', 'x']],
]);

/** Whether `jwk` has a public key type with a thumbprint and each of that type's required members as a string. */
export function hasThumbprintMembers(jwk: Record<string, unknown>): boolean {
  const members = THUMBPRINT_MEMBERS.get(jwk.kty);
  return members !== undefined && members.every((member) => typeof jwk[member] === 'string');
}

/**
 * RFC 7638 thumbprint (base64url SHA-256 of the required members, in order, without whitespace) of a public JWK
 * that passed `hasThumbprintMembers`: what a DPoP-bound token's `cnf.jkt` names (RFC 9449 §6.1).
 */
export function jwkThumbprint(jwk: Record<string, unknown>): string {
  const members = THUMBPRINT_MEMBERS.get(jwk.kty) ?? [];
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

/** The RFC 7638 thumbprint of an asymmetric key's public half (private keys are reduced to it first). */
export function keyThumbprint(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return jwkThumbprint(publicKey.export({ format: 'jwk' }) as Record<string, unknown>);
}
