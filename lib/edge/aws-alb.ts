// awsAlb(): options for an app behind an AWS Application Load Balancer that authenticates users (OIDC) and sends their
// claims as an ES256 JWT in `x-amzn-oidc-data`, its segments padded with `=` (or, one day, not), its key a PEM per
// `kid` (docs/edge.md).
import { TokenAuthError } from '../base/errors';
import { optionError, optionName } from '../base/option-error';
import type { FieldList } from '../base/option-checks';
import type { JwsHeader } from '../jose/jws';
import { DEFAULT_COOLDOWN, keyTimeout } from '../keys';
import { PRESET_KEYS, type PresetKeys } from '../keys/options';
import { pemByKidKeySource } from '../keys/pem-by-kid';
import { acceptedList, issuerRefused } from '../token/issuer';
import { defaultKeysBase, readSigners } from './alb-signer';
import { assertionHeader, presetArguments, presetStrings, presetUrl, type EdgeOptions } from './assertion';

/** The arguments of `awsAlb`. */
export interface AwsAlbOptions {
  /** The ALB's ARN (the header's `signer`), or several ALBs of one region; the region names where keys are. */
  signer: string | string[];
  /** The OIDC client id the ALB signs in with (the header's `client`); `null` leaves it unchecked, on purpose. */
  clientId: string | string[] | null;
  /** The identity provider's issuer: the `iss` of the header and of the claims. */
  issuer: string;
  /** Where the keys are, each at this address + `/<kid>`; default the ALB's regional endpoint. For a test. */
  keysBaseURL?: string;
}

const FIELDS: FieldList<AwsAlbOptions> = { signer: true, clientId: true, issuer: true, keysBaseURL: true };

function refused(reason: string, hint: string): TokenAuthError {
  return new TokenAuthError('invalid_token', { reason, hint });
}

/**
 * The ALB's own header fields, checked before any key is fetched (the signature then covers them): `signer` one
 * of the configured ARNs (keys are per region, not per ALB, so only this binds the token to your ALB), `client`
 * the configured client, `iss` the issuer.
 */
function albHeaderRule(signers: ReadonlySet<string>, clients: ReadonlySet<string> | null, issuer: string) {
  return (header: JwsHeader): void => {
    if (typeof header.signer !== 'string' || !signers.has(header.signer))
      throw refused('signer', `expected signer ${acceptedList(signers)}, from awsAlb option "signer"`);
    if (clients !== null && (typeof header.client !== 'string' || !clients.has(header.client)))
      throw refused('client', `expected client ${acceptedList(clients)}, from awsAlb option "clientId"`);
    if (header.iss !== issuer) throw issuerRefused([issuer], 'awsAlb option "issuer" (the header\'s iss)');
  };
}

/**
 * Options for `createTokenAuth` that verify the ALB's `x-amzn-oidc-data`: read from that header only, ES256, its
 * segments padded or unpadded (padding for this preset only; the signature covers them as received), `signer`,
 * `client` and `iss` of its header checked, the key fetched as PEM from the region's key endpoint by a `kid` that
 * must be a UUID. Throws an OptionError naming the argument for a bad one (a malformed ARN, a missing `clientId`).
 */
export function awsAlb(options: AwsAlbOptions): EdgeOptions {
  const given = presetArguments<AwsAlbOptions>(options, FIELDS, 'awsAlb');
  const signers = readSigners(given.signer);
  if (given.clientId === undefined) {
    optionError(
      'clientId',
      `${optionName('clientId', 'awsAlb')} is required: the OIDC client id of the ALB's authenticate-oidc action (null leaves it unchecked on purpose)`,
    );
  }
  const clients =
    given.clientId === null
      ? null
      : new Set(presetStrings(given.clientId, 'awsAlb', 'clientId', 'the OIDC client id the ALB signs in with'));
  if (Array.isArray(given.issuer)) optionError('issuer', `${optionName('issuer', 'awsAlb')} must be one string`);
  const [issuer] = presetStrings(given.issuer, 'awsAlb', 'issuer', "the identity provider's issuer URL");
  const example = 'https://public-keys.auth.elb.<region>.amazonaws.com';
  const base =
    given.keysBaseURL === undefined
      ? defaultKeysBase(signers)
      : new URL(presetUrl(given.keysBaseURL, 'awsAlb', 'keysBaseURL', example).href.replace(/\/?$/, '/'));
  const checkHeader = albHeaderRule(signers.arns, clients, issuer);
  const keys: PresetKeys = ({ clock, algorithms }) => {
    const source = pemByKidKeySource({
      base,
      cooldown: DEFAULT_COOLDOWN,
      timeout: keyTimeout(undefined),
      algorithms: new Set(algorithms ?? ['ES256']),
      clock,
      segments: 'padded',
    });
    return {
      ...source,
      keyFor(header, payload) {
        checkHeader(header);
        return source.keyFor(header, payload);
      },
    };
  };
  const alb: EdgeOptions & { [PRESET_KEYS]: PresetKeys } = {
    getToken: assertionHeader({
      header: 'x-amzn-oidc-data',
      proxy: "an AWS ALB's authenticate action",
      preset: 'awsAlb',
    }),
    issuer,
    // The ALB's claims carry no aud; `client` in its header says which client they were issued to.
    audience: false,
    algorithms: ['ES256'],
    claims: 'jwt',
    [PRESET_KEYS]: keys,
  };
  return alb;
}
