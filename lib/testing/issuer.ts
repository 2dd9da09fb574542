// The test issuer: an in-memory issuer of Shape B tokens (HS, RS, ES, EdDSA) whose options plug into createTokenAuth,
// serving on 127.0.0.1 when asked its JWKS, its OpenID configuration and an RFC 8693 token endpoint.
import { createSecretKey, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import type { TokenAuthOptions } from '../config/options';
import { TOKEN_EXCHANGE_GRANT } from '../remote/exchange';
import { generateSigningKeyPair, signToken } from '../jose/sign';
import { sampleShapeB } from '../token/sample';
import { optionError } from '../base/option-error';
import { createDpopHolder, type DpopHolder } from './dpop-holder';
import { createTestClient, type TestClient } from './client-auth';
import { exchangeMetadata, readExchangeOption, tokenExchangeGrant, type TestExchangeOptions } from './exchange';
import { JWKS_PATH, serveIssuer, TOKEN_PATH, type IssuerServer } from './server';
import { readSignedJwt } from './signed';
import { tokenEndpoint } from './token-endpoint';

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
  /**
   * Serve RFC 8693 token exchange at `<server>/token` for one client, and hand out `tokenExchange` options, so
   * `auth.exchange()` runs with no authorization server: a token this issuer signed for `audience` is exchanged for
   * one to the target, with `act` naming the client. With `discovery`, the metadata names the endpoint.
   */
  exchange?: boolean | TestExchangeOptions;
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
  /** With `exchange`: the token endpoint, `http://127.0.0.1:<port>/token`. */
  readonly tokenEndpoint: string | undefined;
  /** With `exchange`: how many requests the token endpoint has answered, tokens issued and refusals alike. */
  readonly tokenRequests: number;
  /** Key id of the current signing key (asymmetric algorithms). */
  readonly kid: string | undefined;
  /**
   * Start signing with a new key under a new `kid`. The previous public key stays in the JWKS unless
   * `retirePrevious` is true. Not available for HS256.
   */
  rotate(options?: { retirePrevious?: boolean }): void;
  /** With `dpop: true`: the key holder the minted tokens are bound to. */
  readonly holder: DpopHolder | undefined;
  /** Stop its server, if any. */
  close(): Promise<void>;
}

interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function newKeyPair(alg: 'RS256' | 'ES256' | 'EdDSA'): SigningKey {
  return { kid: randomUUID(), ...generateSigningKeyPair(alg) };
}

/**
 * Create an issuer that mints valid Shape B tokens (HS256 by default; RS256, ES256 or EdDSA (Ed25519) on request, their JWKS
 * served on loopback with `jwks: true`, with OpenID discovery too with `discovery: true`, RFC 8693 token exchange
 * with `exchange: true`). Its `options` plug into `createTokenAuth`. Test code only: the keys live in memory and
 * vanish with the process.
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
  const exchange = readExchangeOption(opts.exchange);
  const audience = opts.audience ?? 'api.test';
  const lifetime = opts.lifetime ?? 600;
  const clock = opts.clock ?? (() => Date.now() / 1000);

  const secret = alg === 'HS256' ? randomBytes(48).toString('base64url') : undefined;
  const keys: SigningKey[] = alg === 'HS256' ? [] : [newKeyPair(alg)];
  let jwksRequests = 0;
  let tokenRequests = 0;
  const servesJwks = opts.jwks === true || discovery;
  let origin = '';
  const endpointUrl = () => `${origin}${TOKEN_PATH}`;
  const client: TestClient | undefined =
    exchange === undefined ? undefined : createTestClient(exchange.clientId, exchange.authMethod, endpointUrl, clock);

  let issuer = opts.issuer ?? 'https://issuer.test';
  const sign = (payload: Record<string, unknown>, header: Record<string, unknown> = {}) => {
    const current = keys[keys.length - 1];
    const kid = current === undefined ? {} : { kid: current.kid };
    return signToken(payload, secret ?? current.privateKey, alg, { ...kid, ...header });
  };
  const secretKey = secret === undefined ? undefined : createSecretKey(Buffer.from(secret, 'utf8'));
  const keyFor = (kid: string | undefined) => secretKey ?? keys.find((k) => k.kid === kid)?.publicKey;

  const token =
    exchange === undefined
      ? undefined
      : tokenEndpoint({
          authenticate: (params, authorization) => (client as TestClient).authenticate(params, authorization),
          grants: {
            [TOKEN_EXCHANGE_GRANT]: tokenExchangeGrant({
              audience,
              readSubject: (text) => {
                const jwt = readSignedJwt(text, alg, keyFor, clock());
                return jwt?.payload.iss === issuer ? jwt : undefined;
              },
              sign: (claims, typ) => sign(claims, typ === undefined ? {} : { typ }),
              lifetime,
              clock,
              targets: exchange.targets,
            }),
          },
        });
  const served: IssuerServer | undefined =
    servesJwks || token !== undefined
      ? await serveIssuer({
          jwks: servesJwks
            ? () => {
                jwksRequests++;
                return JSON.stringify({
                  keys: keys.map((k) => ({ ...k.publicKey.export({ format: 'jwk' }), kid: k.kid, alg, use: 'sig' })),
                });
              }
            : undefined,
          metadata: discovery
            ? (at) => ({
                issuer: at,
                jwks_uri: `${at}${JWKS_PATH}`,
                id_token_signing_alg_values_supported: [],
                ...(exchange === undefined ? {} : exchangeMetadata(`${at}${TOKEN_PATH}`, exchange.authMethod)),
              })
            : undefined,
          token:
            token === undefined
              ? undefined
              : (req, res) => {
                  tokenRequests++;
                  token(req, res);
                },
        })
      : undefined;
  origin = served?.origin ?? '';
  if (discovery) issuer = origin;
  const jwksUri = servesJwks ? `${origin}${JWKS_PATH}` : undefined;

  const holder = opts.dpop === true ? createDpopHolder('ES256', clock) : undefined;
  const tokenExchange =
    client === undefined
      ? {}
      : { tokenExchange: { ...client.credentials, ...(discovery ? {} : { endpoint: endpointUrl() }) } };
  const options: TokenAuthOptions = discovery
    ? { issuerBaseURL: issuer, audience, ...(holder === undefined ? {} : { dpop: {} }), ...tokenExchange }
    : {
        key:
          secret !== undefined
            ? { secret }
            : jwksUri !== undefined
              ? { jwksUri, cooldown: 0 }
              : { publicKey: keys[0].publicKey },
        issuer,
        audience,
        algorithms: [alg],
        ...(holder === undefined ? {} : { dpop: {} }),
        ...tokenExchange,
      };

  const claims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => {
    const payload = sampleShapeB({ issuer, audience, now: Math.floor(clock()), lifetime });
    // A user's token names its user: a string sub, which every claims mode takes ('jwt' refuses the sample's null).
    payload.sub = 'test-user';
    if (holder !== undefined) payload.cnf = { jkt: holder.jkt };
    for (const [name, value] of Object.entries(overrides)) {
      if (value === undefined) delete payload[name];
      else payload[name] = value;
    }
    return payload;
  };

  return {
    claims,
    sign: (overrides, header = {}) => sign(claims(overrides), header),
    options,
    holder,
    jwksUri,
    get jwksRequests() {
      return jwksRequests;
    },
    tokenEndpoint: token === undefined ? undefined : endpointUrl(),
    get tokenRequests() {
      return tokenRequests;
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
    close: () => served?.close() ?? Promise.resolve(),
  };
}
