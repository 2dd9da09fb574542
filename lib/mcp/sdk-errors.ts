// The MCP SDK's own OAuth error classes, loaded when mcpTokenVerifier is created (the SDK is an optional peer):
// 1.x `@modelcontextprotocol/sdk`, 2.x `@modelcontextprotocol/server`. The SDK's requireBearerAuth maps them.
import { optionError } from '../base/option-error';
import { isObject } from '../base/values';

/** An SDK line: 1 (`@modelcontextprotocol/sdk`) or 2 (`@modelcontextprotocol/server` and `…/express`). */
export type McpSdkLine = 1 | 2;

/** The OAuth error codes mcpTokenVerifier throws. */
export type SdkErrorCode = 'invalid_token' | 'temporarily_unavailable' | 'server_error';

/** Makes one of the SDK line's own errors. */
export type SdkErrorFactory = (code: SdkErrorCode, message: string) => Error;

/** Loads a module by name (Node's `require`, or an ESM entry's already-imported modules). */
export type ModuleLoader = (id: string) => unknown;

const SDK1_ERRORS = '@modelcontextprotocol/sdk/server/auth/errors.js';
const SDK2 = '@modelcontextprotocol/server';

type ErrorClass = new (...args: string[]) => Error;

function errorClass(module: unknown, name: string, line: McpSdkLine): ErrorClass {
  const value = isObject(module) ? module[name] : undefined;
  if (typeof value !== 'function')
    optionError('sdk', `mcpTokenVerifier: the MCP SDK ${line}.x has no ${name}; a supported version is needed`);
  return value as ErrorClass;
}

function installed(id: string): boolean {
  try {
    require.resolve(id);
    return true;
  } catch {
    return false;
  }
}

/** The installed line, when exactly one is; with both, the app says which (its requireBearerAuth's). */
function detectLine(): McpSdkLine {
  const one = installed(SDK1_ERRORS);
  const two = installed(SDK2);
  if (one && two)
    optionError(
      'sdk',
      'mcpTokenVerifier: both MCP SDK lines are installed; pass { sdk: 1 } or { sdk: 2 }, the line whose requireBearerAuth you use',
    );
  if (two) return 2;
  if (!one)
    optionError(
      'sdk',
      'mcpTokenVerifier needs the MCP SDK: @modelcontextprotocol/sdk (1.x) or @modelcontextprotocol/server (2.x)',
    );
  return 1;
}

/** The error factory of an SDK line (`sdk` option, else the installed one). */
export function loadSdkErrors(line: unknown, load: ModuleLoader): SdkErrorFactory {
  if (line !== undefined && line !== 1 && line !== 2)
    optionError('sdk', 'mcpTokenVerifier option "sdk" must be 1 or 2');
  const chosen = line ?? detectLine();
  if (chosen === 1) {
    const errors = load(SDK1_ERRORS);
    const classes: Record<SdkErrorCode, ErrorClass> = {
      invalid_token: errorClass(errors, 'InvalidTokenError', 1),
      temporarily_unavailable: errorClass(errors, 'TemporarilyUnavailableError', 1),
      server_error: errorClass(errors, 'ServerError', 1),
    };
    return (code, message) => new classes[code](message);
  }
  const server = load(SDK2);
  const OAuthError = errorClass(server, 'OAuthError', 2);
  const codes = isObject(server) ? server.OAuthErrorCode : undefined;
  if (!isObject(codes) || codes.InvalidToken !== 'invalid_token')
    optionError('sdk', 'mcpTokenVerifier: the MCP SDK 2.x has no OAuthErrorCode; a supported version is needed');
  return (code, message) => new OAuthError(code, message);
}
