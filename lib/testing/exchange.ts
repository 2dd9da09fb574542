// RFC 8693 token exchange at the test issuer: a subject token it signed itself, audienced to the exchanging client's
// own API, traded for a token to one target with the scope asked, naming the client as the actor (RFC 8693 §4.1).
import { randomUUID } from 'node:crypto';
import { optionError } from '../base/option-error';
import { isStringArray } from '../base/values';
import type { ClientAuthMethod } from '../remote/client-auth';
import { TOKEN_EXCHANGE_GRANT } from '../remote/exchange';
import { ACCESS_TOKEN_TYPE } from '../remote/exchange-target';
import { refusal, type TokenRequest } from './token-endpoint';
import type { SignedJwt } from './signed';

/** `exchange` of `createTestIssuer`: the exchanging client, and what it may ask for. */
export interface TestExchangeOptions {
  /** The exchanging client's id (default `'test-client'`). */
  clientId?: string;
  /** How it authenticates (default `'client_secret_basic'`); its secret or key is made for it, in `options`. */
  authMethod?: ClientAuthMethod;
  /** Each audience or resource it may exchange for, with the scopes it may ask; default: any one target, any scope. */
  targets?: Record<string, readonly string[]>;
}

const METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'];

/** The `exchange` option as read: the client's id and method, and its targets when it has a list. */
export interface ExchangeSetting {
  clientId: string;
  authMethod: ClientAuthMethod;
  targets: Readonly<Record<string, readonly string[]>> | undefined;
}

/** The `exchange` option of `createTestIssuer` read (an OptionError naming it when wrong), or undefined when off. */
export function readExchangeOption(value: boolean | TestExchangeOptions | undefined): ExchangeSetting | undefined {
  if (value === undefined || value === false) return undefined;
  const given = value === true ? {} : value;
  if (typeof given !== 'object' || given === null)
    optionError('exchange', 'createTestIssuer option "exchange" must be true or { clientId?, authMethod?, targets? }');
  const method = given.authMethod ?? 'client_secret_basic';
  if (!METHODS.includes(method))
    optionError('exchange.authMethod', `createTestIssuer option "exchange.authMethod" must be ${METHODS.join(', ')}`);
  const clientId = given.clientId ?? 'test-client';
  if (typeof clientId !== 'string' || clientId === '')
    optionError('exchange.clientId', 'createTestIssuer option "exchange.clientId" must be a non-empty string');
  const targets: unknown = given.targets;
  const scopeLists = typeof targets === 'object' && targets !== null ? Object.values(targets) : [];
  if (targets !== undefined && (scopeLists.length === 0 || scopeLists.some((s) => !isStringArray(s))))
    optionError(
      'exchange.targets',
      'createTestIssuer option "exchange.targets" must map each audience or resource to the scopes it may ask (an array of strings)',
    );
  return { clientId, authMethod: method, targets: given.targets };
}

/** What the grant needs of its issuer. */
export interface ExchangeGrantSettings {
  /** The audience every subject token must name: the API the exchanging client is (its own users' tokens only). */
  audience: string;
  /** A subject token this issuer signed, its times holding now; undefined for any other. */
  readSubject(token: string): SignedJwt | undefined;
  /** The issued token: these claims, signed as the subject token was (its `typ` kept). */
  sign(claims: Record<string, unknown>, typ: unknown): string;
  /** Longest life of an issued token, in seconds; never past the subject token's `exp`. */
  lifetime: number;
  clock: () => number;
  /** The targets the client may ask for, each with the scopes it may ask; undefined: any one target, any scope. */
  targets: Readonly<Record<string, readonly string[]>> | undefined;
}

/** RFC 6749 §3.3 scope-token: %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
/** RFC 8693 §3: a subject token of ours is an access token, and a JWT. */
const SUBJECT_TYPES = new Set([ACCESS_TOKEN_TYPE, 'urn:ietf:params:oauth:token-type:jwt']);
/** Claims of the subject token that do not pass to the issued one: its binding, its start, scopes read elsewhere. */
const NOT_PASSED = ['nbf', 'cnf', 'scope', 'scp'];

/** RFC 8707 §2: an absolute URI without a fragment. */
function isResourceIndicator(value: string): boolean {
  try {
    return !value.includes('#') && new URL(value).protocol !== '';
  } catch {
    return false;
  }
}

/** The one audience or resource the token is for (RFC 8693 §2.1; RFC 8707 §2: `invalid_target`). */
function targetOf(params: URLSearchParams): string {
  const resources = params.getAll('resource');
  if (resources.some((value) => !isResourceIndicator(value)))
    throw refusal('invalid_target', 'resource must be an absolute URI without a fragment');
  const targets = [...new Set([...resources, ...params.getAll('audience')])];
  if (targets.length !== 1 || targets[0] === '')
    throw refusal('invalid_target', 'name exactly one audience or resource');
  return targets[0];
}

/** The subject token (RFC 8693 §2.2.2: anything unacceptable about it is `invalid_request`). */
function subjectOf(params: URLSearchParams, settings: ExchangeGrantSettings): SignedJwt {
  const token = params.get('subject_token');
  const type = params.get('subject_token_type');
  if (token === null || token === '' || type === null)
    throw refusal('invalid_request', 'subject_token and its type are required');
  if (!SUBJECT_TYPES.has(type)) throw refusal('invalid_request', 'subject_token_type must name an access token');
  if (params.has('actor_token') || params.has('actor_token_type'))
    throw refusal('invalid_request', 'actor tokens are not accepted');
  const requested = params.get('requested_token_type');
  if (requested !== null && requested !== ACCESS_TOKEN_TYPE)
    throw refusal('invalid_request', 'this issuer issues access tokens only');
  const subject = settings.readSubject(token);
  if (subject === undefined) throw refusal('invalid_request', 'subject_token is not a valid token of this issuer');
  // Only a token issued for the client's own API may be exchanged by it, never one it merely saw.
  if (![subject.payload.aud].flat().includes(settings.audience))
    throw refusal('invalid_request', 'subject_token is not for this client');
  return subject;
}

/** The scope granted for `target`: as asked, within what the client may ask; its targets' default when none is. */
function grantedScope(params: URLSearchParams, target: string, settings: ExchangeGrantSettings): string[] {
  const asked = [...new Set((params.get('scope') ?? '').split(' ').filter((s) => s !== ''))];
  if (asked.some((scope) => !SCOPE_TOKEN.test(scope))) throw refusal('invalid_scope', 'scope is malformed');
  if (settings.targets === undefined) return asked;
  const allowed = Object.prototype.hasOwnProperty.call(settings.targets, target) ? settings.targets[target] : undefined;
  if (allowed === undefined) throw refusal('invalid_target', 'the client may not exchange tokens for this target');
  if (asked.some((scope) => !allowed.includes(scope)))
    throw refusal('invalid_scope', 'a scope asked is not allowed for this target');
  return asked.length > 0 ? asked : [...allowed];
}

/** What the issuer's metadata says of its token endpoint (RFC 8414 §2), for a client registered with `method`. */
export function exchangeMetadata(endpoint: string, method: string): Record<string, unknown> {
  return {
    token_endpoint: endpoint,
    grant_types_supported: [TOKEN_EXCHANGE_GRANT],
    token_endpoint_auth_methods_supported: [method],
    ...(method === 'private_key_jwt' ? { token_endpoint_auth_signing_alg_values_supported: ['ES256'] } : {}),
  };
}

/** The grant: the token endpoint's answer to one exchange request (RFC 8693 §2.2.1), or a refusal thrown. */
export function tokenExchangeGrant(
  settings: ExchangeGrantSettings,
): (request: TokenRequest) => Record<string, unknown> {
  return ({ params, clientId }) => {
    const subject = subjectOf(params, settings);
    const target = targetOf(params);
    const scope = grantedScope(params, target, settings);
    const now = Math.floor(settings.clock());
    const expiresIn = Math.max(1, Math.min(settings.lifetime, (subject.payload.exp as number) - now));
    const claims: Record<string, unknown> = { ...subject.payload };
    for (const name of NOT_PASSED) delete claims[name];
    const earlier = subject.payload.act;
    Object.assign(claims, {
      aud: target,
      iat: now,
      exp: now + expiresIn,
      jti: randomUUID(),
      scopes: scope,
      act: earlier === undefined ? { sub: clientId } : { sub: clientId, act: earlier },
    });
    return {
      access_token: settings.sign(claims, subject.header.typ),
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: 'Bearer',
      expires_in: expiresIn,
      ...(scope.length === 0 ? {} : { scope: scope.join(' ') }),
    };
  };
}
