// The switch of `req.auth` to the MCP SDK's AuthInfo, for programs that load `express-verified-user/mcp`. It is a
// file of its own, outside lib/, so only those programs see it (this package's own program keeps the claims type).
// The shape is the SDK's AuthInfo (1.x and 2.x accept it, and it accepts theirs): McpAuthInfo in lib/mcp/auth-info.ts.

declare namespace Express {
  interface VerifiedUserRequestAuth {
    auth: {
      token: string;
      clientId: string;
      scopes: string[];
      expiresAt?: number;
      resource?: URL;
      extra?: Record<string, unknown>;
    };
  }
}
