// A JSON Web Key (RFC 7517) as a plain structural type of our own: node:crypto's `JsonWebKey` left @types/node 25,
// so the published declarations name this one, which every @types/node version's JWKs are assignable to.

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
