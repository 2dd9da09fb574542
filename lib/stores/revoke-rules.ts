// `store.revokeSubject()` and `store.revokeSession()` on Redis: where rules live, the one Lua script that bounds,
// stores and publishes a rule's entries all or nothing, and what its answer tells the caller.
import type { TokenAuthError } from '../base/errors';
import { RULE_MARGIN, rulesFull } from '../verify/revocation-requests';
import { ruleMember, type RuleEntry } from '../verify/rule-set';
import { luaScript, type BoundedCommands } from './bounded-commands';
import { revokeFailed } from './revoke';

/** The keys of a store's rules, both in one Cluster slot (the hash tag `{<prefix>rules}`). */
export interface RuleKeys {
  /** A sorted set: member `[kind, iss, key]` (JSON), score its `before`; no expiry of its own. */
  readonly rules: string;
  /** The fleet's rule lifetime: the longest `maxLifetime` + `clockTolerance` any TokenAuth declared (seconds). */
  readonly lifetime: string;
  /** The channel of the store's revocations (the revoked `jti`s' channel), which carries rules too. */
  readonly channel: string;
}

/** The rule keys under `prefix`, announced on `channel`. */
export function ruleKeys(prefix: string, channel: string): RuleKeys {
  const rules = `${prefix}rules:{${prefix}rules}`;
  return { rules, lifetime: `${rules}:lifetime`, channel };
}

/**
 * Stores a rule's entries and publishes each, all or nothing. KEYS: the rules, the fleet's lifetime. ARGV: now,
 * channel, maxRules, this process's lifetime (`0`: none), the margin, then for each entry its member, `before` and
 * the message published. The fleet's lifetime is raised to this process's when that is longer; rules whose `before`
 * is older than now − lifetime − margin leave (none while no lifetime was ever declared: nobody can yet tell how
 * long they must last), and an entry that old is not stored: it can refuse nothing any more. When the new entries
 * would make more than maxRules, nothing is written and the answer is `full` with the earliest `before` held, so
 * that the caller can tell when room frees. Neither key has an expiry (`PERSIST`): `volatile-*` policies never
 * evict them.
 */
export const RULE_SCRIPT = luaScript(`
local now, margin = tonumber(ARGV[1]), tonumber(ARGV[5])
local lifetime = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if tonumber(ARGV[4]) > lifetime then
  lifetime = tonumber(ARGV[4])
  redis.call('SET', KEYS[2], ARGV[4])
end
local horizon = nil
if lifetime > 0 then
  horizon = now - lifetime - margin
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. horizon)
end
local fresh = 0
for i = 6, #ARGV, 3 do
  if ((not horizon) or tonumber(ARGV[i + 1]) >= horizon) and not redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    fresh = fresh + 1
  end
end
if fresh > 0 and redis.call('ZCARD', KEYS[1]) + fresh > tonumber(ARGV[3]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {'full', first[2] or '', tostring(lifetime)}
end
for i = 6, #ARGV, 3 do
  local before = tonumber(ARGV[i + 1])
  if (not horizon) or before >= horizon then
    local old = redis.call('ZSCORE', KEYS[1], ARGV[i])
    if (not old) or tonumber(old) < before then redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i]) end
    redis.call('PUBLISH', ARGV[2], ARGV[i + 2])
  end
end
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[2])
return {'ok', '', tostring(lifetime)}`);

/** The message that announces an entry on the channel: `{ rule: [kind, iss, key], before }` (a jti's is an array). */
export function ruleMessage(entry: RuleEntry): string {
  return JSON.stringify({ rule: [entry.kind, entry.iss, entry.key], before: entry.before });
}

/** What a rule write tells: stored (with the fleet's lifetime), or refused as full. */
export type RuleWrite = { state: 'ok'; lifetime: number } | { state: 'full'; lifetime: number; error: TokenAuthError };

/**
 * Run RULE_SCRIPT for `entries` at `now`. Rejects as `revoke()` does when Redis is out of reach (reason `store-busy`:
 * nothing sent; `revoke-outcome-unknown`: it may still take effect).
 */
export async function writeRules(
  commands: BoundedCommands,
  keys: RuleKeys,
  bounds: { maxRules: number; lifetime: number },
  entries: readonly RuleEntry[],
  now: number,
): Promise<RuleWrite> {
  const args = [String(now), keys.channel, String(bounds.maxRules), String(bounds.lifetime), String(RULE_MARGIN)];
  for (const entry of entries) args.push(ruleMember(entry), String(entry.before), ruleMessage(entry));
  let reply: unknown;
  try {
    reply = await commands.script(RULE_SCRIPT, [keys.rules, keys.lifetime], args);
  } catch (err) {
    throw revokeFailed(err);
  }
  const [state, first, held] = Array.isArray(reply) ? reply.map(String) : [];
  const lifetime = Number(held);
  if (state === 'ok' && Number.isFinite(lifetime)) return { state, lifetime };
  if (state === 'full' && Number.isFinite(lifetime))
    return { state, lifetime, error: rulesFull(first === '' ? undefined : Number(first), lifetime, now) };
  throw revokeFailed(new Error('unexpected reply'));
}
