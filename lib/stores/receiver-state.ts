// The security event receiver's state in the fleet's Redis (events/state.ts): each SET's jti seen, one lease per
// stream (SET NX with an expiry, renewed by its owner only), a stream's requested and verified state; every key under
// `{prefix}events:`, every command bounded as the store's others are.
import { TokenAuthError } from '../base/errors';
import type { ReceiverState } from '../events/state';
import { luaScript, StoreBusyError, type BoundedCommands } from './bounded-commands';

// KEYS: the lease. ARGV: owner, ttl ms. Taken when free, renewed by its owner, refused to anyone else.
const LEASE = luaScript(`
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`);
// KEYS: the lease. ARGV: owner. Deleted only by its owner.
const RELEASE = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`);

/** A failed command as the receiver answers it: 503, the event sent again later. */
function unavailable(err: unknown): TokenAuthError {
  const reason = err instanceof StoreBusyError ? 'store-busy' : 'store-unavailable';
  return new TokenAuthError('verification_unavailable', { reason, retryAfter: 1, cause: err });
}

const millis = (seconds: number) => String(Math.max(1, Math.ceil(seconds * 1000)));

/** The receiver state on the store's bounded commands, under `{prefix}events:`. */
export function redisReceiverState(commands: BoundedCommands, prefix: string): ReceiverState {
  const key = (name: string) => `${prefix}events:${name}`;
  const run = async (args: string[]) => {
    try {
      return await commands.run(args);
    } catch (err) {
      throw unavailable(err);
    }
  };
  const script = async (which: typeof LEASE, name: string, args: string[]) => {
    try {
      return await commands.script(which, [key(name)], args);
    } catch (err) {
      throw unavailable(err);
    }
  };
  return {
    has: async (name) => Number(await run(['EXISTS', key(name)])) === 1,
    async put(name, value, ttl) {
      await run(['SET', key(name), value, 'PX', millis(ttl)]);
    },
    async get(name) {
      const reply = await run(['GET', key(name)]);
      return reply === null || reply === undefined ? undefined : String(reply);
    },
    lease: async (name, owner, ttl) => Number(await script(LEASE, name, [owner, millis(ttl)])) === 1,
    async release(name, owner) {
      await script(RELEASE, name, [owner]);
    },
  };
}
