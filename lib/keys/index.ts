// The `key` and `issuerBaseURL` options: their forms read and checked at set-up (resolveKeys), and the signing-key
// source built from them (createKeySource). The `upstream` form is a remote source: remote/index.ts resolves it.
import { parseDuration, positiveDuration } from '../base/duration';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { Algorithm } from '../jose/algorithms';
import { checkRemoteUrl } from '../fetch/remote-url';
import {
  PRESET_KEYS,
  type JwksKeyOption,
  type JwksKeySetOption,
  type PresetKeys,
  type PublicKeyOption,
  type ResolvedKeys,
  type SecretKeyOption,
} from './options';
import { discoveryKeySource } from './discovery';
import {
  checkDiscoveryTenants,
  resolveDiscoveryTimeout,
  resolveIssuerBaseURL,
  type IssuerBase,
} from './discovery-options';
import type { ServedIssuers, TenantRule } from '../token/issuer';
import { jwksKeySource } from './jwks';
import { inlineJwksKeySource, resolveInlineJwks } from './inline-jwks';
import { undefinedOptionMessage } from '../base/env-names';
import { checkJwksAddress } from './wrong-document';
import {
  heldKeySource,
  resolvePublicKey,
  resolverAlgorithms,
  resolverKeySource,
  resolveSecret,
  type KeyResolver,
} from './static';
import type { SigningKeySource } from './source';

/** The object forms of the `key` option. */
export type KeyForm = 'secret' | 'publicKey' | 'jwks' | 'jwksUri' | 'upstream';

/** The fields of the forms keys/ builds; `upstream`'s come from remote/index.ts, which builds that form. */
const SECRET_FIELDS: FieldList<SecretKeyOption> = { secret: true };
const PUBLIC_KEY_FIELDS: FieldList<PublicKeyOption> = { publicKey: true };
const JWK_SET_FIELDS: FieldList<JwksKeySetOption> = { jwks: true };
const JWKS_FIELDS: FieldList<JwksKeyOption> = { jwksUri: true, cooldown: true, timeout: true };

/** Least time (seconds) between two key fetches of a source, unless its option says otherwise. */
export const DEFAULT_COOLDOWN = 30;

/** `key.timeout`: seconds, more than zero; 5 when absent. */
export function keyTimeout(value: unknown): number {
  return positiveDuration(value, 'key.timeout', 5);
}

/** What the key room reads of createTokenAuth's options. */
export interface KeyOptionsInput {
  key?: unknown;
  issuer?: unknown;
  issuerBaseURL?: unknown;
  discovery?: unknown;
  /** The key source an edge preset brings (keys/options.ts). */
  [PRESET_KEYS]?: unknown;
}

/** What resolving keys needs of the other options, already resolved. */
export interface KeyContext {
  algorithms: readonly Algorithm[] | undefined;
  allowInsecureHttp: boolean;
  /** The `tenants` option, read (token/issuer.ts). */
  tenants: TenantRule | undefined;
}

/** The `key` and `issuerBaseURL` options read: discovery, a resolver, or an object form with its fields. */
export type KeyOptionRead =
  | { form: 'discovery'; issuers: readonly IssuerBase[]; timeout: number }
  | { form: 'resolver'; resolve: KeyResolver }
  | { form: 'preset'; build: PresetKeys }
  | { form: 'secret' | 'publicKey' | 'jwks' | 'jwksUri'; fields: Readonly<Record<string, unknown>> }
  | { form: 'upstream'; fields: Readonly<Record<string, unknown>> };

/**
 * Read `issuerBaseURL` and `discovery`, or else the `key` option (an OptionError for anything wrong): a resolver
 * function, or an object with exactly one of `secret`, `publicKey`, `jwks`, `jwksUri`, `upstream` and only the fields that
 * form allows (`upstreamFields` for the last).
 */
export function readKeyOption(
  options: KeyOptionsInput,
  upstreamFields: Readonly<Record<string, true>>,
  allowInsecureHttp: boolean,
): KeyOptionRead {
  const preset = options[PRESET_KEYS];
  if (typeof preset === 'function') {
    // The preset's keys are the only ones its tokens are signed with: another key source beside them is a mix-up.
    const other = options.key !== undefined ? 'key' : options.issuerBaseURL !== undefined ? 'issuerBaseURL' : undefined;
    if (other !== undefined)
      optionError(other, `option "${other}" does not apply: the edge preset brings the keys its proxy signs with`);
    return { form: 'preset', build: preset as PresetKeys };
  }
  const issuers = resolveIssuerBaseURL(options, allowInsecureHttp);
  const timeout = resolveDiscoveryTimeout(options);
  if (issuers !== undefined) return { form: 'discovery', issuers, timeout };
  const key = options.key;
  // `issuerBaseURL: process.env.ISSUER_BASE_URL` with the variable unset: say so, rather than "key is required".
  if (key === undefined && 'issuerBaseURL' in options)
    optionError('issuerBaseURL', undefinedOptionMessage('issuerBaseURL', '', 'give key (and issuer) instead'));
  if (key === undefined)
    optionError(
      'key',
      'option "key" is required ({ secret }, { publicKey }, { jwks }, { jwksUri }, { upstream } or a resolver function)',
    );
  if (typeof key === 'function') return { form: 'resolver', resolve: key as KeyResolver };
  if (!isObject(key)) optionError('key', 'option "key" must be an object or a function');
  const forms: Record<KeyForm, Readonly<Record<string, true>>> = {
    secret: SECRET_FIELDS,
    publicKey: PUBLIC_KEY_FIELDS,
    jwks: JWK_SET_FIELDS,
    jwksUri: JWKS_FIELDS,
    upstream: upstreamFields,
  };
  const names = Object.keys(forms) as KeyForm[];
  const given = names.filter((form) => key[form] !== undefined);
  // `{ secret: process.env.TOKEN_SECRET }` with the variable unset: say so, rather than "exactly one of".
  const unset = names.find((form) => form in key && key[form] === undefined);
  if (given.length === 0 && unset !== undefined)
    optionError(
      `key.${unset}`,
      undefinedOptionMessage(`key.${unset}`, ', so no key is configured', 'pass another key form'),
    );
  if (given.length !== 1) {
    optionError(
      'key',
      `option "key" must have exactly one of secret, publicKey, jwks, jwksUri or upstream${given.length > 1 ? ` (got ${given.join(' and ')})` : ''}`,
    );
  }
  const form = given[0];
  // A field left undefined (an unset environment variable, say) is absent, as it is for choosing the form.
  const defined = Object.fromEntries(Object.entries(key).filter(([, value]) => value !== undefined));
  knownFields(
    defined,
    forms[form],
    'key',
    undefined,
    (option, known) => `option "${option}" does not apply to key.${form} (allowed: ${known})`,
  );
  return { form, fields: key };
}

/** HS* algorithms verify with a shared secret, which a fetched key source (a JWKS, a PEM) never carries. */
function refuseSecretAlgorithms(
  algorithms: readonly Algorithm[] | undefined,
  source: string,
  carries = 'a JWKS carries public keys only',
): void {
  if (algorithms?.some((alg) => alg.startsWith('HS')))
    optionError('algorithms', `option "algorithms" may not name an HS* algorithm with ${source} (${carries})`);
}

/**
 * The signing keys of a read `key` option (any form but `upstream`) or of `issuerBaseURL`, checked (an OptionError
 * for anything wrong): secrets and public keys parsed, JWKS addresses and durations read, algorithms fitted.
 */
export function resolveKeys(read: Exclude<KeyOptionRead, { form: 'upstream' }>, context: KeyContext): ResolvedKeys {
  const { algorithms, allowInsecureHttp, tenants } = context;
  switch (read.form) {
    case 'discovery':
      refuseSecretAlgorithms(algorithms, 'issuerBaseURL');
      checkDiscoveryTenants(read.issuers, tenants);
      return {
        form: 'discovery',
        issuers: read.issuers,
        timeout: read.timeout,
        tenants,
        algorithms,
        allowInsecureHttp,
      };
    case 'resolver':
      return { form: 'resolver', resolve: read.resolve, algorithms: resolverAlgorithms(algorithms) };
    case 'preset':
      refuseSecretAlgorithms(algorithms, 'an edge preset', 'its proxy signs with a public key pair');
      return { form: 'preset', build: read.build, algorithms };
    case 'secret':
      return { form: 'held', held: resolveSecret(read.fields.secret, algorithms) };
    case 'publicKey':
      return { form: 'held', held: resolvePublicKey(read.fields.publicKey, algorithms) };
    case 'jwks':
      refuseSecretAlgorithms(algorithms, 'key.jwks', 'a JWK Set here holds public keys only');
      return { form: 'jwks', jwks: resolveInlineJwks(read.fields.jwks, algorithms) };
    case 'jwksUri': {
      const url = checkRemoteUrl(read.fields.jwksUri, 'key.jwksUri', allowInsecureHttp);
      checkJwksAddress(url, 'key.jwksUri');
      refuseSecretAlgorithms(algorithms, 'key.jwksUri');
      const cooldown = read.fields.cooldown;
      return {
        form: 'jwksUri',
        url,
        cooldown: cooldown === undefined ? DEFAULT_COOLDOWN : parseDuration(cooldown, 'key.cooldown'),
        timeout: keyTimeout(read.fields.timeout),
        algorithms,
      };
    }
  }
}

/**
 * The signing-key source of resolved keys; `clock` paces fetches; `served`, the issuers option `issuer` accepts, for
 * a JWK Set's keys bound to an issuer (discovery serves its own). Never throws: resolveKeys checked everything.
 */
export function createKeySource(keys: ResolvedKeys, clock: () => number, served?: ServedIssuers): SigningKeySource {
  switch (keys.form) {
    case 'held':
      return heldKeySource(keys.held);
    case 'resolver':
      return resolverKeySource(keys.resolve, keys.algorithms);
    case 'jwks':
      return inlineJwksKeySource(keys.jwks, served);
    case 'jwksUri':
      return jwksKeySource({ ...keys, clock, served });
    case 'discovery':
      return discoveryKeySource({ ...keys, cooldown: DEFAULT_COOLDOWN, clock });
    case 'preset':
      return keys.build({ clock, algorithms: keys.algorithms });
  }
}

export type { SigningKeySource } from './source';
export type { ResolvedKeys } from './options';
