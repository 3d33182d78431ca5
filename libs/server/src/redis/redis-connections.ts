import { once } from 'node:events';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import type { Redis } from 'ioredis';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';

/** Milliseconds to wait for a Redis connection before a cache read counts as a miss. */
const REDIS_CONNECT_TIMEOUT_MS = 2000;
const REDIS_ERROR_LOG_INTERVAL_MS = 10_000;

/** The node-redis client under the cache's `@keyv/redis` store. */
interface NodeRedisClient {
  isOpen: boolean;
  isReady: boolean;
  close(): Promise<unknown>;
  destroy(): void;
}

/** Logs a Redis client's connection errors as warnings, at most one per client every 10 s. */
function warnAtMostEvery10s(logger: Logger, what: string): (error: Error) => void {
  let lastAt = 0;
  return (error) => {
    const now = Date.now();
    if (now - lastAt < REDIS_ERROR_LOG_INTERVAL_MS) return;
    lastAt = now;
    logger.warn(`Redis for ${what} unavailable: ${error.message}`);
  };
}

interface OpenConnections {
  readonly keyPrefix: string;
  /** ioredis: rate-limit counters (one Lua script per call). */
  readonly commands: Redis;
  /** cache-manager over `@keyv/redis`: the result cache and its generations. */
  readonly cache: Cache;
  readonly cacheClient: NodeRedisClient;
}

/**
 * The Redis connections of the module's `redis` option, opened in this one place and shared by
 * the rate limits and the result cache; closed on shutdown. Empty when the option is not set.
 * ioredis, @keyv/redis, keyv and cache-manager are loaded only then: apps without the option need
 * none of them.
 */
export class RedisConnections implements OnApplicationShutdown {
  private constructor(private readonly open: OpenConnections | undefined) {}

  static async create(options: ResolvedJsonRpcOptions): Promise<RedisConnections> {
    if (!options.redis) return new RedisConnections(undefined);
    const { url, keyPrefix } = options.redis;
    // One after the other: jest's ESM loader fails on concurrent imports sharing a dependency.
    const { Redis } = await import('ioredis');
    const { Keyv } = await import('keyv');
    const { default: KeyvRedis, createClient } = await import('@keyv/redis');
    const { createCache } = await import('cache-manager');
    const logger = new Logger('JsonRpc');
    // Offline queue off: while Redis is unreachable a limited call fails at once (-32603) instead of
    // waiting through reconnect backoff. Without an 'error' listener ioredis prints "Unhandled
    // error event" on every reconnect attempt.
    // disconnectTimeout: ioredis keeps a timer that long at shutdown when the socket already failed.
    const commands = new Redis(url, { enableOfflineQueue: false, connectTimeout: REDIS_CONNECT_TIMEOUT_MS, disconnectTimeout: 500 });
    commands.on('error', warnAtMostEvery10s(logger, 'rate limits'));
    // Our own node-redis client rather than @keyv/redis's default one: that one queues commands
    // while Redis is unreachable and waits for it forever, so a cached call would hang instead of
    // being answered uncached. With the offline queue off a command fails at once (a miss).
    const cacheClient = createClient({
      url,
      disableOfflineQueue: true,
      // Backoff capped at 500 ms: node-redis sleeps it out even after the client is destroyed, so
      // a longer one would hold the process open at shutdown while Redis is down.
      socket: { connectTimeout: REDIS_CONNECT_TIMEOUT_MS, reconnectStrategy: (retries: number) => Math.min(2 ** retries * 50, 500) },
    });
    cacheClient.on('error', warnAtMostEvery10s(logger, 'the result cache'));
    const connecting = cacheClient.connect().catch(() => undefined);
    // Startup waits for both connections, at most REDIS_CONNECT_TIMEOUT_MS: with Redis down the
    // app still starts, limited calls answer -32603 and cached calls run uncached until it is back.
    await Promise.race([
      Promise.all([connecting, once(commands, 'ready').catch(() => undefined)]),
      new Promise((resolve) => setTimeout(resolve, REDIS_CONNECT_TIMEOUT_MS).unref()),
    ]);
    const cache = createCache({ stores: [new Keyv({ store: new KeyvRedis(cacheClient), namespace: undefined, useKeyPrefix: false })] });
    return new RedisConnections({ keyPrefix, commands, cache, cacheClient });
  }

  /** Set when the `redis` option is. */
  get keyPrefix(): string | undefined {
    return this.open?.keyPrefix;
  }

  get commands(): Redis | undefined {
    return this.open?.commands;
  }

  get cache(): Cache | undefined {
    return this.open?.cache;
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.open) return;
    const { commands, cacheClient } = this.open;
    // Graceful when connected (pending writes finish); with Redis down a graceful close would wait
    // for a connection that may never come.
    await Promise.allSettled([
      commands.status === 'ready' ? commands.quit() : Promise.resolve(commands.disconnect()),
      cacheClient.isOpen ? (cacheClient.isReady ? cacheClient.close() : Promise.resolve(cacheClient.destroy())) : undefined,
    ]);
  }
}

/** Async, so the Redis packages are imported only by apps that use the `redis` option. */
export const REDIS_CONNECTIONS_PROVIDER = {
  provide: RedisConnections,
  inject: [JSON_RPC_MODULE_OPTIONS],
  useFactory: (options: ResolvedJsonRpcOptions) => RedisConnections.create(options),
};
