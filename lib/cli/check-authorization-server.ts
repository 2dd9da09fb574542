// The authorization-server part of `check`: one issuer's metadata, found as an MCP client finds it (RFC 8414 and
// OpenID Connect Discovery URLs, in MCP's order), and what a client needs of it: the same issuer, its endpoints,
// PKCE with S256, a way to register, and (a SHOULD) the `iss` authorization response parameter. What fixes a FAIL
// here is the authorization server's configuration, or the issuer the resource's options list.
import { readDocument, shown, shownQuoted, type CheckRun } from './check-documents';

const REFS = {
  metadata: 'RFC 8414 §3.1, §3.3; OIDC Discovery §4.3; MCP 2025-11-25 §4.3',
  endpoints: 'RFC 8414 §2',
  pkce: 'MCP 2025-11-25 §11.4; RFC 7636 §4.2',
  registration: 'MCP 2025-11-25 §5.1.4, §5.3; RFC 7591 §3',
  iss: 'RFC 9207 §2.3; MCP 2026-07-28 §7.1 (SHOULD)',
};

const FIXES = {
  metadata:
    'list an issuer that publishes RFC 8414 or OpenID Connect metadata: the document lists option "issuerBaseURL" (or "issuer"), given as the issuer names itself',
  issuer:
    'give option "issuerBaseURL" (or "issuer") exactly as the issuer names itself in its metadata (RFC 8414 §3.3)',
  endpoints:
    "the authorization server's configuration: its metadata must name authorization_endpoint and token_endpoint",
  pkce: "the authorization server's configuration: support PKCE with S256 and list it in code_challenge_methods_supported",
  registration:
    "the authorization server's configuration: open dynamic client registration (RFC 7591; oidc-provider: features.registration) or client ID metadata documents",
  iss: "the authorization server's configuration: send iss in authorization responses (RFC 9207) and say so in its metadata",
};

/**
 * The metadata URLs of an issuer, in the order an MCP client tries them (MCP 2025-11-25 §4.3): with a path, RFC 8414
 * path insertion, OIDC path insertion, OIDC appending; without one, RFC 8414 then OIDC.
 */
export function metadataUrls(issuer: URL): string[] {
  const path = issuer.pathname.replace(/\/$/, '');
  const origin = issuer.origin;
  if (path === '')
    return [`${origin}/.well-known/oauth-authorization-server`, `${origin}/.well-known/openid-configuration`];
  return [
    `${origin}/.well-known/oauth-authorization-server${path}`,
    `${origin}/.well-known/openid-configuration${path}`,
    `${origin}${path}/.well-known/openid-configuration`,
  ];
}

const isUrl = (value: unknown) => typeof value === 'string' && URL.canParse(value);

/** Check one authorization server (an issuer an accepted metadata document lists), reporting through `run`. */
export async function checkAuthorizationServer(run: CheckRun, issuer: string): Promise<void> {
  const who = shown(issuer);
  const refused = await run.follow(issuer);
  if (refused !== undefined) {
    run.report('FAIL', `${who}: not followed: ${refused.problem}`, REFS.metadata, refused.fix);
    return;
  }
  const tried: string[] = [];
  let metadata: Record<string, unknown> | undefined;
  let from = '';
  for (const url of metadataUrls(new URL(issuer))) {
    const document = readDocument(await run.get(url));
    if ('object' in document) {
      metadata = document.object;
      from = new URL(url).pathname;
      break;
    }
    tried.push(`${new URL(url).pathname} ${document.problem}`);
  }
  if (metadata === undefined) {
    run.report('FAIL', `${who}: no metadata (${tried.join('; ')})`, REFS.metadata, FIXES.metadata);
    return;
  }
  if (metadata.issuer !== issuer) {
    const said = typeof metadata.issuer === 'string' ? shownQuoted(metadata.issuer) : 'absent';
    run.report(
      'FAIL',
      `${who}: metadata at ${from} names issuer ${said}, not the one listed`,
      REFS.metadata,
      FIXES.issuer,
    );
    return;
  }
  run.report('PASS', `${who}: metadata at ${from}, issuer identical`, REFS.metadata);

  const missing = ['authorization_endpoint', 'token_endpoint'].filter((name) => !isUrl(metadata[name]));
  run.report(
    missing.length === 0 ? 'PASS' : 'FAIL',
    `${who}: ${missing.length === 0 ? 'authorization_endpoint and token_endpoint' : `no ${missing.join(' and no ')}`}`,
    REFS.endpoints,
    FIXES.endpoints,
  );

  const methods = metadata.code_challenge_methods_supported;
  const s256 = Array.isArray(methods) && methods.includes('S256');
  run.report(
    s256 ? 'PASS' : 'FAIL',
    `${who}: PKCE ${s256 ? 'S256 in' : 'S256 missing from'} code_challenge_methods_supported`,
    REFS.pkce,
    FIXES.pkce,
  );

  const ways: string[] = [];
  if (metadata.client_id_metadata_document_supported === true) ways.push('client ID metadata documents');
  if (isUrl(metadata.registration_endpoint)) ways.push('dynamic registration');
  run.report(
    ways.length > 0 ? 'PASS' : 'FAIL',
    `${who}: ${ways.length > 0 ? `clients register by ${ways.join(' and ')}` : 'no registration_endpoint and no client ID metadata documents: only pre-registered clients can sign in'}`,
    REFS.registration,
    FIXES.registration,
  );

  const iss = metadata.authorization_response_iss_parameter_supported === true;
  run.report(
    iss ? 'PASS' : 'WARN',
    `${who}: authorization_response_iss_parameter_supported ${iss ? 'true' : 'not true'}`,
    REFS.iss,
    FIXES.iss,
  );
}
