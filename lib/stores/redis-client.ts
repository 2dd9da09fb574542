/**
 * The two Redis clients a store accepts, node-redis (`redis` 5/6) and ioredis, seen through the few calls a store
 * makes: one raw command, whether the connection is ready, and a second connection for pub/sub. Only the shapes
 * used here are declared, so neither package is needed to compile or run the core.
 */

/** What a node-redis client (v5/v6) offers that a store uses. */
interface NodeRedisClient {
  sendCommand(args: string[]): Promise<unknown>;
  readonly isReady: boolean;
  duplicate(): NodeRedisClient;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** What an ioredis client offers that a store uses. */
interface IoRedisClient {
  call(command: string, ...args: string[]): Promise<unknown>;
  readonly status: string;
  duplicate(): IoRedisClient;
  subscribe(channel: string): Promise<unknown>;
  disconnect(): void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** A Redis client made by the app: node-redis (`connect()` called) or ioredis (as constructed). */
export type RedisClientLike = NodeRedisClient | IoRedisClient;

/** A subscriber connection the store created (and so closes). */
export interface Subscriber {
  /** Subscribe (again): resolves once the server has confirmed, so no message sent after that is missed. */
  subscribe(): Promise<void>;
  close(): void;
}

/** Events of a subscriber connection. */
export interface SubscriberEvents {
  message(text: string): void;
  /** Connected (first time or after a reconnect). */
  ready(): void;
  /** Connection lost or failing. */
  down(): void;
}

/** The store's view of the app's client. */
export interface RedisConnection {
  /** Run one command (arguments as strings); the reply as the client decodes it. */
  command(args: string[]): Promise<unknown>;
  /** Whether the connection is up now (a command would be sent at once, not queued). */
  ready(): boolean;
  /** A second connection, subscribed to `channel`, made from the app's client by `duplicate()`. */
  subscriber(channel: string, events: SubscriberEvents): Subscriber;
}

function isIoRedis(client: RedisClientLike): client is IoRedisClient {
  return typeof (client as IoRedisClient).call === 'function' && typeof (client as IoRedisClient).status === 'string';
}

function isNodeRedis(client: RedisClientLike): client is NodeRedisClient {
  return typeof (client as NodeRedisClient).sendCommand === 'function' && 'isReady' in client;
}

const ignore = () => undefined;

/** Wrap an app's client; a TypeError for anything that is neither node-redis nor ioredis. */
export function redisConnection(client: unknown): RedisConnection {
  const candidate = client as RedisClientLike;
  if (typeof client === 'object' && client !== null && typeof candidate.duplicate === 'function') {
    if (isIoRedis(candidate)) return ioRedisConnection(candidate);
    if (isNodeRedis(candidate)) return nodeRedisConnection(candidate);
  }
  throw new TypeError('express-verified-user/redis: createRedisStore expects a node-redis or ioredis client');
}

function nodeRedisConnection(client: NodeRedisClient): RedisConnection {
  return {
    command: (args) => client.sendCommand(args),
    ready: () => client.isReady,
    subscriber(channel, events) {
      const sub = client.duplicate();
      let closed = false;
      const listener = (message: string) => events.message(String(message));
      // node-redis throws an 'error' event that nobody listens to; this connection is ours, so we listen.
      sub.on('error', () => events.down());
      sub.on('end', () => events.down());
      sub.on('ready', () => events.ready());
      sub.connect().catch(ignore);
      return {
        // The listener is the same function each time: node-redis keeps one per channel, so this is idempotent.
        subscribe: () => (closed ? Promise.resolve() : sub.subscribe(channel, listener).then(ignore)),
        close() {
          closed = true;
          if (typeof sub.destroy === 'function') sub.destroy();
          else sub.disconnect?.().catch(ignore);
        },
      };
    },
  };
}

function ioRedisConnection(client: IoRedisClient): RedisConnection {
  return {
    command: ([name, ...args]) => client.call(name, ...args),
    ready: () => client.status === 'ready',
    subscriber(channel, events) {
      const sub = client.duplicate();
      let closed = false;
      sub.on('message', (name, message) => {
        if (name === channel) events.message(String(message));
      });
      sub.on('error', () => events.down());
      sub.on('close', () => events.down());
      sub.on('ready', () => events.ready());
      return {
        subscribe: () => (closed ? Promise.resolve() : sub.subscribe(channel).then(ignore)),
        close() {
          closed = true;
          sub.disconnect();
        },
      };
    },
  };
}
