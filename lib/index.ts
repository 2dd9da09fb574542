import './express';
export { createTokenAuth, type TokenAuth } from './token-auth';
export { requireVerifiedUser, verifyRouter } from './default-auth';
export { toProfile, type ProfileResult, type ProfileUser } from './profile';
export type { VerifyRouterOptions, VerifyView, ProfileResolver } from './router';
export { TokenAuthError, type ErrorBody, type TokenAuthErrorCode, type TokenFacts } from './errors';
export { errorHandler } from './respond';
export type {
  VerifiedClaims, Providers, DiscordAccount, GoogleAccount, RobloxAccount, ProviderAccount, TokenMetadata,
} from './claims';
export type { TokenAuthOptions, KeyOption, CacheOptions, JwksKeyOption, UpstreamKeyOption } from './options';
export type { Duration } from './duration';
export type { ScopeRequirementInput } from './scopes';
export type { CacheStats } from './cache';
export type { KeyResolver } from './keys/static';
export type { JwsHeader } from './jws';
export type { Algorithm } from './keys/algorithms';
export type { ClaimsMode, ClaimsOf, JwtClaims, AccessTokenClaims, ClaimsValidator } from './claim-modes';
export type { ScopeClaimOption } from './scope-claim';
export type { DpopOptions, DpopNonceOptions, DpopAlgorithm, MtlsOptions, ClientCertificate } from './dpop/options';
export { createMemoryReplayStore, type ReplayStore, type MemoryReplayStoreOptions } from './dpop/replay';
export type { RevocationStore, RevocationList, RevocationStats } from './revocation';
export type { SharedVerdictStore } from './shared-verdicts';
export type { BreakerOptions, BreakerStats } from './keys/breaker';
export type { FleetStats } from './fleet-stats';
export { VERIFY_CHANNEL, type VerifyTrace, type FetchEvent, type FetchKind } from './diagnostics';
