// The package's main entry: re-exports only. The pipeline is read from the folders (docs/architecture.md).
import './http/express';
export {
  createTokenAuth,
  defaultRequireVerifiedUser as requireVerifiedUser,
  defaultVerifyRouter as verifyRouter,
  type TokenAuth,
} from './token-auth';
export type { RouteOptions } from './authorize/route';
export type {
  RouteRequirements,
  ValueRequirementInput,
  ClaimValue,
  AuthorizationDetailRequirement,
} from './authorize/requirement';
export type { ValueClaimOption } from './authorize/claim-values';
export type { ScopeImpliesOption } from './token/scope-implies';
export type { ResourceOptions } from './config/resource';
export { toProfile, type ProfileResult, type ProfileUser } from './token/profile';
export type { VerifyRouterOptions, VerifyView, ProfileResolver } from './http/router';
export { TokenAuthError, type ErrorBody, type TokenAuthErrorCode, type TokenFacts } from './base/errors';
export { OptionError } from './base/option-error';
export { errorHandler } from './http/respond';
export type {
  VerifiedClaims,
  Providers,
  DiscordAccount,
  GoogleAccount,
  RobloxAccount,
  ProviderAccount,
  TokenMetadata,
} from './token/claims';
export type {
  TokenAuthOptions,
  KeyOption,
  CacheOptions,
  JwksKeyOption,
  JwksKeySetOption,
  JwkSet,
  UpstreamKeyOption,
  IntrospectionOptions,
  IntrospectMode,
  SignedIntrospection,
  ClientAuthMethod,
  TokenExchangeOptions,
  ExchangeCacheOptions,
} from './config/options';
export type { ExchangeTarget } from './remote/exchange-target';
export type { ExchangedToken } from './remote/exchange';
export type { Actor } from './token/actors';
export type { Duration } from './base/duration';
export type { ScopeRequirementInput } from './token/scopes';
export type { CacheStats } from './verify/cache';
export type { KeyResolver } from './keys/static';
export type { JwsHeader } from './jose/jws';
export type { Algorithm } from './jose/algorithms';
export type {
  ClaimsMode,
  ClaimsOf,
  RegisteredClaims,
  JwtClaims,
  AccessTokenClaims,
  ClaimsValidator,
} from './token/claim-modes';
export type { ScopeClaimOption } from './token/scope-claim';
export type { DpopOptions, DpopNonceOptions, DpopAlgorithm, MtlsOptions, ClientCertificate } from './dpop/options';
export {
  createMemoryReplayStore,
  type ReplayStore,
  type MemoryReplayStore,
  type MemoryReplayStoreOptions,
} from './dpop/replay';
export type { RevocationStore, RevocationList, RevocationStats } from './verify/revocation';
export type { RevocationRules, SubjectTarget, SessionTarget, RuleOptions, FollowOptions } from './verify/revocation';
export type { RuleRefusal } from './verify/rule-set';
export {
  createMemoryRevocationStore,
  type MemoryRevocationStore,
  type MemoryRevocationStoreOptions,
} from './verify/memory-revocation';
export type { SharedVerdictStore } from './verify/shared-verdicts';
export type { VerdictLockStore, VerdictClaim } from './verify/single-flight';
export type { FlightStats } from './verify/single-flight';
export type { BreakerOptions, BreakerStats } from './remote/breaker';
export type { DiscoveryOptions } from './keys/discovery-options';
export type { TenantsOption } from './token/issuer';
export type { FleetStats } from './verify/stats';
export { VERIFY_CHANNEL, type VerifyTrace, type FetchEvent, type FetchKind } from './observe/diagnostics';
export type {
  SecurityEvents,
  SecurityEventsOptions,
  SecurityEventsStats,
  BackchannelLogoutOptions,
  TransmitterStats,
} from './events';
export type {
  TransmitterOptions,
  PushOptions,
  PollOptions,
  StreamOptions,
  TransmitterClientOptions,
} from './events/transmitter-options';
export type { SecurityEvent, EventAction } from './events/actions';
export type { RuleRequest } from './events/rules';
export type { EventCounts } from './events/report';
export type { ReceiverState } from './events/state';
export { SECURITY_EVENT_CHANNEL, type SecurityEventMessage } from './observe/security-events';
