import { Inject, Injectable } from '@nestjs/common';
import type { RpcMethodCache } from '../caching/rpc-result-cache.js';
import { RpcResultCaches } from '../caching/rpc-result-caches.js';
import type { RpcContext } from '../context/rpc-context.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import type { RpcMethodDefinition } from '../registry/rpc-method-definition.js';
import { RpcAccessRule } from '../security/rpc-access-rule.js';
import type { RpcMethodRateLimiter } from '../throttling/rpc-method-rate-limiter.js';
import { RpcRateLimiters } from '../throttling/rpc-rate-limiters.js';

/** What the steps call once a call is admitted and not served from the cache. */
export interface RpcCallTarget {
  /** Interceptors, params validation and the handler; returns the value (or a Promise of it). */
  invokeHandler(ctx: RpcContext): unknown;
}

/**
 * The built-in per-call steps of one method, in order: roles (`security/`) -> rate limit
 * (`throttling/`) -> cache (`caching/`) -> the target (interceptors, params, handler). Built once
 * at startup; only the steps the method uses exist, and a method with roles alone stays
 * synchronous.
 */
export class RpcCallSteps {
  constructor(
    readonly access: RpcAccessRule | undefined,
    readonly limiter: RpcMethodRateLimiter | undefined,
    readonly cache: RpcMethodCache | undefined,
  ) {}

  run(ctx: RpcContext, target: RpcCallTarget): unknown {
    if (this.access !== undefined) this.access.check(ctx.roles);
    if (this.limiter !== undefined) {
      const counting = this.limiter.consume(ctx);
      if (counting !== undefined) return this.afterCounting(counting, ctx, target);
    }
    return this.afterLimit(ctx, target);
  }

  private async afterCounting(counting: Promise<unknown>, ctx: RpcContext, target: RpcCallTarget): Promise<unknown> {
    await counting;
    return this.afterLimit(ctx, target);
  }

  private afterLimit(ctx: RpcContext, target: RpcCallTarget): unknown {
    // Notifications are counted (their handler runs) but never read from nor written to the cache.
    if (this.cache === undefined || ctx.isNotification) return target.invokeHandler(ctx);
    return this.cache.serve(ctx, () => target.invokeHandler(ctx));
  }
}

/** Builds each method's `RpcCallSteps` from its frozen definition (once, at bootstrap). */
@Injectable()
export class RpcCallStepsFactory {
  constructor(
    private readonly limiters: RpcRateLimiters,
    private readonly caches: RpcResultCaches,
    @Inject(OPTIONS_SECTION.security) private readonly security: ResolvedJsonRpcOptions['security'],
  ) {}

  /** Undefined when the method is public, unlimited and uncached: the call path then has no step at all. */
  stepsFor(definition: RpcMethodDefinition): RpcCallSteps | undefined {
    const access = this.accessRuleFor(definition);
    const limiter = definition.rateLimit
      ? this.limiters.limiterFor(definition.name, definition.rateLimit, definition.classRef, definition.handler)
      : undefined;
    const cache = definition.cache ? this.caches.cacheFor(definition.name, definition.cache) : undefined;
    if (!access && !limiter && !cache) return undefined;
    return new RpcCallSteps(access, limiter, cache);
  }

  /** The roles rule of a method (undefined when public); also what durable routes re-check. */
  accessRuleFor(definition: RpcMethodDefinition): RpcAccessRule | undefined {
    return definition.roles.length ? new RpcAccessRule(definition.roles, definition.rolesMatch, this.security.exposeRoleNames) : undefined;
  }

  /** Where limits and cache live, for the startup log. */
  describeStores(): string {
    return `rate limits in ${this.limiters.describe()}, cache in ${this.caches.describe()}`;
  }
}
