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
    if (this.limiter !== undefined) return this.limited(ctx, target);
    if (this.cache === undefined || ctx.isNotification) return target.invokeHandler(ctx);
    return this.cached(ctx, target);
  }

  private async limited(ctx: RpcContext, target: RpcPolicyTarget): Promise<unknown> {
    await this.limiter!.consume(ctx);
    // Notifications are counted (their handler runs) but never read from nor written to the cache.
    if (this.cache === undefined || ctx.isNotification) return target.invokeHandler(ctx);
    return this.cached(ctx, target);
  }

  private async cached(ctx: RpcContext, target: RpcPolicyTarget): Promise<unknown> {
    const cache = this.cache!;
    // Computing the key runs the scope function: its errors are the app's bug, answered -32603.
    const pendingKey = cache.keyFor(ctx);
    let key: string | undefined;
    try {
      key = typeof pendingKey === 'string' ? pendingKey : await pendingKey;
      const hit = await cache.get(key);
      if (typeof hit === 'string') return new RpcSerializedResult(hit);
    } catch (error) {
      // A cache outage must not take the API down: serve uncached.
      this.storeFailed(error, ctx.method);
      key = undefined;
    }
    const value = await target.invokeHandler(ctx);
    const json = serializeResult(value);
    if (key !== undefined) {
      try {
        await cache.set(key, json);
      } catch (error) {
        this.storeFailed(error, ctx.method);
      }
    }
    return new RpcSerializedResult(json);
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
