// Commands on the app's Redis client, bounded in time (the store's `timeout`) and in number (`maxPending`): what
// a stalled Redis can cost the app, since a command the store gave up on still waits in the client's queue.
import type { RedisConnection } from './redis-client';

/** A command the store did not send: `maxPending` of its commands were already waiting on the client. */
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

/** The store's commands, each bounded in time, and how many are waiting on the client now. */
export interface BoundedCommands {
  /**
   * Run one command. Rejects with `StoreBusyError` at once (nothing sent) when `maxPending` commands are still
   * waiting on the client, with `StoreTimeoutError` after `timeoutMs` (the command may still run), or with the
   * client's own error.
   */
  run(args: string[]): Promise<unknown>;
  /** Commands handed to the client and not settled by it yet, those the store gave up on included. */
  pending(): number;
}

/**
 * Bound the store's use of the app's client. A command counts as pending from the moment it is handed over until
 * the client settles it, not until the store stops waiting: a command that timed out while Redis is paused still
 * holds memory in the client, so it still counts.
 */
export function boundedCommands(redis: RedisConnection, timeoutMs: number, maxPending: number): BoundedCommands {
  let pending = 0;
  const settled = () => {
    pending--;
  };
  return {
    pending: () => pending,
    run(args) {
      if (pending >= maxPending) return Promise.reject(new StoreBusyError());
      pending++;
      let sent: Promise<unknown>;
      try {
        sent = redis.command(args);
      } catch (err) {
        pending--;
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
    },
  };
}
