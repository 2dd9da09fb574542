// The `req.auth` declaration on Express's Request, loaded with the package's types.
import type { JwtClaims } from '../token/claim-modes';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express declares its Request in this namespace
  namespace Express {
    interface Request {
      /**
       * Claims of the verified access token, set by `requireVerifiedUser` / `optionalVerifiedUser`. Typed by what
       * every claims mode guarantees; `auth.claims(req)` gives the type of the TokenAuth's own mode. Deep-frozen at
       * run time (every request with the same token shares them), so typed read-only: keep your own data elsewhere.
       */
      auth?: Readonly<JwtClaims>;
    }
  }
}

export {};
