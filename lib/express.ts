import type { VerifiedClaims } from './claims';

declare global {
  namespace Express {
    interface Request {
      /** Claims of the verified access token, set by `requireVerifiedUser` / `optionalVerifiedUser`. */
      auth?: VerifiedClaims;
    }
  }
}

export {};
