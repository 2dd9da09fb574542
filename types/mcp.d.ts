// Types of `express-verified-user/mcp`. Loading them declares `req.auth` as the MCP SDK declares it (its AuthInfo),
// so the SDK's own declaration merges with this package's and `transport.handleRequest(req, …)` type-checks.
// Claims are read through `auth.claims(req)` in such a program. Why: docs/mcp.md, "Types".
// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- a global declaration file, not a module
/// <reference path="./mcp-request.d.ts" />
export * from '../dist/mcp';
