// The ES module face of `express-verified-user/mcp`: dist/mcp.js's functions, except that mcpTokenVerifier throws
// the MCP SDK's ESM error classes, the ones an app that imports the SDK gets (`require` would load the CommonJS
// build's classes, which are other classes: the SDK's requireBearerAuth would answer them with a 500).
import mcp from './mcp.js';

const SDK_MODULES = ['@modelcontextprotocol/sdk/server/auth/errors.js', '@modelcontextprotocol/server'];

/** The SDK modules that are installed, imported once (the SDK is an optional peer). */
const loaded = new Map();
for (const id of SDK_MODULES) {
  try {
    loaded.set(id, await import(id));
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND') throw err;
  }
}

function load(id) {
  if (!loaded.has(id)) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  return loaded.get(id);
}

export const requireMcpAuth = mcp.requireMcpAuth;
export const mcpTokenVerifier = mcp.mcpTokenVerifierLoading(load);
