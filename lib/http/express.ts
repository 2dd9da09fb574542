// The `req.auth` declaration on Express's Request, loaded with the package's types. `express-verified-user/mcp`
// switches it to the MCP SDK's AuthInfo (types/mcp.d.ts): one property cannot be typed per route (docs/mcp.md).
import type { RegisteredClaims } from '../token/claim-modes';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express declares its Request in this namespace
  namespace Express {
    /**
     * Empty unless a program loads `express-verified-user/mcp`, whose types declare `auth` here: then `req.auth` is
     * declared as the MCP SDK declares it (its `AuthInfo`), so the SDK's own declaration merges without TS2430.
     */
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
    interface VerifiedUserRequestAuth {}

    interface Request {
      /**
       * Claims of the verified access token, set by `requireVerifiedUser` / `optionalVerifiedUser`. Typed by what
       * every claims mode guarantees; `auth.claims(req)` gives the type of the TokenAuth's own mode. Read-only: once
       * cached, every request with the same token shares them, deep-frozen; keep your own data elsewhere.
       */
      auth?: VerifiedUserRequestAuth extends { auth: infer A } ? A : Readonly<RegisteredClaims>;
    }
  }
}

export {};
