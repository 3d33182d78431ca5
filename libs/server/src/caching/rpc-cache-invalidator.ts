import { Injectable } from '@nestjs/common';
import { RpcResultCache } from './rpc-result-cache.js';
import { RpcResultCaches } from './rpc-result-caches.js';
import { paramsHash } from './stable-params-hash.js';

/**
 * Drops cached `@RpcCache` results. Every instance sharing the store sees a purge at once
 * (the generations live in the store itself when it is shared).
 */
@Injectable()
export class RpcCacheInvalidator {
  /** @internal */
  constructor(private readonly caches: RpcResultCaches) {}

  /** Entries of `method` for these params, in every scope (key order does not matter); without params, the whole method. */
  purge(method: string, params?: unknown): Promise<void> {
    if (params === undefined) return this.purgeMethod(method);
    return this.bump([RpcResultCache.paramsGeneration(method, paramsHash(params))]);
  }

  /** Every entry of `method`. */
  purgeMethod(method: string): Promise<void> {
    return this.bump([RpcResultCache.methodGeneration(method)]);
  }

  /** Every entry of every method that carries one of `tags`. */
  purgeTags(tags: readonly string[] | string): Promise<void> {
    const list = typeof tags === 'string' ? [tags] : tags;
    return this.bump(list.map((t) => RpcResultCache.tagGeneration(t)));
  }

  /** Everything the module cached. */
  purgeAll(): Promise<void> {
    return this.bump([RpcResultCache.ALL_GENERATION]);
  }

  private bump(names: readonly string[]): Promise<void> {
    return this.caches.shared.generations.bump(names);
  }
}
