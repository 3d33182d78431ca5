import type { ThrottlerGenerateKeyFunction, ThrottlerGetTrackerFunction, ThrottlerOptions } from '@nestjs/throttler';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { FastifyRequest } from 'fastify';
import type { RpcLimitScope, RpcRateLimitOptions } from '../decorators/rpc-rate-limit.decorator.js';
import type { RpcContext } from '../dispatch/rpc-context.js';
import { callerUserId, type UserIdResolver } from '../security/caller-identity.js';
import type { RpcRateLimitBypass } from './rate-limit-bypass.js';
import type { RpcThrottlerGuard } from './rpc-throttler.guard.js';

/** The throttler name `@RpcRateLimit` counts under; `@SkipThrottle({ rpc: true })` lifts it. */
export const RPC_THROTTLER_NAME = 'rpc';

function trackerFor(scope: RpcLimitScope, userIdResolver: UserIdResolver | undefined): ThrottlerGetTrackerFunction {
  switch (scope) {
    case 'global':
      return () => 'global';
    case 'user':
      // Anonymous callers of a per-user limit share one counter per IP rather than one for everyone.
      return (req) => {
        const id = callerUserId(req as FastifyRequest, userIdResolver);
        return id === undefined ? `ip:${String(req.ip)}` : `user:${id}`;
      };
    default:
      return (req) => `ip:${String(req.ip)}`;
  }
}

/**
 * `@RpcRateLimit` of one method, prepared at startup: the throttler options, tracker and key
 * function are fixed, so a call builds one ExecutionContext and one request object and hands them
 * to the throttler guard's `handleRequest` (storage increment, block, -32003).
 */
export class RpcMethodRateLimiter {
  private readonly throttler: ThrottlerOptions;
  private readonly ttl: number;
  private readonly blockDuration: number;
  private readonly getTracker: ThrottlerGetTrackerFunction;
  private readonly generateKey: ThrottlerGenerateKeyFunction;

  constructor(
    method: string,
    readonly options: Readonly<RpcRateLimitOptions>,
    private readonly guard: RpcThrottlerGuard,
    private readonly bypass: RpcRateLimitBypass | undefined,
    userIdResolver: UserIdResolver | undefined,
    private readonly classRef: object,
    private readonly handler: (...args: unknown[]) => unknown,
  ) {
    this.ttl = options.interval * 1000;
    this.blockDuration = (options.blockDuration ?? 0) * 1000;
    // setHeaders off: per-call X-RateLimit-* headers mean nothing for a batch.
    this.throttler = Object.freeze({ name: RPC_THROTTLER_NAME, limit: options.limit, ttl: this.ttl, setHeaders: false });
    this.getTracker = trackerFor(options.scope ?? 'ip', userIdResolver);
    const prefix = `${JSON.stringify(method)}:${RPC_THROTTLER_NAME}:`;
    this.generateKey = (_context, tracker) => prefix + tracker;
  }

  /** Counts the call; throws -32003 when it is over the limit. */
  consume(ctx: RpcContext): Promise<unknown> {
    if (this.bypass) return this.consumeUnlessBypassed(ctx);
    return this.count(ctx);
  }

  private async consumeUnlessBypassed(ctx: RpcContext): Promise<unknown> {
    if (await this.bypass!.bypassRateLimit(ctx)) return true;
    return this.count(ctx);
  }

  private count(ctx: RpcContext): Promise<boolean> {
    const exchange = ctx.exchange;
    const context = new ExecutionContextHost([exchange.request, exchange.reply, ctx], this.classRef as never, this.handler);
    return this.guard.consume({
      context,
      limit: this.options.limit,
      ttl: this.ttl,
      blockDuration: this.blockDuration,
      throttler: this.throttler,
      getTracker: this.getTracker,
      generateKey: this.generateKey,
    });
  }
}
