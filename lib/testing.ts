// The `express-verified-user/testing` entry: a test issuer that mints tokens (HS, RS, ES, EdDSA; JWKS on
// loopback; DPoP holders) for the app's own tests.
import { randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenAuthOptions } from './config/options';
import { accessTokenHash } from './dpop/proof';
import { jwkThumbprint } from './jose/jwk';
import { generateSigningKeyPair, signCompact, signToken } from './jose/sign';
import { sampleShapeB } from './token/sample';
import { optionError } from './base/option-error';

/** Options of `createTestIssuer`. */
export interface TestIssuerOptions {
  /** Signing algorithm (default `'HS256'`); `'EdDSA'` signs with an Ed25519 key. */
  alg?: 'HS256' | 'RS256' | 'ES256' | 'EdDSA';
  /** Serve the public keys as a JWKS on 127.0.0.1 and hand out `{ jwksUri }` options (not with HS256). */
  jwks?: boolean;
  /**
   * Serve `/.well-known/openid-configuration` and the JWKS on 127.0.0.1, as an authorization server does, and hand
   * out `{ issuerBaseURL, audience }` options: tests take the discovery path production takes. The issuer is the
   * server's address (no `issuer` option); the algorithm defaults to ES256 (not HS256).
   */
  discovery?: boolean;
  /** `iss` of minted tokens and accepted by `options` (default `'https://issuer.test'`). */
  issuer?: string;
  /** `aud` of minted tokens and accepted by `options` (default `'api.test'`). */
  audience?: string;
  /** Token lifetime in seconds (default 600, as in the service's example). */
  lifetime?: number;
  /** Clock for `iat`/`exp`, in seconds (default: the system clock). */
  clock?: () => number;
  /** Mint DPoP-bound tokens (`cnf.jkt` of `holder`'s key) and turn `dpop` on in `options`. */
  dpop?: boolean;
}

/** What a DPoP proof is made for (RFC 9449 §4.2). */
export interface DpopProofRequest {
  /** HTTP method (`htm`). */
  method: string;
  /** The request's URL (`htu`; query and fragment are dropped). */
  url: string;
  /** The access token sent with the proof (`ath`); omit for a proof without one. */
  token?: string;
  /** The server's last `DPoP-Nonce`. */
  nonce?: string;
  /** Claims to replace (`iat`, `jti`, …); `undefined` removes one. For tests of refusals. */
  claims?: Record<string, unknown>;
  /** Header parameters to replace. For tests of refusals. */
  header?: Record<string, unknown>;
}

/** A DPoP key holder: the client side of RFC 9449, for tests. */
export interface DpopHolder {
  /** RFC 7638 thumbprint of the public key: the `cnf.jkt` of tokens bound to this holder. */
  readonly jkt: string;
  /** The public key as a JWK. */
  readonly publicJwk: Record<string, unknown>;
  /** A fresh proof (new `jti`, `iat` now) for one request. */
  proof(request: DpopProofRequest): string;
}

/** An in-memory issuer of valid Shape B tokens for an app's own tests. */
export interface TestIssuer {
  /**
   * Mint a token. Overrides replace claims of the default Shape B payload; an override of `undefined` removes
   * that claim. `header` adds or replaces JOSE header parameters.
   */
  sign(overrides?: Record<string, unknown>, header?: Record<string, unknown>): string;
  /** The default payload `sign()` would use now (a fresh `jti` each call). */
  claims(overrides?: Record<string, unknown>): Record<string, unknown>;
  /** Options that plug straight into `createTokenAuth`. */
  readonly options: TokenAuthOptions;
  /** With `jwks` or `discovery`: the JWKS address. */
  readonly jwksUri: string | undefined;
  /** With `jwks` or `discovery`: how many times the JWKS has been fetched. */
  readonly jwksRequests: number;
  /** Key id of the current signing key (asymmetric algorithms). */
  readonly kid: string | undefined;
  /**
   * Start signing with a new key under a new `kid`. The previous public key stays in the JWKS unless
   * `retirePrevious` is true. Not available for HS256.
   */
  rotate(options?: { retirePrevious?: boolean }): void;
  /** With `dpop: true`: the key holder the minted tokens are bound to. */
  readonly holder: DpopHolder | undefined;
  /** Stop the JWKS server, if any. */
  close(): Promise<void>;
}

/**
 * A DPoP key holder with a new ES256 key (or RS256 / PS256 / EdDSA (Ed25519)), making proofs as a client
 * would. For tests only.
 */
export function createDpopHolder(
  alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA' = 'ES256',
  clock: () => number = () => Date.now() / 1000,
): DpopHolder {
  const { privateKey, publicKey } = generateSigningKeyPair(alg);
  const publicJwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  const jkt = jwkThumbprint(publicJwk);
  return {
    jkt,
    publicJwk,
    proof({ method, url, token, nonce, claims = {}, header = {} }) {
      const target = new URL(url);
      const payload: Record<string, unknown> = {
        jti: randomUUID(),
        htm: method,
        htu: `${target.protocol}//${target.host}${target.pathname}`,
        iat: Math.floor(clock()),
      };
      if (token !== undefined) payload.ath = accessTokenHash(token);
      if (nonce !== undefined) payload.nonce = nonce;
      for (const [name, value] of Object.entries(claims)) {
        if (value === undefined) delete payload[name];
        else payload[name] = value;
      }
      return signCompact({ typ: 'dpop+jwt', alg, jwk: publicJwk, ...header }, payload, privateKey, alg);
    },
  };
}

export { signToken, type TestSigningAlgorithm } from './jose/sign';

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function newKeyPair(alg: 'RS256' | 'ES256' | 'EdDSA'): SigningKey {
  return { kid: randomUUID(), ...generateSigningKeyPair(alg) };
}

/** The JWKS (and with `discovery`, the OpenID configuration naming it) on 127.0.0.1; `origin` is the issuer. */
async function serveJwks(
  body: () => string,
  counted: () => void,
  discovery: boolean,
): Promise<{ server: Server; uri: string; origin: string }> {
  let origin = '';
  const server = createServer((req, res) => {
    const json = (text: string) =>
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(text);
    if (req.url === '/.well-known/jwks.json') {
      counted();
      json(body());
    } else if (discovery && req.url === '/.well-known/openid-configuration') {
      json(
        JSON.stringify({
          issuer: origin,
          jwks_uri: `${origin}/.well-known/jwks.json`,
          id_token_signing_alg_values_supported: [],
        }),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, uri: `${origin}/.well-known/jwks.json`, origin };
}

/**
 * Create an issuer that mints valid Shape B tokens (HS256 by default; RS256, ES256 or EdDSA (Ed25519) on request, their JWKS
 * served on loopback with `jwks: true`, with OpenID discovery too with `discovery: true`). Its `options` plug into
 * `createTokenAuth`. Test code only: the keys live in memory and vanish with the process.
 */
export async function createTestIssuer(opts: TestIssuerOptions = {}): Promise<TestIssuer> {
  const discovery = opts.discovery === true;
  const alg = opts.alg ?? (discovery ? 'ES256' : 'HS256');
  if (!['HS256', 'RS256', 'ES256', 'EdDSA'].includes(alg))
    optionError('alg', 'createTestIssuer option "alg" must be HS256, RS256, ES256 or EdDSA');
  if (opts.jwks === true && alg === 'HS256')
    optionError('jwks', 'createTestIssuer option "jwks" needs alg RS256, ES256 or EdDSA (a JWKS holds public keys)');
  if (discovery && alg === 'HS256')
    optionError('discovery', 'createTestIssuer option "discovery" needs alg RS256, ES256 or EdDSA');
  if (discovery && opts.issuer !== undefined)
    optionError(
      'issuer',
      'createTestIssuer option "issuer" does not go with discovery: the issuer is the server\'s own address; leave issuer out',
    );
  const audience = opts.audience ?? 'api.test';
  const lifetime = opts.lifetime ?? 600;
  const clock = opts.clock ?? (() => Date.now() / 1000);

  const secret = alg === 'HS256' ? randomBytes(48).toString('base64url') : undefined;
  const keys: SigningKey[] = alg === 'HS256' ? [] : [newKeyPair(alg)];
  let jwksRequests = 0;
  const jwksBody = () =>
    JSON.stringify({
      keys: keys.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, alg, use: 'sig' })),
    });
  const served =
    opts.jwks === true || discovery ? await serveJwks(jwksBody, () => jwksRequests++, discovery) : undefined;
  const issuer = discovery ? (served as { origin: string }).origin : (opts.issuer ?? 'https://issuer.test');

  const holder = opts.dpop === true ? createDpopHolder('ES256', clock) : undefined;
  const options: TokenAuthOptions = discovery
    ? { issuerBaseURL: issuer, audience, ...(holder === undefined ? {} : { dpop: {} }) }
    : {
        key:
          secret !== undefined
            ? { secret }
            : served !== undefined
              ? { jwksUri: served.uri, cooldown: 0 }
              : { publicKey: keys[0].publicKey },
        issuer,
        audience,
        algorithms: [alg],
        ...(holder === undefined ? {} : { dpop: {} }),
      };

  const claims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => {
    const payload = sampleShapeB({ issuer, audience, now: Math.floor(clock()), lifetime });
    if (holder !== undefined) payload.cnf = { jkt: holder.jkt };
    for (const [name, value] of Object.entries(overrides)) {
      if (value === undefined) delete payload[name];
      else payload[name] = value;
    }
    return payload;
  };

  return {
    claims,
    sign(overrides, header = {}) {
      const current = keys[keys.length - 1];
      const kid = current === undefined ? {} : { kid: current.kid };
      return signToken(claims(overrides), secret ?? current.privateKey, alg, { ...kid, ...header });
    },
    options,
    holder,
    jwksUri: served?.uri,
    get jwksRequests() {
      return jwksRequests;
    },
    get kid() {
      return keys[keys.length - 1]?.kid;
    },
    rotate({ retirePrevious = false } = {}) {
      if (alg === 'HS256')
        optionError(
          'alg',
          'rotate() needs createTestIssuer option "alg" RS256, ES256 or EdDSA (an HS256 secret never rotates)',
        );
      const next = newKeyPair(alg);
      if (retirePrevious) keys.length = 0;
      keys.push(next);
    },
    close() {
      if (served === undefined) return Promise.resolve();
      served.server.closeAllConnections();
      return new Promise((resolve) => served.server.close(() => resolve()));
    },
  };
}
