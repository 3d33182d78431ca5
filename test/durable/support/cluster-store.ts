import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { RedisStreamStore, type RedisStreamStoreOptions } from '@nest-jsonrpc/server';
import { PrivateRedisCluster } from '../../support/redis-server.js';

/**
 * RedisStreamStores on a private local Redis Cluster (three primaries), for the suites that must
 * pass on a cluster: `start()` in beforeAll, `store()` per app instance (each with its own ioredis
 * `Cluster` client, as separate processes would have), `stop()` in afterAll closes them all and
 * kills the cluster.
 */
export class ClusterStores {
  cluster: PrivateRedisCluster | undefined;
  readonly keyPrefix = `test:cluster:${randomUUID()}:`;
  private readonly opened: Array<{ store: RedisStreamStore; client: Cluster }> = [];

  async start(): Promise<void> {
    this.cluster = await PrivateRedisCluster.start();
  }

  /** A new ioredis Cluster client for the app (or test) to use. */
  client(): Cluster {
    const client = new Cluster(this.cluster!.startupNodes);
    client.on('error', () => undefined);
    return client;
  }

  store(options: Omit<RedisStreamStoreOptions, 'client' | 'url'> = {}): RedisStreamStore {
    const client = this.client();
    const store = new RedisStreamStore({ client, keyPrefix: this.keyPrefix, ...options });
    this.opened.push({ store, client });
    return store;
  }

  async stop(): Promise<void> {
    for (const { store, client } of this.opened) {
      await store.close().catch(() => undefined);
      client.disconnect();
    }
    await this.cluster?.stop();
  }
}
