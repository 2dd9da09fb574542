// Commands on a Redis connection, bounded in time (the store's `timeout`), in number (`maxPending`) and in bytes
// (`maxPendingBytes`): what a stalled Redis can cost the app, since a command the store gave up on still waits in
// the client's queue. Lua scripts go by their SHA-1 (EVALSHA), their text only when Redis does not know them yet.
import { createHash } from 'node:crypto';

/** A command the store did not send: `maxPending` commands, or `maxPendingBytes`, were already waiting. */
export class StoreBusyError extends Error {
  constructor() {
    super('redis store busy: too many commands waiting on the client');
    this.name = 'StoreBusyError';
  }
}

/**
 * A command handed to the client that got no answer within the store's `timeout`. It may still run: the client
 * keeps it queued (a paused Redis answers it on resume), so its outcome is unknown.
 */
export class StoreTimeoutError extends Error {
  constructor() {
    super('redis command timed out; it may still run');
    this.name = 'StoreTimeoutError';
  }
}

/** How long one command may wait, and how much may wait on the client at once. */
export interface CommandBounds {
  timeoutMs: number;
  maxPending: number;
  /** The bytes of every argument of the commands waiting (a verdict written is most of its command). */
  maxPendingBytes: number;
}

/** A Lua script as sent: its text and the SHA-1 EVALSHA names it by. */
export interface Script {
  readonly text: string;
  readonly sha: string;
  /** The same script without its `no-writes` flag, for a Redis before 7.0 that cannot read the flag. */
  readonly unflagged?: Script;
}

/**
 * A Lua script, sent by its SHA-1 once Redis has seen it. `readOnly`: flagged `no-writes` (Redis 7), so that it
 * runs while writes are paused (`CLIENT PAUSE … WRITE`, a Cluster's manual failover).
 */
export function luaScript(body: string, readOnly = false): Script {
  const sha = (text: string) => createHash('sha1').update(text).digest('hex');
  if (!readOnly) return { text: body, sha: sha(body) };
  const text = `#!lua flags=no-writes\n${body}`;
  return { text, sha: sha(text), unflagged: { text: body, sha: sha(body) } };
}

/** The store's commands on one connection, each bounded in time, and what waits on the client now. */
export interface BoundedCommands {
  /**
   * Run one command. Rejects with `StoreBusyError` at once (nothing sent) when `maxPending` commands or
   * `maxPendingBytes` are still waiting on the client (a command larger than `maxPendingBytes` alone is never
   * sent), with `StoreTimeoutError` after `timeoutMs` (the command may still run), or with the client's own error.
   */
  run(args: string[], timeoutMs?: number): Promise<unknown>;
  /** Run a script (EVALSHA, then EVAL once if Redis answers NOSCRIPT), the whole within one `timeoutMs`. */
  script(script: Script, keys: string[], args: string[]): Promise<unknown>;
  /** Commands handed to the client and not settled by it yet, those the store gave up on included. */
  pending(): number;
  /** Their bytes (every argument's UTF-8 length). */
  pendingBytes(): number;
}

/** What a command holds in the client: every argument's bytes (its framing is a few bytes more). */
function sizeOf(args: readonly string[]): number {
  let bytes = 0;
  for (const arg of args) bytes += Buffer.byteLength(arg);
  return bytes;
}

const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith('NOSCRIPT');
/** Redis before 7.0 reads a script's `#!lua` flags line as Lua, and fails to compile it. */
const isFlagRefused = (err: unknown) => err instanceof Error && /compiling script/i.test(err.message);

/**
 * Bound the store's use of a connection. A command counts as pending from the moment it is handed over until the
 * client settles it, not until the store stops waiting: a command that timed out while Redis is paused still
 * holds memory in the client, so it still counts, by number and by bytes.
 */
export function boundedCommands(
  redis: { command(args: string[]): Promise<unknown> },
  bounds: CommandBounds,
): BoundedCommands {
  let pending = 0;
  let pendingBytes = 0;
  /** Set once Redis refused a script's flags: every flagged script goes without them from then on. */
  let unflagged = false;
  function run(args: string[], timeoutMs = bounds.timeoutMs): Promise<unknown> {
    const bytes = sizeOf(args);
    if (pending >= bounds.maxPending || pendingBytes + bytes > bounds.maxPendingBytes)
      return Promise.reject(new StoreBusyError());
    pending++;
    pendingBytes += bytes;
    const settled = () => {
      pending--;
      pendingBytes -= bytes;
    };
    let sent: Promise<unknown>;
    try {
      sent = redis.command(args);
    } catch (err) {
      settled();
      return Promise.reject(err instanceof Error ? err : new Error('redis command failed'));
    }
    sent.then(settled, settled);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new StoreTimeoutError()), timeoutMs);
      sent.then(
        (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error('redis command failed'));
        },
      );
    });
  }
  return {
    run,
    async script(flagged, keys, args) {
      const started = Date.now();
      const script = unflagged ? (flagged.unflagged ?? flagged) : flagged;
      const tail = [String(keys.length), ...keys, ...args];
      const left = () => {
        const ms = bounds.timeoutMs - (Date.now() - started);
        if (ms <= 0) throw new StoreTimeoutError();
        return ms;
      };
      try {
        return await run(['EVALSHA', script.sha, ...tail]);
      } catch (err) {
        // A Redis that restarted, failed over or was never asked forgets scripts: send the text once.
        if (!isNoScript(err)) throw err;
      }
      try {
        return await run(['EVAL', script.text, ...tail], left());
      } catch (err) {
        if (script.unflagged === undefined || !isFlagRefused(err)) throw err;
        unflagged = true;
        return run(['EVAL', script.unflagged.text, ...tail], left());
      }
    },
    pending: () => pending,
    pendingBytes: () => pendingBytes,
  };
}
