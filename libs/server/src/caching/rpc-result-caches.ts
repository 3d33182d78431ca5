import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Cache } from 'cache-manager';
import type { RpcCacheOptions } from '../decorators/rpc-cache.js';
import { findAppProvider } from '../options/app-providers.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import { DEFAULT_REDIS_KEY_PREFIX } from '../options/redis-options.js';
import { RedisConnections } from '../redis/redis-connections.js';
import { LocalCacheGenerations, StoredCacheGenerations } from './cache-generations.js';
import { CacheManagerResultStore, MemoryResultStore } from './result-stores.js';
import { RpcMethodCache, RpcResultCache } from './rpc-result-cache.js';

/** `@nestjs/cache-manager`'s token (a plain string), so the module does not need that package. */
export const CACHE_MANAGER_TOKEN = 'CACHE_MANAGER';

/** Entries the in-process result cache keeps at most (oldest dropped first). */
export const MEMORY_CACHE_MAX_ENTRIES = 10_000;

/**
 * Where `@RpcCache` results live, decided once, and each method's cache built from it:
 * - the `redis` option: in Redis, shared by every instance (generations too);
 * - else the app's `CACHE_MANAGER` when `@nestjs/cache-manager` is registered;
 * - else a bounded in-process TTL map (see MemoryResultStore).
 */
@Injectable()
export class RpcResultCaches {
  private readonly logger = new Logger('JsonRpc');
  private sharedCache: RpcResultCache | undefined;

  constructor(
    @Inject(OPTIONS_SECTION.security) private readonly security: ResolvedJsonRpcOptions['security'],
    private readonly moduleRef: ModuleRef,
    private readonly redis: RedisConnections,
  ) {}

  /** The store every method's cache uses, with its generations (for invalidation). */
  get shared(): RpcResultCache {
    return (this.sharedCache ??= this.choose());
  }

  /** The cache of one `@RpcCache` method. */
  cacheFor(method: string, options: Readonly<RpcCacheOptions>): RpcMethodCache {
    return new RpcMethodCache(method, options, this.shared, this.security.userIdResolver, this.logger);
  }

  /** Where results live, for the startup log: `memory`, `CACHE_MANAGER` or `redis`. */
  describe(): string {
    return this.sharedCache?.kind ?? 'memory';
  }

  private choose(): RpcResultCache {
    const redisCache = this.redis.cache;
    if (redisCache) {
      const keyPrefix = this.redis.keyPrefix!;
      return new RpcResultCache(new CacheManagerResultStore(redisCache), new StoredCacheGenerations(redisCache, keyPrefix), keyPrefix, 'redis', () =>
        this.redis.cacheConnected(),
      );
    }
    const appCache = findAppProvider<Cache>(this.moduleRef, CACHE_MANAGER_TOKEN);
    if (appCache) {
      return new RpcResultCache(
        new CacheManagerResultStore(appCache),
        new StoredCacheGenerations(appCache, DEFAULT_REDIS_KEY_PREFIX),
        DEFAULT_REDIS_KEY_PREFIX,
        'CACHE_MANAGER',
      );
    }
    return new RpcResultCache(new MemoryResultStore(MEMORY_CACHE_MAX_ENTRIES), new LocalCacheGenerations(), DEFAULT_REDIS_KEY_PREFIX, 'memory');
  }
}
