// Every client form of node-redis and ioredis, as an app makes it, handed to createRedisStore: this file must
// type-check under strict mode (see types.test.ts). Never run: nothing here connects.
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster, createSentinel } from 'redis';
import { createTokenAuth, type FlightStats } from '../../lib';
import { createRedisStore } from '../../lib/redis';

const node = [
  createClient({ url: 'redis://127.0.0.1:6379' }),
  createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }),
  createSentinel({ name: 'primary', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] }),
];
const io = [
  new Redis('redis://127.0.0.1:6379'),
  new Redis({ sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'primary' }),
  new Cluster([{ host: '127.0.0.1', port: 7000 }]),
];
for (const client of [...node, ...io]) {
  const store = createRedisStore(client, { prefix: 'evu:' });
  const auth = createTokenAuth({
    key: { upstream: 'https://id.example.com' },
    issuer: false,
    audience: false,
    cache: { shared: store },
    revocation: store,
  });
  const flight: FlightStats | undefined = auth.stats().flight;
  void flight;
}
