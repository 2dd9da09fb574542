// The duties `check` reports on the protected resource, each with the RFC or MCP sections that state it and the
// call of this package that meets it, printed after a FAIL (or a WARN) so that the line says what to change.

/** The sections each duty comes from. */
export const REFS = {
  unauthenticated: 'RFC 6750 §3.1; MCP 2025-11-25 §10',
  challenge: 'RFC 6750 §3; RFC 9110 §11.6.1',
  noError: 'RFC 6750 §3.1',
  resourceMetadata: 'RFC 9728 §5.1; MCP 2025-06-18 §2.3.1, 2025-11-25 §4.2',
  scope: 'MCP 2025-11-25 §4.2 (SHOULD); RFC 6750 §3',
  named: 'RFC 9728 §3.2, §3.3',
  pathForm: 'RFC 9728 §3.1, §3.3; MCP 2025-11-25 §4.2',
  rootForm: 'MCP 2025-11-25 §4.2 (fallback)',
  servers: 'RFC 9728 §2; MCP 2025-11-25 §4.1',
  token: 'RFC 8707 §2; RFC 6750 §3.1; MCP 2025-11-25 §9.2',
} as const;

/** What meets each duty, by its name in `fixes`. */
export type Fixes = ReturnType<typeof fixes>;

/** What meets each duty with this package, for the probed URL `target` (written as a client calls it). */
export function fixes(target: URL) {
  const resource = `createTokenAuth({ resource: '${target.href}', … })`;
  const metadata = `app.use(auth.protectedResourceMetadata()) at the app's root, with ${resource} (the URL clients call, as a proxy in front shows it)`;
  return {
    unauthenticated: `protect the endpoint: app.post('${target.pathname}', express.json(), requireMcpAuth(auth), handler) (or auth.requireVerifiedUser())`,
    unreachable: `make ${target.origin} reachable from here (host, port, TLS certificate), then protect the endpoint with requireMcpAuth(auth)`,
    challenge:
      'answer the 401 with requireMcpAuth(auth) or auth.requireVerifiedUser() (they send the Bearer challenge); a proxy in front must pass WWW-Authenticate through',
    noError:
      'answer with requireMcpAuth(auth) or auth.requireVerifiedUser(), which send no error code when no token came',
    resourceMetadata: `${resource} and app.use(auth.protectedResourceMetadata()): every challenge then names the document`,
    scope:
      'requireMcpAuth(auth, { scopes: [...] }) (or auth.requireVerifiedUser([...])) with option "resource": the 401 then names the scopes',
    named: metadata,
    pathForm: metadata,
    servers: metadata,
    serverList:
      'the document lists option "issuerBaseURL" (or "issuer"): give the https URL of the issuer clients sign in at',
    token: `${resource} (or option "audience"), never audience: false: tokens of other audiences are then refused`,
  };
}
