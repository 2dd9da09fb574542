// How this resource server authenticates itself to the authorization server, for introspection (RFC 7662 §2.1) and
// token exchange (RFC 8693 §2.1) alike: client_secret_basic, client_secret_post (RFC 6749 §2.3.1) or private_key_jwt
// (RFC 7523 §2.2, OpenID Connect Core §9).
import { createPrivateKey, KeyObject, randomUUID } from 'node:crypto';
import type { Jwk } from '../jose/jwk';
import { optionError } from '../base/option-error';
import type { FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import { ALGORITHMS, algorithmForCurve, isSupportedAlgorithm, MIN_RSA_BITS, type Algorithm } from '../jose/algorithms';
import { signCompact } from '../jose/sign';

/** The client authentication methods supported for calls to the authorization server. */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';

/** The credentials of this resource server as a client of the authorization server. */
export interface ClientCredentials {
  /** Its client id at the authorization server. */
  clientId: string;
  /** Its secret (client_secret_basic, client_secret_post). */
  clientSecret?: string;
  /** Its private key for private_key_jwt: PEM, a private JWK (its `kid` and `alg` are used) or a KeyObject. */
  privateKey?: string | Jwk | KeyObject;
  /** Default: `private_key_jwt` with a privateKey, else `client_secret_basic`. */
  authMethod?: ClientAuthMethod;
}

/** The credential fields every option that authenticates this server as a client shares (introspection, exchange). */
export const CLIENT_FIELDS: FieldList<ClientCredentials> = {
  clientId: true,
  clientSecret: true,
  privateKey: true,
  authMethod: true,
};

/** Client authentication resolved once: adds the credentials to one request. */
export interface ClientAuth {
  readonly clientId: string;
  readonly method: ClientAuthMethod;
  /**
   * Put the credentials on a request to `endpoint`: a Basic header, form fields, or a fresh signed client
   * assertion whose `aud` is the endpoint called (what Okta requires, and Keycloak and oidc-provider accept).
   */
  apply(form: URLSearchParams, headers: Record<string, string>, endpoint: string, now: number): void;
}

/** Life of a client assertion: long enough for one call, short enough that a captured one is soon useless. */
export const ASSERTION_LIFETIME = 60;

const METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'];
/** RFC 7523 §2.2: the `client_assertion_type` of a JWT client assertion. */
export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined and base64-encoded. */
function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, '+');
}

/** A signing key for client assertions: the private key, its JWS `alg` and optional `kid`. */
interface AssertionSigner {
  alg: Algorithm;
  kid: string | undefined;
  key: KeyObject;
}

/** Whether `alg` is an RSA algorithm of the table (RS*, or PS* only for an RSA-PSS key). */
function rsaAlgorithm(alg: string, pssOnly: boolean): alg is Algorithm {
  if (!isSupportedAlgorithm(alg)) return false;
  const family = ALGORITHMS[alg].family;
  return family === 'rsa-pss' || (family === 'rsa' && !pssOnly);
}

function signerFor(value: unknown, name: string): AssertionSigner {
  let key: KeyObject;
  let jwk: Record<string, unknown> | undefined;
  try {
    if (typeof value === 'string') key = createPrivateKey(value);
    else if (value instanceof KeyObject) key = value;
    else if (isObject(value)) {
      jwk = value;
      key = createPrivateKey({ key: value as Jwk, format: 'jwk' });
    } else return optionError(name, `option "${name}" must be a private key: PEM, JWK or KeyObject`);
  } catch {
    return optionError(
      name,
      `option "${name}" is not a readable private key (PEM with real line breaks, a private JWK, or a KeyObject)`,
    );
  }
  if (key.type !== 'private') optionError(name, `option "${name}" must be a private key (got a ${key.type} key)`);
  const type = key.asymmetricKeyType;
  const kid = typeof jwk?.kid === 'string' ? jwk.kid : undefined;
  const named = typeof jwk?.alg === 'string' ? jwk.alg : undefined;
  if (type === 'rsa' || type === 'rsa-pss') {
    if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS)
      optionError(name, `option "${name}" must be an RSA key of at least ${MIN_RSA_BITS} bits`);
    const alg = named ?? (type === 'rsa-pss' ? 'PS256' : 'RS256');
    if (!rsaAlgorithm(alg, type === 'rsa-pss'))
      optionError(name, `option "${name}": alg ${alg} does not fit an RSA key`);
    return { alg, kid, key };
  }
  if (type === 'ec') {
    const alg = algorithmForCurve(key.asymmetricKeyDetails?.namedCurve);
    if (alg === undefined || (named !== undefined && named !== alg))
      optionError(name, `option "${name}" must be an EC key on P-256, P-384 or P-521 (alg ES256, ES384, ES512)`);
    return { alg, kid, key };
  }
  if (type === 'ed25519') {
    if (named !== undefined && named !== 'EdDSA' && named !== 'Ed25519')
      optionError(name, `option "${name}": alg ${named} does not fit an Ed25519 key`);
    return { alg: named ?? 'EdDSA', kid, key };
  }
  return optionError(name, `option "${name}" must be an RSA, EC or Ed25519 private key`);
}

/**
 * Validate the client credentials of option `name` (e.g. `introspection`) at set-up: a client id; a secret for the
 * secret methods, a private key for private_key_jwt, never both. A TypeError naming the option otherwise.
 */
export function resolveClientAuth(value: Record<string, unknown>, name: string): ClientAuth {
  const { clientId, clientSecret, privateKey, authMethod } = value;
  if (typeof clientId !== 'string' || clientId === '')
    optionError(`${name}.clientId`, `option "${name}.clientId" must be a non-empty string`);
  if (authMethod !== undefined && !METHODS.includes(authMethod as ClientAuthMethod)) {
    optionError(`${name}.authMethod`, `option "${name}.authMethod" must be ${METHODS.map((m) => `'${m}'`).join(', ')}`);
  }
  const hasSecret = clientSecret !== undefined;
  const hasKey = privateKey !== undefined;
  if (hasSecret && hasKey)
    optionError(
      `${name}.privateKey`,
      `options "${name}.clientSecret" and "${name}.privateKey" exclude each other: give the one your client is registered with`,
    );
  const method = (authMethod ?? (hasKey ? 'private_key_jwt' : 'client_secret_basic')) as ClientAuthMethod;

  if (method === 'private_key_jwt') {
    if (!hasKey)
      optionError(`${name}.privateKey`, `option "${name}.privateKey" is required with authMethod 'private_key_jwt'`);
    const signer = signerFor(privateKey, `${name}.privateKey`);
    return {
      clientId,
      method,
      apply(form, _headers, endpoint, now) {
        const issuedAt = Math.floor(now);
        const header =
          signer.kid === undefined ? { alg: signer.alg, typ: 'JWT' } : { alg: signer.alg, typ: 'JWT', kid: signer.kid };
        const claims = {
          iss: clientId,
          sub: clientId,
          aud: endpoint,
          jti: randomUUID(),
          iat: issuedAt,
          exp: issuedAt + ASSERTION_LIFETIME,
        };
        form.set('client_id', clientId);
        form.set('client_assertion_type', ASSERTION_TYPE);
        form.set('client_assertion', signCompact(header, claims, signer.key, signer.alg));
      },
    };
  }
  if (hasKey)
    optionError(`${name}.privateKey`, `option "${name}.privateKey" applies to authMethod 'private_key_jwt' only`);
  if (typeof clientSecret !== 'string' || clientSecret === '') {
    optionError(
      `${name}.clientSecret`,
      `option "${name}.clientSecret" is required with authMethod '${method}' (a non-empty string; or give "${name}.privateKey" for private_key_jwt)`,
    );
  }
  if (method === 'client_secret_post') {
    return {
      clientId,
      method,
      apply(form) {
        form.set('client_id', clientId);
        form.set('client_secret', clientSecret);
      },
    };
  }
  const basic = `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`;
  return {
    clientId,
    method,
    apply(_form, headers) {
      headers.Authorization = basic;
    },
  };
}
