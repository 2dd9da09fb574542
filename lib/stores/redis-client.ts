/**
 * The Redis clients a store accepts, node-redis (`redis` 5/6: `createClient`, `createCluster`, `createSentinel`) and
 * ioredis (`Redis`, its Sentinel form, `Cluster`), seen through the few calls a store makes: one raw command,
 * whether the connection is ready, and a second connection for pub/sub. Only the shapes used here are declared,
 * so neither package is needed to compile or run the core.
 */
import { optionError } from '../base/option-error';

/** What every node-redis client (v5/v6: single, cluster, sentinel) offers that a store uses, beside its command. */
interface NodeRedisBase {
  readonly isReady: boolean;
  duplicate(): NodeRedisBase;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  destroy?(): unknown;
  disconnect?(): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** node-redis `createClient`: a command is its arguments. */
interface NodeRedisClient extends NodeRedisBase {
  sendCommand(args: string[]): Promise<unknown>;
}

/** node-redis `createCluster`: a command names its first key, which routes it to its slot's node. */
interface NodeRedisCluster extends NodeRedisBase {
  sendCommand(firstKey: string | undefined, isReadonly: boolean, args: string[]): Promise<unknown>;
  getSlotRandomNode(slot: number): unknown;
}

/** node-redis `createSentinel`: a command says whether a replica may answer it. */
interface NodeRedisSentinel extends NodeRedisBase {
  sendCommand(isReadonly: boolean, args: string[]): Promise<unknown>;
  getMasterNode(): unknown;
}

/** What an ioredis client (`Redis`, also in its Sentinel form, or `Cluster`) offers that a store uses. */
interface IoRedisClient {
  call(command: string, ...args: string[]): Promise<unknown>;
  readonly status: string;
  duplicate(): IoRedisClient;
  subscribe(channel: string): Promise<unknown>;
  disconnect(): void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** A Redis client made by the app: node-redis (`connect()` called) or ioredis (as constructed). */
export type RedisClientLike = NodeRedisClient | NodeRedisCluster | NodeRedisSentinel | IoRedisClient;

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
  /**
   * A connection of the store's own for commands, made from the app's client by `duplicate()`: what runs there
   * never waits behind the app's commands. `ready` is called at each (re)connect.
   */
  own(ready: () => void): OwnConnection;
}

/** A command connection the store created (and so closes). */
export interface OwnConnection {
  command(args: string[]): Promise<unknown>;
  close(): void;
}

function isIoRedis(client: RedisClientLike): client is IoRedisClient {
  return typeof (client as IoRedisClient).call === 'function' && typeof (client as IoRedisClient).status === 'string';
}

function isNodeRedis(client: RedisClientLike): client is NodeRedisClient | NodeRedisCluster | NodeRedisSentinel {
  return typeof (client as NodeRedisBase & { sendCommand?: unknown }).sendCommand === 'function' && 'isReady' in client;
}

const ignore = () => undefined;

/** Wrap an app's client; a TypeError for anything that is neither node-redis nor ioredis. */
export function redisConnection(client: unknown): RedisConnection {
  const candidate = client as RedisClientLike;
  if (typeof client === 'object' && client !== null && typeof candidate.duplicate === 'function') {
    if (isIoRedis(candidate)) return ioRedisConnection(candidate);
    if (isNodeRedis(candidate)) return nodeRedisConnection(candidate);
  }
  return optionError('client', 'createRedisStore expects a node-redis or ioredis client');
}

/**
 * The key a command touches first, which routes it in a cluster: `EVAL script numkeys key …` → its first key
 * (none when numkeys is 0), any other command the store sends (`GET`, `SET`) → its first argument.
 */
export function firstKeyOf(args: readonly string[]): string | undefined {
  const name = args[0]?.toUpperCase();
  if (name === 'EVAL' || name === 'EVALSHA') return Number(args[2]) > 0 ? args[3] : undefined;
  return args[1];
}

/** One command to node-redis, whichever of its three clients: a synchronous throw (cluster offline) becomes a rejection. */
function nodeRedisCommand(
  client: NodeRedisClient | NodeRedisCluster | NodeRedisSentinel,
): (args: string[]) => Promise<unknown> {
  const send =
    typeof (client as NodeRedisCluster).getSlotRandomNode === 'function'
      ? (args: string[]) => (client as NodeRedisCluster).sendCommand(firstKeyOf(args), false, args)
      : typeof (client as NodeRedisSentinel).getMasterNode === 'function'
        ? (args: string[]) => (client as NodeRedisSentinel).sendCommand(false, args)
        : (args: string[]) => (client as NodeRedisClient).sendCommand(args);
  return (args) => {
    try {
      return send(args);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error('redis command failed'));
    }
  };
}

/** End a node-redis connection the store made, whichever close it offers. */
function closeNodeRedis(client: NodeRedisBase): void {
  if (typeof client.destroy === 'function') Promise.resolve(client.destroy()).catch(ignore);
  else client.disconnect?.().catch(ignore);
}

function nodeRedisConnection(client: NodeRedisClient | NodeRedisCluster | NodeRedisSentinel): RedisConnection {
  const cluster = typeof (client as NodeRedisCluster).getSlotRandomNode === 'function';
  return {
    command: nodeRedisCommand(client),
    ready: () => client.isReady,
    own(ready) {
      const own = client.duplicate() as NodeRedisClient | NodeRedisCluster | NodeRedisSentinel;
      own.on('error', ignore);
      own.on(cluster ? 'connect' : 'ready', () => ready());
      own.connect().catch(ignore);
      return { command: nodeRedisCommand(own), close: () => closeNodeRedis(own) };
    },
    subscriber(channel, events) {
      const sub = client.duplicate();
      let closed = false;
      // A cluster reports its nodes one by one; until it has connected as a whole, a node that is ready is not.
      let whole = !cluster;
      const listener = (message: string) => events.message(String(message));
      // node-redis throws an 'error' event that nobody listens to; this connection is ours, so we listen.
      sub.on('error', () => events.down());
      if (cluster) {
        sub.on('connect', () => {
          whole = true;
          events.ready();
        });
        sub.on('node-ready', () => whole && events.ready());
        sub.on('node-disconnect', () => events.down());
        sub.on('disconnect', () => events.down());
      } else {
        sub.on('end', () => events.down());
        sub.on('ready', () => events.ready());
      }
      sub.connect().catch(ignore);
      return {
        // The listener is the same function each time: node-redis keeps one per channel, so this is idempotent.
        subscribe: () => {
          if (closed) return Promise.resolve();
          try {
            return sub.subscribe(channel, listener).then(ignore);
          } catch (err) {
            return Promise.reject(err instanceof Error ? err : new Error('subscribe failed'));
          }
        },
        close() {
          closed = true;
          closeNodeRedis(sub);
        },
      };
    },
  };
}

function ioRedisConnection(client: IoRedisClient): RedisConnection {
  return {
    command: ([name, ...args]) => client.call(name, ...args),
    ready: () => client.status === 'ready',
    own(ready) {
      const own = client.duplicate();
      own.on('error', ignore);
      own.on('ready', () => ready());
      return { command: ([name, ...args]) => own.call(name, ...args), close: () => own.disconnect() };
    },
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
