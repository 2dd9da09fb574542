// The credential as an authenticating proxy hands it over (the edge presets' `getToken`): which header, set by which
// proxy, recorded on the reader itself so that a refusal's hint can name them (config/refusal-hints.ts).

/** The header an authenticating proxy sets, and who sets it, as hints name them. */
export interface ProxyAssertion {
  /** The header, as the vendor writes it: `Cf-Access-Jwt-Assertion`. */
  readonly header: string;
  /** Who sets it: `Cloudflare Access`. */
  readonly proxy: string;
  /** The preset that reads it: `cloudflareAccess`. */
  readonly preset: string;
}

// A symbol no option list sees (knownFields reads string keys), on the function the preset returns as getToken.
const PROXY_ASSERTION = Symbol('express-verified-user.proxyAssertion');

/** `getToken`, marked as the reader of `assertion`'s header (the same function, returned). */
export function markProxyAssertion<F extends object>(getToken: F, assertion: ProxyAssertion): F {
  Object.defineProperty(getToken, PROXY_ASSERTION, { value: Object.freeze({ ...assertion }) });
  return getToken;
}

/** The proxy header a `getToken` reads, when a preset made it; undefined for an app's own `getToken`. */
export function proxyAssertionOf(getToken: unknown): ProxyAssertion | undefined {
  if (typeof getToken !== 'function') return undefined;
  return (getToken as unknown as Record<symbol, ProxyAssertion | undefined>)[PROXY_ASSERTION];
}
