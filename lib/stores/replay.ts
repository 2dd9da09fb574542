// DPoP single use in Redis (RFC 9449 §11.1): one Lua script claims a proof id and counts what each proof key holds,
// with the in-process store's share (dpop/replay.ts), so that one key's flood is refused for that key alone.
import { createHash } from 'node:crypto';
import { optionError } from '../base/option-error';
import { knownFields, positiveInteger, type FieldList } from '../base/option-checks';
import { isObject } from '../base/values';
import { ReplayShareExhausted } from '../dpop/replay';
import { luaScript, type BoundedCommands } from './bounded-commands';

/** `replay` of `createRedisStore`: the bounds of the proof ids a fleet holds in Redis. */
export interface RedisReplayOptions {
  /**
   * Most proof ids held at once, across the fleet (default 100 000): past it, 503 rather than forget one. Size
   * Redis for it: docs/fleet.md gives the bytes per id.
   */
  max?: number;
  /** Most proof ids one proof key (`jkt`) holds at once (default a tenth of `max`); it shrinks as the ids fill up. */
  maxPerKey?: number;
}

const REPLAY_OPTIONS: FieldList<RedisReplayOptions> = { max: true, maxPerKey: true };
/** Past this, `held × max` and `free²` are no longer exact in Lua's doubles. */
const LARGEST_MAX = 10_000_000;

/** The proof ids of one store that no single key can fill. */
export interface RedisReplay {
  claimOnce(id: string, expiresAt: number, jkt?: string): Promise<boolean>;
}

/**
 * KEYS: this proof key's ids (a sorted set, id → expiry in ms of Redis's clock), the live ids by expiry second (a
 * hash; field `n`: their total), the seconds that have ids (a sorted set). ARGV: id, ms to keep it, max,
 * maxPerKey, '1' when the key's share applies. Returns 1 (claimed), 0 (seen: a replay), -1 (this key holds its
 * share), -2 (full). Time is Redis's own, so instances never prune by their own clocks; an id counts in the total
 * until the end of its expiry second.
 */
const CLAIM = luaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local sec = math.floor(now / 1000)
local keep = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local passed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. sec)
if #passed > 0 then
  local gone = 0
  for _, s in ipairs(passed) do
    gone = gone + (tonumber(redis.call('HGET', KEYS[2], s)) or 0)
    redis.call('HDEL', KEYS[2], s)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. sec)
  if (tonumber(redis.call('HINCRBY', KEYS[2], 'n', -gone)) or 0) < 0 then redis.call('HSET', KEYS[2], 'n', 0) end
end
local total = tonumber(redis.call('HGET', KEYS[2], 'n')) or 0
local max = tonumber(ARGV[3])
local free = max - total
if ARGV[5] == '1' then
  local held = redis.call('ZCARD', KEYS[1])
  if held >= tonumber(ARGV[4]) then return -1 end
  if free <= 0 then return -2 end
  if held * max >= free * free then return -1 end
elseif free <= 0 then return -2 end
local exp = now + keep
local es = tostring(math.floor(exp / 1000))
redis.call('ZADD', KEYS[1], exp, ARGV[1])
if redis.call('PTTL', KEYS[1]) < keep then redis.call('PEXPIRE', KEYS[1], keep) end
redis.call('HINCRBY', KEYS[2], es, 1)
redis.call('HINCRBY', KEYS[2], 'n', 1)
redis.call('ZADD', KEYS[3], es, es)
local life = keep + 1000
if redis.call('PTTL', KEYS[2]) < life then
  redis.call('PEXPIRE', KEYS[2], life)
  redis.call('PEXPIRE', KEYS[3], life)
end
return 1`);

/** A proof key as it appears in a key name: the thumbprint itself (base64url), or a hash of anything else. */
function keyPart(jkt: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(jkt)) return jkt;
  return createHash('sha256').update(jkt).digest('base64url');
}

/** `replay` checked at `createRedisStore`: `max` and `maxPerKey` as whole numbers. */
export function resolveRedisReplay(value: unknown): { max: number; maxPerKey: number } {
  if (value === undefined) return { max: 100_000, maxPerKey: 10_000 };
  if (!isObject(value)) optionError('replay', 'createRedisStore option "replay" must be an object { max, maxPerKey }');
  knownFields(value, REPLAY_OPTIONS, 'replay', 'createRedisStore');
  const max = positiveInteger(value.max, 'replay.max', 100_000, 'createRedisStore option "replay.max"');
  if (max > LARGEST_MAX)
    optionError('replay.max', `createRedisStore option "replay.max" must be at most ${LARGEST_MAX}`);
  const perKey = Math.max(1, Math.floor(max / 10));
  const maxPerKey = positiveInteger(
    value.maxPerKey,
    'replay.maxPerKey',
    perKey,
    'createRedisStore option "replay.maxPerKey"',
  );
  return { max, maxPerKey };
}

/**
 * DPoP single use on `commands`. Every key of it sits in one Cluster slot (the hash tag `{<prefix>dpop}`), so that
 * one script can count the whole: `{prefix}dpop:{<prefix>dpop}:key:<jkt>` per proof key, `…:count` and `…:seconds`.
 */
export function redisReplay(commands: BoundedCommands, prefix: string, bounds: { max: number; maxPerKey: number }) {
  const head = `${prefix}dpop:{${prefix}dpop}`;
  const counts = [`${head}:count`, `${head}:seconds`];
  const max = String(bounds.max);
  const maxPerKey = String(bounds.maxPerKey);
  const replay: RedisReplay = {
    async claimOnce(id, expiresAt, jkt) {
      // Held through expiresAt inclusive (the binding step adds the clock tolerance to it): gone only after.
      const keep = String(Math.max(1, Math.floor(expiresAt * 1000 - Date.now()) + 1));
      const ids = `${head}:key:${jkt === undefined ? '-' : keyPart(jkt)}`;
      const reply = Number(
        await commands.script(CLAIM, [ids, ...counts], [id, keep, max, maxPerKey, jkt === undefined ? '0' : '1']),
      );
      if (reply === 1) return true;
      if (reply === 0) return false;
      if (reply === -1) throw new ReplayShareExhausted();
      throw new Error(reply === -2 ? 'redis replay store is full' : 'unexpected reply');
    },
  };
  return replay;
}
