// `express-verified-user check <url>`: probes a deployed protected resource (an MCP server) as an MCP client would,
// without credentials, and reports one PASS, WARN (a SHOULD not met) or FAIL line per duty with its RFC or MCP
// section, and for a FAIL the call that fixes it. Bounded: a deadline for the run and each request, a request
// budget, a byte cap, no redirects followed, every host's address checked and pinned (check-network.ts).
import { fetchBounded, RemoteFetchError } from '../fetch/bounded-fetch';
import { checkAuthorizationServer } from './check-authorization-server';
import { fixes, REFS, type Fixes } from './check-duties';
import { probeNetwork, type CheckNetwork, type ProbeNetwork } from './check-network';
import {
  fetchableUrl,
  readDocument,
  shown,
  shownQuoted,
  type CheckLine,
  type CheckRun,
  type CheckStatus,
  type MetadataDocument,
  type ProbeAnswer,
} from './check-documents';
import { UsageError } from './usage';
import { parseChallenges } from './www-authenticate';

/** The bounds of one run. */
export const CHECK_LIMITS = Object.freeze({
  /** Longest wait for one answer, body included. */
  requestMs: 5_000,
  /** Longest run, every request included (`--timeout`). */
  totalMs: 30_000,
  /** Largest metadata document read. */
  maxBytes: 64 * 1024,
  /** Authorization servers checked, of those a document lists. */
  maxAuthorizationServers: 4,
  /** Requests one run may send: the 401, three metadata documents, three per authorization server, the token. */
  maxRequests: 1 + 3 + 4 * 3 + 1,
});

/** What a run was asked to check. */
export interface CheckRequest {
  readonly url: string;
  /** A token the server must refuse (one for another audience); never printed. */
  readonly token?: string;
  /** Longest run, in milliseconds (default `CHECK_LIMITS.totalMs`). */
  readonly totalMs?: number;
  /** Follow addresses in private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) that a server names (`--allow-private`). */
  readonly allowPrivate?: boolean;
  /** How names are resolved and which addresses are this machine's (for tests: check-network.ts); the system's by default. */
  readonly network?: CheckNetwork;
}

/** The probed URL: absolute http(s), no credentials or fragment (a UsageError otherwise). */
function targetOf(value: string): URL {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw new UsageError('check takes the absolute http(s) URL of the protected resource, such as https://host/mcp');
  if (url.username !== '' || url.password !== '' || url.hash !== '')
    throw new UsageError('the URL to check must carry no credentials and no fragment');
  return url;
}

/** A client's first message (MCP 2025-11-25 `initialize`): what a server answers 401 to before anything runs. */
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'express-verified-user check', version: '1' },
  },
});

/** Whether a document describes the probed resource (RFC 9728 §3.3: `resource` identical), and what it says. */
function describes(document: MetadataDocument, target: URL, given: string): { ok: boolean; found: string } {
  if ('problem' in document) return { ok: false, found: document.problem };
  const resource = document.object.resource;
  if (typeof resource !== 'string') return { ok: false, found: 'has no resource' };
  if (resource === target.href || resource === given) return { ok: true, found: 'resource is the probed URL' };
  return { ok: false, found: `resource is ${shownQuoted(resource)}, not the probed ${target.href}` };
}

/**
 * The requests of one run: each within the run's deadline and its own, counted, bodies capped, none redirected, and
 * sent only to an address the network admits, pinned (its name is not looked up again to connect).
 */
function boundedSender(deadline: number, signal: AbortSignal, network: ProbeNetwork) {
  let sent = 0;
  return async (url: string, headers: Record<string, string>, body?: string): Promise<ProbeAnswer> => {
    if (deadline - Date.now() <= 0) return 'not sent: the run reached its time limit';
    if (sent >= CHECK_LIMITS.maxRequests) return 'not sent: the run used its request budget';
    const admission = await network.admit(new URL(url), Math.min(deadline, Date.now() + CHECK_LIMITS.requestMs));
    if ('problem' in admission) return 'fix' in admission ? `not followed: ${admission.problem}` : admission.problem;
    const left = deadline - Date.now();
    if (left <= 0) return 'not sent: the run reached its time limit';
    sent += 1;
    try {
      return await fetchBounded(url, {
        headers,
        body,
        timeoutMs: Math.min(CHECK_LIMITS.requestMs, left),
        maxBytes: CHECK_LIMITS.maxBytes,
        signal,
        kind: 'discovery',
        transport: admission.transport,
      });
    } catch (err) {
      const failure = err instanceof RemoteFetchError ? err.failure : 'network';
      if (failure === 'too-large') return `answered more than ${CHECK_LIMITS.maxBytes / 1024} KiB`;
      if (failure === 'network') return 'no answer (network error, or a redirect, which check does not follow)';
      return `no answer (${failure})`;
    }
  };
}

/** The 401 without a token and its challenge; answers the metadata URL the challenge names, if one can be fetched. */
function checkChallenge(run: CheckRun, answer: ProbeAnswer, target: URL, fix: Fixes): URL | undefined {
  const status = typeof answer === 'string' ? answer : String(answer.status);
  const cure = typeof answer === 'string' ? fix.unreachable : fix.unauthenticated;
  run.report(status === '401' ? 'PASS' : 'FAIL', `POST without a token: ${status}`, REFS.unauthenticated, cure);
  const field = typeof answer === 'string' ? null : answer.headers.get('www-authenticate');
  const challenges = field === null ? [] : parseChallenges(field);
  const challenge = challenges.find((c) => c.scheme === 'bearer') ?? challenges.find((c) => c.scheme === 'dpop');
  if (challenge === undefined) {
    const schemes = shown(challenges.map((c) => c.scheme).join(', '));
    run.report(
      'FAIL',
      `WWW-Authenticate: ${field === null ? 'none' : `no Bearer challenge (${schemes})`}`,
      REFS.challenge,
      fix.challenge,
    );
    return undefined;
  }
  run.report(
    'PASS',
    `WWW-Authenticate: a ${challenge.scheme === 'bearer' ? 'Bearer' : 'DPoP'} challenge`,
    REFS.challenge,
  );
  const error = challenge.params.get('error');
  if (error === undefined) run.report('PASS', 'no error code without a token', REFS.noError);
  else run.report('FAIL', `error=${shownQuoted(error)} although no token was sent`, REFS.noError, fix.noError);
  const metadata = challenge.params.get('resource_metadata');
  const named = fetchableUrl(metadata, target);
  if (metadata === undefined)
    run.report('FAIL', 'resource_metadata: absent from the challenge', REFS.resourceMetadata, fix.resourceMetadata);
  else if (named === undefined)
    run.report(
      'FAIL',
      `resource_metadata: ${shownQuoted(metadata)} is no https URL check may follow`,
      REFS.resourceMetadata,
      fix.resourceMetadata,
    );
  else run.report('PASS', `resource_metadata: ${named.href}`, REFS.resourceMetadata);
  const scope = challenge.params.get('scope');
  if (scope === undefined)
    run.report('WARN', 'scope: absent (clients then ask for scopes_supported)', REFS.scope, fix.scope);
  else run.report('PASS', `scope: ${shownQuoted(scope)}`, REFS.scope);
  return named;
}

/**
 * The metadata documents a client may read, in its order: the one the challenge names, the path form, the root form
 * (RFC 9728 §3.1; MCP 2025-11-25 §4.2). Answers the first that describes the probed resource.
 */
async function checkDocuments(
  run: CheckRun,
  target: URL,
  given: string,
  named: URL | undefined,
  fix: Fixes,
): Promise<Record<string, unknown> | undefined> {
  const read = new Map<string, Promise<MetadataDocument>>();
  const accepted: Array<Record<string, unknown>> = [];
  const look = async (url: string) => {
    if (!read.has(url)) read.set(url, run.get(url).then(readDocument));
    const document = await (read.get(url) as Promise<MetadataDocument>);
    const verdict = describes(document, target, given);
    if (verdict.ok && 'object' in document) accepted.push(document.object);
    return verdict;
  };
  const refused = named === undefined ? undefined : await run.follow(named.href);
  if (refused !== undefined)
    run.report('FAIL', `the resource_metadata document: not followed: ${refused.problem}`, REFS.named, refused.fix);
  else if (named !== undefined) {
    const verdict = await look(named.href);
    run.report(verdict.ok ? 'PASS' : 'FAIL', `the resource_metadata document: ${verdict.found}`, REFS.named, fix.named);
  }
  const root = `${target.origin}/.well-known/oauth-protected-resource`;
  const pathForm = target.pathname === '/' ? root : `${root}${target.pathname}`;
  const byPath = await look(pathForm);
  // Without its path form a resource is still found, through the challenge, when the document named there is good.
  const fallback = accepted.length > 0 ? 'WARN' : 'FAIL';
  run.report(byPath.ok ? 'PASS' : fallback, `path form ${pathForm}: ${byPath.found}`, REFS.pathForm, fix.pathForm);
  if (pathForm !== root) {
    const byRoot = await look(root);
    run.report(byRoot.ok ? 'PASS' : 'WARN', `root form ${root}: ${byRoot.found}`, REFS.rootForm);
  }
  return accepted[0];
}

/** `authorization_servers` of the accepted document, and each one's metadata (at most a handful). */
async function checkAuthorizationServers(
  run: CheckRun,
  target: URL,
  document: Record<string, unknown> | undefined,
  fix: Fixes,
): Promise<void> {
  if (document === undefined) {
    const text = 'authorization_servers: no metadata document describes this resource';
    run.report('FAIL', text, REFS.servers, fix.servers);
    return;
  }
  const listed = document.authorization_servers;
  const issuers = Array.isArray(listed)
    ? listed.filter((entry): entry is string => fetchableUrl(entry, target) !== undefined)
    : [];
  if (!Array.isArray(listed) || listed.length === 0 || issuers.length < listed.length) {
    run.report(
      'FAIL',
      'authorization_servers: not a non-empty list of https issuer URLs check may follow',
      REFS.servers,
      fix.serverList,
    );
    return;
  }
  const checked = issuers.slice(0, CHECK_LIMITS.maxAuthorizationServers);
  const more = issuers.length - checked.length;
  const list = `${checked.map(shown).join(', ')}${more > 0 ? ` (${more} more not checked)` : ''}`;
  run.report('PASS', `authorization_servers: ${list}`, REFS.servers);
  for (const issuer of checked) await checkAuthorizationServer(run, issuer);
}

/** What the server answered a token it must refuse: a 401 passes, anything else fails. */
function checkRefusal(run: CheckRun, answer: ProbeAnswer, fix: Fixes): void {
  const what = '--token (another audience)';
  if (typeof answer === 'string') {
    run.report('FAIL', `${what}: ${answer}`, REFS.token, fix.token);
    return;
  }
  if (answer.status === 401) {
    const challenges = parseChallenges(answer.headers.get('www-authenticate') ?? '');
    const error = challenges.find((c) => c.params.has('error'))?.params.get('error');
    run.report('PASS', `${what}: 401${error === undefined ? '' : ` ${shown(error)}`}`, REFS.token);
    return;
  }
  const why = answer.status === 403 ? 'taken for a valid token short of scope' : 'accepted';
  run.report('FAIL', `${what}: ${answer.status}, ${why}`, REFS.token, fix.token);
}

/**
 * Run every check against `request.url`, reporting each line through `write` as it is decided; resolves to the
 * lines. The token, when given, goes in one request's Authorization header and nowhere else.
 */
export async function runCheck(request: CheckRequest, write: (line: CheckLine) => void): Promise<CheckLine[]> {
  const target = targetOf(request.url);
  const controller = new AbortController();
  const deadline = Date.now() + (request.totalMs ?? CHECK_LIMITS.totalMs);
  const network = probeNetwork(target, request.allowPrivate === true, request.network);
  const send = boundedSender(deadline, controller.signal, network);
  const fix = fixes(target);
  const lines: CheckLine[] = [];
  const run: CheckRun = {
    get: (url) => send(url, { Accept: 'application/json' }),
    async follow(url) {
      const admission = await network.admit(new URL(url), Math.min(deadline, Date.now() + CHECK_LIMITS.requestMs));
      return 'problem' in admission && admission.fix !== undefined
        ? { problem: admission.problem, fix: admission.fix }
        : undefined;
    },
    report(status: CheckStatus, text: string, refs: string, fix?: string) {
      // What fixes a duty is said where it is not met; a PASS line says nothing more.
      const line: CheckLine =
        status === 'PASS' || fix === undefined ? { status, text, refs } : { status, text, refs, fix };
      lines.push(line);
      write(line);
    },
  };
  const post = (headers: Record<string, string> = {}) =>
    send(
      target.href,
      { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      INITIALIZE,
    );
  try {
    const named = checkChallenge(run, await post(), target, fix);
    await checkAuthorizationServers(run, target, await checkDocuments(run, target, request.url, named, fix), fix);
    if (request.token !== undefined) checkRefusal(run, await post({ Authorization: `Bearer ${request.token}` }), fix);
  } finally {
    controller.abort();
  }
  return lines;
}

/** `FAIL  text  [refs]  fix: …`, one line (the fix after a FAIL or WARN that has one). */
export function formatLine(line: CheckLine): string {
  return `${line.status}  ${line.text}  [${line.refs}]${line.fix === undefined ? '' : `  fix: ${line.fix}`}\n`;
}
