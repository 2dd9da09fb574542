// What auth.stats() reports beside the cache: the breaker's state and the revocation list's.
import type { CacheStats } from './cache';
import type { BreakerStats } from '../remote/breaker';
import type { TokenSource } from '../remote/source';
import type { SharedVerdictSource } from './shared-verdicts';
import type { FlightStats } from './single-flight';
import type { RevocationList, RevocationStats } from './revocation';

/** What `stats()` adds beside the cache counters when a fleet feature is in use (docs/fleet.md). */
export interface FleetStats {
  /** The remote source's circuit breaker (upstream mode, introspection). */
  breaker?: BreakerStats;
  /** Fleet single flight of shared verdicts (`cache.shared` on a store with locks). */
  flight?: FlightStats;
  /** The shared revocation list (`revocation` option). */
  revocation?: RevocationStats;
}

/** The cache counters, plus the breaker's and the revocation list's state where there are such. */
export function fleetStats(
  cache: CacheStats,
  source: TokenSource | SharedVerdictSource,
  revocation: RevocationList | undefined,
): CacheStats & FleetStats {
  const stats: CacheStats & FleetStats = cache;
  if (source.kind === 'remote' && source.breakerStats !== undefined) stats.breaker = source.breakerStats();
  if (source.kind === 'remote' && 'flightStats' in source && source.flightStats !== undefined)
    stats.flight = source.flightStats();
  if (revocation !== undefined) stats.revocation = revocation.stats();
  return stats;
}
