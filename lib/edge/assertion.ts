// What the edge presets share: the options they return, the reading of their proxy's own header (never
// Authorization), and the checks of their own arguments, each an OptionError naming the preset and the argument.
import type { Request } from 'express';
import { optionError, optionName } from '../base/option-error';
import { knownFields } from '../base/option-checks';
import { isObject } from '../base/values';
import type { TokenAuthOptions } from '../config/options';
import { isLoopbackHost } from '../fetch/remote-url';
import { markProxyAssertion, type ProxyAssertion } from '../extract/proxy-assertion';

/**
 * What a preset returns: options for `createTokenAuth`, with `claims: 'jwt'`, which spread into a larger options
 * object as any other (`createTokenAuth({ ...cloudflareAccess({ … }), onError })`).
 */
export type EdgeOptions = TokenAuthOptions & { claims: 'jwt' };

/** The names of the presets, as their messages say them. */
export type PresetName = 'cloudflareAccess' | 'googleIap' | 'awsAlb';

/**
 * The `getToken` of a preset: the value of its proxy's request header (`assertion.header`, any case), or undefined
 * when the request has none. No other header is read, so a token sent as `Authorization: Bearer` is not one of the
 * proxy's. Marked with the header and the proxy, so that a request without it is told which header was expected.
 */
export function assertionHeader(assertion: ProxyAssertion): (req: Request) => string | undefined {
  const name = assertion.header.toLowerCase();
  return markProxyAssertion((req: Request) => {
    const value = req.headers[name];
    return typeof value === 'string' ? value : undefined;
  }, assertion);
}

/** The preset's arguments: an object with only the fields it takes. */
export function presetArguments<T extends object>(
  value: unknown,
  fields: Readonly<Record<keyof T & string, true>>,
  preset: PresetName,
): T {
  if (!isObject(value)) optionError('', `${preset} expects an options object`);
  knownFields(value, fields, '', preset);
  return value as T;
}

/**
 * An address the preset fetches or names (`teamDomain`, `jwksUri`, `keysBaseURL`): an https: URL without
 * credentials, query or fragment; plain http: only for a loopback host (a test's own server).
 */
export function presetUrl(value: unknown, preset: PresetName, option: string, example: string): URL {
  const name = optionName(option, preset);
  if (typeof value !== 'string' || value === '') optionError(option, `${name} is required: a URL such as ${example}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return optionError(option, `${name} is not a URL (such as ${example})`);
  }
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp)
    optionError(option, `${name} must be an https: URL such as ${example} (plain http: only on a loopback host)`);
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    optionError(option, `${name} must have no credentials, query or fragment`);
  return url;
}

/** A string the preset compares with a claim (`audience`, `issuer`, `clientId`): one, or a non-empty array of them. */
export function presetStrings(value: unknown, preset: PresetName, option: string, what: string): string[] {
  const name = optionName(option, preset);
  if (value === undefined) optionError(option, `${name} is required: ${what}`);
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || list.some((v) => typeof v !== 'string' || v === '' || v !== v.trim()))
    optionError(option, `${name} must be ${what}: a non-empty string without surrounding spaces, or an array of them`);
  return list as string[];
}
