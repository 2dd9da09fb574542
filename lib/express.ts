import type { VerifiedClaims } from './claims';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express declares its Request in this namespace
  namespace Express {
    interface Request {
      /** Claims of the verified access token, set by `requireVerifiedUser` / `optionalVerifiedUser`. */
      auth?: VerifiedClaims;
    }
  }
}

export {};
