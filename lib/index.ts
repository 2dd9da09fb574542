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
export { VERIFY_CHANNEL, type VerifyTrace, type FetchEvent, type FetchKind } from './diagnostics';
