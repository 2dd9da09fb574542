// googleIap(): options for an app behind Google Cloud's Identity-Aware Proxy, which signs an assertion (ES256) for
// each request and sends it in `x-goog-iap-jwt-assertion` (docs/edge.md names the Google pages).
import { optionError, optionName } from '../base/option-error';
import type { FieldList } from '../base/option-checks';
import { assertionHeader, presetArguments, presetStrings, presetUrl, type EdgeOptions } from './assertion';

/** The arguments of `googleIap`. */
export interface GoogleIapOptions {
  /**
   * The backend the token is for, as IAP writes its `aud`: `/projects/<number>/global/backendServices/<id>`
   * (Compute Engine, GKE) or `/projects/<number>/apps/<project id>` (App Engine); or several.
   */
  audience: string | string[];
  /** Where IAP's keys are (a JWK set); default Google's. For a mirror or a test. */
  jwksUri?: string;
}

const FIELDS: FieldList<GoogleIapOptions> = { audience: true, jwksUri: true };

/** Google's JWK set of IAP's signing keys. */
export const IAP_JWKS_URI = 'https://www.gstatic.com/iap/verify/public_key-jwk';

/** The `iss` of every IAP assertion. */
export const IAP_ISSUER = 'https://cloud.google.com/iap';

/** IAP's `aud`: a path under a project *number* (a project id there is a common slip, and would refuse every token). */
const IAP_AUDIENCE = /^\/projects\/\d+\/\S+$/;

/**
 * Options for `createTokenAuth` that verify IAP's signed header: read from `x-goog-iap-jwt-assertion` only, ES256,
 * keys from Google's JWK set (or `jwksUri`), `iss` `https://cloud.google.com/iap`, `aud` the backend. Throws an
 * OptionError naming the argument for a bad one.
 */
export function googleIap(options: GoogleIapOptions): EdgeOptions {
  const given = presetArguments<GoogleIapOptions>(options, FIELDS, 'googleIap');
  const what = "the backend's audience, /projects/<number>/global/backendServices/<id> or /projects/<number>/apps/<id>";
  const audience = presetStrings(given.audience, 'googleIap', 'audience', what);
  if (audience.some((aud) => !IAP_AUDIENCE.test(aud)))
    optionError('audience', `${optionName('audience', 'googleIap')} must be ${what}`);
  const jwksUri =
    given.jwksUri === undefined ? IAP_JWKS_URI : presetUrl(given.jwksUri, 'googleIap', 'jwksUri', IAP_JWKS_URI).href;
  return {
    getToken: assertionHeader({
      header: 'x-goog-iap-jwt-assertion',
      proxy: 'Google Cloud IAP',
      preset: 'googleIap',
    }),
    key: { jwksUri },
    issuer: IAP_ISSUER,
    audience,
    algorithms: ['ES256'],
    claims: 'jwt',
  };
}
