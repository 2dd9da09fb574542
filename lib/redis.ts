/** The `express-verified-user/redis` entry: a fleet's shared state in the app's Redis (docs/fleet.md). */
export { createRedisStore, type RedisStore, type RedisStoreOptions, type RedisClientLike } from './stores/redis';
export { LATEST_REVOCATION, type RevocableClaims } from './stores/revoke';
