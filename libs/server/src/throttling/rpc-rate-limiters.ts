import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.js';
import { findAppProvider } from '../options/app-providers.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import { RedisConnections } from '../redis/redis-connections.js';
import { RPC_RATE_LIMIT_BYPASS, type RpcRateLimitBypass } from './rate-limit-bypass.js';
import { RpcMemoryThrottlerStorage } from './rpc-memory-throttler-storage.js';
import { RateLimitStoreOutage, RpcMethodRateLimiter } from './rpc-method-rate-limiter.js';
import { RpcRedisThrottlerStorage } from './rpc-redis-throttler-storage.js';
import { RpcLimitCounter } from './rpc-throttler-guard.js';

/**
 * Where `@RpcRateLimit` counters live, decided once, and each method's limiter built on it:
 * - the `redis` option: in Redis, shared by every instance;
 * - else the app's `ThrottlerModule` storage when it has one;
 * - else an O(1) in-process fixed window (see RpcMemoryThrottlerStorage).
 */
@Injectable()
export class RpcRateLimiters {
  private storageRef: ThrottlerStorage | undefined;
  private guardRef: RpcLimitCounter | undefined;
  private bypassRef: RpcRateLimitBypass | null | undefined;
  private readonly outage = new RateLimitStoreOutage(new Logger('JsonRpc'));

  constructor(
    @Inject(OPTIONS_SECTION.security) private readonly security: ResolvedJsonRpcOptions['security'],
    @Inject(OPTIONS_SECTION.rateLimitOnStoreError) private readonly onStoreError: ResolvedJsonRpcOptions['rateLimitOnStoreError'],
    private readonly moduleRef: ModuleRef,
    private readonly redis: RedisConnections,
  ) {}

  /** The limiter of one `@RpcRateLimit` method. */
  limiterFor(method: string, limit: Readonly<RpcRateLimitOptions>, classRef: object, handler: (...args: unknown[]) => unknown): RpcMethodRateLimiter {
    return new RpcMethodRateLimiter(
      method,
      limit,
      this.guard,
      this.storage,
      this.bypass,
      this.security.userIdResolver,
      classRef,
      handler,
      limit.onStoreError ?? this.onStoreError,
      this.outage,
    );
  }

  get storage(): ThrottlerStorage {
    if (this.storageRef) return this.storageRef;
    const redis = this.redis.commands;
    if (redis) return (this.storageRef = new RpcRedisThrottlerStorage(redis, this.redis.keyPrefix!, (command) => this.redis.watchLimits(command)));
    return (this.storageRef = findAppProvider<ThrottlerStorage>(this.moduleRef, ThrottlerStorage) ?? new RpcMemoryThrottlerStorage());
  }

  /** The throttler guard that runs `@RpcRateLimit` on the chosen storage. */
  get guard(): RpcLimitCounter {
    return (this.guardRef ??= new RpcLimitCounter(this.storage));
  }

  /** The app's `RPC_RATE_LIMIT_BYPASS` provider, if any. */
  get bypass(): RpcRateLimitBypass | undefined {
    if (this.bypassRef === undefined) {
      const found = findAppProvider<RpcRateLimitBypass>(this.moduleRef, RPC_RATE_LIMIT_BYPASS);
      if (found && typeof found.bypassRateLimit !== 'function') {
        throw new Error('JsonRpcModule: the RPC_RATE_LIMIT_BYPASS provider has no bypassRateLimit(ctx) method');
      }
      this.bypassRef = found ?? null;
    }
    return this.bypassRef ?? undefined;
  }

  /** Where counters live, for the startup log. */
  describe(): string {
    const storage = this.storageRef;
    return storage instanceof RpcRedisThrottlerStorage ? 'redis' : storage instanceof RpcMemoryThrottlerStorage || !storage ? 'memory' : 'ThrottlerModule storage';
  }
}
