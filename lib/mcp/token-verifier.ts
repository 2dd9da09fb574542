// mcpTokenVerifier: the MCP SDK's OAuthTokenVerifier over auth.verify(), for apps that keep the SDK's
// requireBearerAuth; a refusal throws the SDK line's own error, so the SDK answers 401 (an outage: 400), never 500.
// That path carries no DPoP proof and no client certificate: sender-constrained tokens are refused on it.
import { TokenAuthError } from '../base/errors';
import { optionError } from '../base/option-error';
import { knownFields, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import type { RegisteredClaims } from '../token/claim-modes';
import type { ScopeReader } from '../token/scope-claim';
import { toAuthInfo, type McpAuthInfo } from './auth-info';
import { loadSdkErrors, type McpSdkLine, type ModuleLoader, type SdkErrorFactory } from './sdk-errors';

/** The SDK's `OAuthTokenVerifier` (1.x and 2.x). */
export interface McpTokenVerifier {
  verifyAccessToken(token: string): Promise<McpAuthInfo>;
}

/** Options of `mcpTokenVerifier(auth, options)`. */
export interface McpTokenVerifierOptions {
  /** Which SDK line's errors to throw: needed only when both `@modelcontextprotocol/sdk` and `…/server` are installed. */
  sdk?: McpSdkLine;
}

const VERIFIER_OPTIONS: FieldList<McpTokenVerifierOptions> = { sdk: true };

/** What the verifier needs of a TokenAuth. */
export interface McpVerifySource {
  verify(token: string): Promise<RegisteredClaims>;
  readonly scopesOf: ScopeReader;
  readonly resource: string | undefined;
  /** The TokenAuth's `dpop.required`: it refuses every Bearer token, so this verifier cannot serve it. */
  readonly dpopRequired: boolean;
}

/**
 * A token bound to a key (`cnf.jkt`, RFC 9449) or a client certificate (`cnf["x5t#S256"]`, RFC 8705): the SDK's
 * requireBearerAuth hands over the token alone, so its proof of possession can never be checked here.
 */
function senderConstrained(claims: RegisteredClaims): boolean {
  const { cnf } = claims;
  return isObject(cnf) && (cnf.jkt !== undefined || cnf['x5t#S256'] !== undefined);
}

/** A refusal as the SDK's own error: its requireBearerAuth answers 401 for invalid_token, 400 for the others. */
function sdkError(err: unknown, make: SdkErrorFactory): Error {
  if (err instanceof TokenAuthError && err.status === 401) return make('invalid_token', err.message);
  // No SDK line answers 503: temporarily_unavailable (400) says what happened without sending the client back to
  // its authorization server, as a 401 would.
  if (err instanceof TokenAuthError && err.status === 503) return make('temporarily_unavailable', err.message);
  return make('server_error', 'Internal server error');
}

/** Build the verifier; options are checked and the SDK's classes loaded here, once. */
export function createMcpTokenVerifier(
  source: McpVerifySource,
  options: unknown,
  load: ModuleLoader,
): McpTokenVerifier {
  if (options !== undefined && !isObject(options))
    optionError('', 'mcpTokenVerifier options must be an object { sdk }');
  const given = (options ?? {}) as McpTokenVerifierOptions;
  knownFields(given, VERIFIER_OPTIONS, '', 'mcpTokenVerifier');
  if (source.dpopRequired) {
    optionError(
      'dpop.required',
      'mcpTokenVerifier cannot serve a TokenAuth with "dpop.required": the SDK\'s requireBearerAuth takes ' +
        'Bearer tokens only and hands over no DPoP proof; use requireMcpAuth(auth) instead',
    );
  }
  const make = loadSdkErrors(given.sdk, load);
  return {
    async verifyAccessToken(token) {
      try {
        const claims = await source.verify(token);
        // A stolen bound token must not pass as a bearer one: the binding is what makes it worthless to a thief.
        if (senderConstrained(claims))
          throw new TokenAuthError('invalid_token', { reason: 'mcp:sender-constrained-token' });
        return toAuthInfo(token, claims, source.scopesOf(claims), source.resource);
      } catch (err) {
        throw sdkError(err, make);
      }
    },
  };
}
