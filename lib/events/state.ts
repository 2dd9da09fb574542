// What the receiver keeps besides rules: each SET's jti once seen (for maxAge), one poller's lease per stream, and a
// stream's verification, behind one small interface: in memory for one process, in the fleet's Redis (stores/).

/**
 * The receiver's own shared state. Names are the receiver's (a hash of the transmitter and the jti, a stream's
 * key), never a token or a SET; values are short strings. A store that holds them for a fleet (the Redis store's
 * `receiverState()`) makes every instance see the same; `createMemoryReceiverState()` serves one process.
 */
export interface ReceiverState {
  /** Whether `name` was remembered and has not expired. Rejects when the store cannot answer. */
  has(name: string): Promise<boolean>;
  /** Remember `name` with `value` for `ttl` seconds (replacing what it held). */
  put(name: string, value: string, ttl: number): Promise<void>;
  /** The value remembered under `name`, or undefined. */
  get(name: string): Promise<string | undefined>;
  /**
   * Take the lease `name` for `owner`, or renew it when `owner` holds it, for `ttl` seconds: true while `owner`
   * holds it, false while another owner does. A holder that dies stops renewing, and the lease passes on after `ttl`.
   */
  lease(name: string, owner: string, ttl: number): Promise<boolean>;
  /** Give the lease up, if `owner` holds it. */
  release(name: string, owner: string): Promise<void>;
}

/** Most names held in memory: past it the oldest go first (a jti a transmitter sent 100 000 SETs ago). */
export const MAX_REMEMBERED = 100_000;

/** The receiver state of one process: a Map with expiries, bounded in count. */
export function createMemoryReceiverState(now: () => number = () => Date.now() / 1000): ReceiverState {
  const entries = new Map<string, { value: string; until: number }>();
  const live = (name: string) => {
    const entry = entries.get(name);
    if (entry === undefined) return undefined;
    if (entry.until > now()) return entry;
    entries.delete(name);
    return undefined;
  };
  const put = (name: string, value: string, ttl: number) => {
    entries.delete(name);
    if (entries.size >= MAX_REMEMBERED) entries.delete(entries.keys().next().value as string);
    entries.set(name, { value, until: now() + ttl });
  };
  return {
    has: async (name) => live(name) !== undefined,
    put: async (name, value, ttl) => put(name, value, ttl),
    get: async (name) => live(name)?.value,
    async lease(name, owner, ttl) {
      const held = live(name);
      if (held !== undefined && held.value !== owner) return false;
      put(name, owner, ttl);
      return true;
    },
    async release(name, owner) {
      if (live(name)?.value === owner) entries.delete(name);
    },
  };
}

/** A store that offers the receiver state to a fleet (the Redis store does). */
export interface ReceiverStateSource {
  receiverState(): ReceiverState;
}

/** The receiver state a revocation store offers, if it offers one. */
export function receiverStateOf(store: unknown): ReceiverState | undefined {
  const source = store as Partial<ReceiverStateSource> | null | undefined;
  return typeof source?.receiverState === 'function' ? source.receiverState() : undefined;
}
