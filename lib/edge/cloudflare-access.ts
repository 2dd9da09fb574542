// cloudflareAccess(): options for an app behind Cloudflare Access, which signs an application token (RS256) for
// each request and sends it in `Cf-Access-Jwt-Assertion` (docs/edge.md names the Cloudflare pages).
import { optionError, optionName } from '../base/option-error';
import type { FieldList } from '../base/option-checks';
import { assertionHeader, presetArguments, presetStrings, presetUrl, type EdgeOptions } from './assertion';

/** The arguments of `cloudflareAccess`. */
export interface CloudflareAccessOptions {
  /** The team domain, `https://<team>.cloudflareaccess.com`: the tokens' `iss`, and where the keys are. */
  teamDomain: string;
  /** The Access application's AUD tag (or several): the token's `aud` must contain one. */
  audience: string | string[];
  /** Where the team's keys are (a JWK set); default `<teamDomain>/cdn-cgi/access/certs`. For a mirror or a test. */
  jwksUri?: string;
}

const FIELDS: FieldList<CloudflareAccessOptions> = { teamDomain: true, audience: true, jwksUri: true };

/**
 * Options for `createTokenAuth` that verify Cloudflare Access's application token: read from the
 * `Cf-Access-Jwt-Assertion` header only, RS256, keys from `<teamDomain>/cdn-cgi/access/certs` (or `jwksUri`; a JWKS
 * whose `public_cert` and `public_certs` members are not read), `iss` the team domain, `aud` holding the AUD tag.
 * Throws an OptionError naming the argument for a bad one.
 */
export function cloudflareAccess(options: CloudflareAccessOptions): EdgeOptions {
  const given = presetArguments<CloudflareAccessOptions>(options, FIELDS, 'cloudflareAccess');
  const url = presetUrl(given.teamDomain, 'cloudflareAccess', 'teamDomain', 'https://<team>.cloudflareaccess.com');
  if (url.pathname !== '/')
    optionError('teamDomain', `${optionName('teamDomain', 'cloudflareAccess')} must be the team domain alone, no path`);
  // The token's iss is the team domain without a trailing slash.
  const teamDomain = url.origin;
  const certs = `${teamDomain}/cdn-cgi/access/certs`;
  const jwksUri =
    given.jwksUri === undefined ? certs : presetUrl(given.jwksUri, 'cloudflareAccess', 'jwksUri', certs).href;
  return {
    getToken: assertionHeader({
      header: 'Cf-Access-Jwt-Assertion',
      proxy: 'Cloudflare Access',
      preset: 'cloudflareAccess',
    }),
    key: { jwksUri },
    issuer: teamDomain,
    audience: presetStrings(given.audience, 'cloudflareAccess', 'audience', "the Access application's AUD tag"),
    algorithms: ['RS256'],
    claims: 'jwt',
  };
}
