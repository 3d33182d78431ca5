import { once } from 'node:events';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { Cache } from 'cache-manager';
import type { Redis } from 'ioredis';
import { CacheManagerResultStore, MemoryResultStore } from '../caching/result-stores.js';
import { LocalCacheGenerations, StoredCacheGenerations } from '../caching/cache-generations.js';
import { RpcResultCache } from '../caching/rpc-result-cache.js';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from '../json-rpc.options.js';
import { RPC_RATE_LIMIT_BYPASS, type RpcRateLimitBypass } from '../throttling/rate-limit-bypass.js';
import { RpcMemoryThrottlerStorage } from '../throttling/rpc-memory-throttler.storage.js';
import { RpcRedisThrottlerStorage } from '../throttling/rpc-redis-throttler.storage.js';
import { RpcThrottlerGuard } from '../throttling/rpc-throttler.guard.js';

/** `@nestjs/cache-manager`'s token (a plain string), so the module does not need that package. */
export const CACHE_MANAGER_TOKEN = 'CACHE_MANAGER';
/** Entries the in-process result cache keeps at most (oldest dropped first). */
export const MEMORY_CACHE_MAX_ENTRIES = 10_000;
const DEFAULT_KEY_PREFIX = 'nest-jsonrpc:';

/** Redis connections opened for the `redis` option (closed on shutdown). */
interface RedisConnections {
  throttler: Redis;
  cache: Cache;
  /** The node-redis client under the cache's `@keyv/redis` store. */
  cacheClient: { isOpen: boolean; isReady: boolean; close(): Promise<unknown>; destroy(): void };
  keyPrefix: string;
}

/** Milliseconds to wait for a Redis connection before a cache read counts as a miss. */
const REDIS_CONNECT_TIMEOUT_MS = 2000;
const REDIS_ERROR_LOG_INTERVAL_MS = 10_000;

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

/**
 * Where rate-limit counters and cached results live, decided once:
 * - the `redis` option: both in Redis, shared by every instance;
 * - otherwise counters in the app's `ThrottlerModule` storage when it has one, else in process;
 * - and results in the app's `CACHE_MANAGER` when `@nestjs/cache-manager` is registered, else in
 *   a bounded in-process TTL map (see MemoryResultStore).
 * The app's own providers are looked up when first needed (at bootstrap, after every module has
 * been instantiated), not injected, so none of them is required.
 */
@Injectable()
export class RpcPolicyStores implements OnApplicationShutdown {
  private readonly logger = new Logger('JsonRpc');
  private storage: ThrottlerStorage | undefined;
  private guard: RpcThrottlerGuard | undefined;
  private cacheStore: RpcResultCache | undefined;
  private bypassProvider: RpcRateLimitBypass | null | undefined;

  constructor(
    @Inject(JSON_RPC_MODULE_OPTIONS) private readonly options: ResolvedJsonRpcOptions,
    private readonly moduleRef: ModuleRef,
    private readonly redis: RedisConnections | undefined,
  ) {}

  /**
   * Opens the Redis connections when the `redis` option asks for them. ioredis, @keyv/redis, keyv
   * and cache-manager are loaded only then: apps without the option need none of them.
   */
  static async create(options: ResolvedJsonRpcOptions, moduleRef: ModuleRef): Promise<RpcPolicyStores> {
    if (!options.redis) return new RpcPolicyStores(options, moduleRef, undefined);
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
    const throttler = new Redis(url, { enableOfflineQueue: false, connectTimeout: REDIS_CONNECT_TIMEOUT_MS, disconnectTimeout: 500 });
    throttler.on('error', warnAtMostEvery10s(logger, 'rate limits'));
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
      Promise.all([connecting, once(throttler, 'ready').catch(() => undefined)]),
      new Promise((resolve) => setTimeout(resolve, REDIS_CONNECT_TIMEOUT_MS).unref()),
    ]);
    const cache = createCache({ stores: [new Keyv({ store: new KeyvRedis(cacheClient), namespace: undefined, useKeyPrefix: false })] });
    return new RpcPolicyStores(options, moduleRef, { throttler, cache, cacheClient, keyPrefix });
  }

  throttlerStorage(): ThrottlerStorage {
    if (this.storage) return this.storage;
    if (this.redis) return (this.storage = new RpcRedisThrottlerStorage(this.redis.throttler, this.redis.keyPrefix));
    return (this.storage = this.lookup<ThrottlerStorage>(ThrottlerStorage) ?? new RpcMemoryThrottlerStorage());
  }

  /** The throttler guard instance that runs `@RpcRateLimit` on the chosen storage. */
  throttlerGuard(): RpcThrottlerGuard {
    return (this.guard ??= RpcThrottlerGuard.forRpcLimits(this.throttlerStorage()));
  }

  resultCache(): RpcResultCache {
    if (this.cacheStore) return this.cacheStore;
    if (this.redis) {
      const { cache, keyPrefix } = this.redis;
      return (this.cacheStore = new RpcResultCache(new CacheManagerResultStore(cache), new StoredCacheGenerations(cache, keyPrefix), keyPrefix, 'redis'));
    }
    const appCache = this.lookup<Cache>(CACHE_MANAGER_TOKEN);
    if (appCache) {
      return (this.cacheStore = new RpcResultCache(
        new CacheManagerResultStore(appCache),
        new StoredCacheGenerations(appCache, DEFAULT_KEY_PREFIX),
        DEFAULT_KEY_PREFIX,
        'CACHE_MANAGER',
      ));
    }
    const memory = new MemoryResultStore(MEMORY_CACHE_MAX_ENTRIES);
    return (this.cacheStore = new RpcResultCache(memory, new LocalCacheGenerations(), DEFAULT_KEY_PREFIX, 'memory'));
  }

  /** The app's `RPC_RATE_LIMIT_BYPASS` provider, if any. */
  bypass(): RpcRateLimitBypass | undefined {
    if (this.bypassProvider === undefined) {
      const found = this.lookup<RpcRateLimitBypass>(RPC_RATE_LIMIT_BYPASS);
      if (found && typeof found.bypassRateLimit !== 'function') {
        throw new Error('JsonRpcModule: the RPC_RATE_LIMIT_BYPASS provider has no bypassRateLimit(ctx) method');
      }
      this.bypassProvider = found ?? null;
    }
    return this.bypassProvider ?? undefined;
  }

  /** Where limits and cache live, for the startup log. */
  describe(): string {
    const storage = this.storage;
    const limits = storage instanceof RpcRedisThrottlerStorage ? 'redis' : storage instanceof RpcMemoryThrottlerStorage ? 'memory' : 'ThrottlerModule storage';
    return `rate limits in ${limits}, cache in ${this.cacheStore?.kind ?? 'memory'}`;
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    const { throttler, cacheClient } = this.redis;
    // Graceful when connected (pending writes finish); with Redis down a graceful close would wait
    // for a connection that may never come.
    await Promise.allSettled([
      throttler.status === 'ready' ? throttler.quit() : Promise.resolve(throttler.disconnect()),
      cacheClient.isOpen ? (cacheClient.isReady ? cacheClient.close() : Promise.resolve(cacheClient.destroy())) : undefined,
    ]);
  }

  private lookup<T>(token: string | symbol): T | undefined {
    try {
      return this.moduleRef.get<T>(token as never, { strict: false }) ?? undefined;
    } catch {
      return undefined;
    }
  }
}

/** Async, so the Redis packages are imported only by apps that use the `redis` option. */
export const RPC_POLICY_STORES_PROVIDER = {
  provide: RpcPolicyStores,
  inject: [JSON_RPC_MODULE_OPTIONS, ModuleRef],
  useFactory: (options: ResolvedJsonRpcOptions, moduleRef: ModuleRef) => RpcPolicyStores.create(options, moduleRef),
};
