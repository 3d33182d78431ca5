import { Injectable, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ThrottlerGuard, type ThrottlerLimitDetail, type ThrottlerRequest, type ThrottlerStorage } from '@nestjs/throttler';
import { getRpcContext } from '../context/rpc-context.js';
import { RpcRateLimitExceededException } from '../errors/rpc-exceptions.js';

/** A response stand-in for RPC calls: per-call `X-RateLimit-*` headers would be meaningless in a batch. */
const NO_HEADERS = Object.freeze({});

/** -32003 `Rate limit exceeded for <method>` with `data.retryAfter` in whole seconds (at least 1). */
export function rateLimitExceeded(method: string, retryAfterSeconds: number): RpcRateLimitExceededException {
  return new RpcRateLimitExceededException(`Rate limit exceeded for ${method}`, {
    data: { retryAfter: Math.max(1, Math.ceil(retryAfterSeconds)) },
  });
}

/**
 * `@nestjs/throttler`'s guard, aware of JSON-RPC calls. For an RPC call (a batch item) it keys the
 * counter by RPC method rather than by route, sets no response headers (the route aggregates
 * `Retry-After` over the batch) and throws -32003 with `retryAfter`. For anything else it is the
 * stock guard, so one `APP_GUARD` serves both the app's HTTP routes and its RPC methods, honouring
 * `@Throttle` and `@SkipThrottle` per call.
 *
 * An extension point like the throttler's own guard: an app subclasses it (`getTracker`,
 * `shouldSkip`, `throwThrottlingException`…) and registers the subclass as its `APP_GUARD`
 * (test/security/rate-limit.e2e-spec.ts). `@RpcRateLimit` does not run through the app's guard:
 * the module counts it with its own `RpcLimitCounter` below.
 */
@Injectable()
export class RpcThrottlerGuard extends ThrottlerGuard {
  protected override getRequestResponse(context: ExecutionContext): { req: Record<string, any>; res: Record<string, any> } {
    const rpc = getRpcContext(context);
    return rpc ? { req: rpc.request, res: NO_HEADERS } : super.getRequestResponse(context);
  }

  protected override generateKey(context: ExecutionContext, suffix: string, name: string): string {
    const rpc = getRpcContext(context);
    return rpc ? `${JSON.stringify(rpc.method)}:${name}:${suffix}` : super.generateKey(context, suffix, name);
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    const rpc = getRpcContext(context);
    if (!rpc) return super.throwThrottlingException(context, detail);
    throw rateLimitExceeded(rpc.method, detail.timeToBlockExpire);
  }
}

/**
 * The module's own instance, which runs `@RpcRateLimit` as a direct step of the call path
 * (`handleRequest` for each precomputed throttler, no Observable chain) on the chosen storage.
 */
export class RpcLimitCounter extends RpcThrottlerGuard {
  constructor(storage: ThrottlerStorage) {
    super({ throttlers: [] }, storage, new Reflector());
    this.throttlers = [];
    this.commonOptions = {};
  }

  /** One throttler check for one call; throws when the call is over the limit. */
  consume(request: ThrottlerRequest): Promise<boolean> {
    return this.handleRequest(request);
  }
}
