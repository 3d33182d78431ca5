import { Inject, Injectable, Logger } from '@nestjs/common';
import { RpcSerializedResult } from '../caching/serialized-result.js';
import { RpcMethodCache } from '../caching/rpc-result-cache.js';
import type { RpcContext } from '../dispatch/rpc-context.js';
import { JSON_RPC_MODULE_OPTIONS, type ResolvedJsonRpcOptions } from '../json-rpc.options.js';
import { serializeResult } from '../protocol/response.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { RpcMethodRateLimiter } from '../throttling/rpc-method-rate-limiter.js';
import { RpcAccessRule } from './rpc-access-rule.js';
import { RpcPolicyStores } from './rpc-policy-stores.js';

/** What the policy calls once a call is admitted and not served from the cache. */
export interface RpcPolicyTarget {
  /** Interceptors, params validation and the handler; returns the value (or a Promise of it). */
  invokeHandler(ctx: RpcContext): unknown;
}

const STORE_ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * The built-in per-call steps of one method, in order: roles -> rate limit -> cache -> (params
 * validation and handler, through the target). Built once at startup; only the steps the method
 * uses exist, and a method with roles alone stays synchronous.
 */
export class RpcCallPolicy {
  private lastStoreErrorAt = 0;

  constructor(
    readonly access: RpcAccessRule | undefined,
    readonly limiter: RpcMethodRateLimiter | undefined,
    readonly cache: RpcMethodCache | undefined,
    private readonly logger: Logger,
  ) {}

  run(ctx: RpcContext, target: RpcPolicyTarget): unknown {
    if (this.access !== undefined) this.access.check(ctx.roles);
    if (this.limiter !== undefined) {
      const counting = this.limiter.consume(ctx);
      if (counting !== undefined) return this.afterCounting(counting, ctx, target);
    }
    return this.afterLimit(ctx, target);
  }

  private async afterCounting(counting: Promise<unknown>, ctx: RpcContext, target: RpcPolicyTarget): Promise<unknown> {
    await counting;
    return this.afterLimit(ctx, target);
  }

  private afterLimit(ctx: RpcContext, target: RpcPolicyTarget): unknown {
    // Notifications are counted (their handler runs) but never read from nor written to the cache.
    if (this.cache === undefined || ctx.isNotification) return target.invokeHandler(ctx);
    return this.cached(ctx, target);
  }

  /**
   * Serve from the cache or fill it. Stays synchronous while the store and the handler are (the
   * in-process store on a hit), so a hit costs a key and a Map lookup.
   */
  private cached(ctx: RpcContext, target: RpcPolicyTarget): unknown {
    const cache = this.cache!;
    // Computing the key runs the scope function: its errors are the app's bug, answered -32603.
    const key = cache.keyFor(ctx);
    if (typeof key !== 'string') return this.cachedAsync(key, ctx, target);
    let hit: string | undefined | Promise<string | undefined>;
    try {
      hit = cache.get(key);
    } catch (error) {
      this.storeFailed(error, ctx.method);
      return this.fill(undefined, ctx, target);
    }
    if (typeof hit === 'string') return new RpcSerializedResult(hit);
    if (hit === undefined) return this.fill(key, ctx, target);
    return this.cachedAsync(key, ctx, target, hit);
  }

  private async cachedAsync(
    pendingKey: string | Promise<string>,
    ctx: RpcContext,
    target: RpcPolicyTarget,
    pendingHit?: Promise<string | undefined>,
  ): Promise<unknown> {
    let key: string | undefined;
    try {
      key = await pendingKey;
      const hit = await (pendingHit ?? this.cache!.get(key));
      if (typeof hit === 'string') return new RpcSerializedResult(hit);
    } catch (error) {
      // A cache outage must not take the API down: serve uncached.
      this.storeFailed(error, ctx.method);
      key = undefined;
    }
    return this.fill(key, ctx, target);
  }

  /** Runs the handler and stores its JSON under `key` (none: the store failed, just answer). */
  private fill(key: string | undefined, ctx: RpcContext, target: RpcPolicyTarget): unknown {
    const value = target.invokeHandler(ctx);
    if (value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function') {
      return (value as Promise<unknown>).then((settled) => this.store(key, settled, ctx.method));
    }
    return this.store(key, value, ctx.method);
  }

  private store(key: string | undefined, value: unknown, method: string): RpcSerializedResult | Promise<RpcSerializedResult> {
    const result = new RpcSerializedResult(serializeResult(value));
    if (key === undefined) return result;
    let writing: void | Promise<unknown>;
    try {
      writing = this.cache!.set(key, result.json);
    } catch (error) {
      this.storeFailed(error, method);
      return result;
    }
    if (writing === undefined) return result;
    // Answer once the entry is written, so the caller's next call finds it.
    return writing.then(
      () => result,
      (error) => {
        this.storeFailed(error, method);
        return result;
      },
    );
  }

  private storeFailed(error: unknown, method: string): void {
    const now = Date.now();
    if (now - this.lastStoreErrorAt < STORE_ERROR_LOG_INTERVAL_MS) return;
    this.lastStoreErrorAt = now;
    this.logger.warn(`Result cache unavailable for ${method}, serving uncached: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Builds each method's `RpcCallPolicy` from its frozen definition (once, at bootstrap). */
@Injectable()
export class RpcCallPolicyFactory {
  private readonly logger = new Logger('JsonRpc');

  constructor(
    private readonly stores: RpcPolicyStores,
    @Inject(JSON_RPC_MODULE_OPTIONS) private readonly options: ResolvedJsonRpcOptions,
  ) {}

  /** Undefined when the method is public, unlimited and uncached: the call path then has no step at all. */
  policyFor(definition: RpcMethodDefinition): RpcCallPolicy | undefined {
    const security = this.options.security;
    const access = definition.roles.length
      ? new RpcAccessRule(definition.roles, definition.rolesMatch, security.exposeRoleNames)
      : undefined;
    const limiter = definition.rateLimit
      ? new RpcMethodRateLimiter(
          definition.name,
          definition.rateLimit,
          this.stores.throttlerGuard(),
          this.stores.throttlerStorage(),
          this.stores.bypass(),
          security.userIdResolver,
          definition.classRef,
          definition.handler,
        )
      : undefined;
    const cache = definition.cache
      ? new RpcMethodCache(definition.name, definition.cache, this.stores.resultCache(), security.userIdResolver)
      : undefined;
    if (!access && !limiter && !cache) return undefined;
    return new RpcCallPolicy(access, limiter, cache, this.logger);
  }

  describeStores(): string {
    return this.stores.describe();
  }
}
