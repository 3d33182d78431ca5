import type { Logger } from '@nestjs/common';
import type { ThrottlerGenerateKeyFunction, ThrottlerGetTrackerFunction, ThrottlerOptions } from '@nestjs/throttler';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { RpcLimitScope, RpcRateLimitOptions } from '../decorators/rpc-rate-limit.js';
import type { RpcContext } from '../context/rpc-context.js';
import { callerUserId } from '../context/caller-identity.js';
import type { UserIdResolver } from '../options/json-rpc-options.js';
import { RpcInternalErrorException } from '../errors/rpc-exceptions.js';
import type { RpcRateLimitBypass } from './rate-limit-bypass.js';
import { RpcMemoryThrottlerStorage } from './rpc-memory-throttler-storage.js';
import { RateLimitStoreUnavailableError } from './rpc-redis-throttler-storage.js';
import { rateLimitExceeded, type RpcLimitCounter } from './rpc-throttler-guard.js';

/**
 * Whether the shared counters are reachable, as limited calls find them: one warning when calls
 * start meeting an unreachable store (saying what happens to them meanwhile), one line when
 * counting works again — not a line per call.
 */
export class RateLimitStoreOutage {
  private failing = false;

  constructor(private readonly logger: Pick<Logger, 'warn' | 'log'>) {}

  failed(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.warn(
      `Rate limits cannot be counted (${error instanceof Error ? error.message : String(error)}): calls of limits with ` +
        `onStoreError 'allow' run uncounted, those with 'deny' are refused, until the store is back`,
    );
  }

  succeeded(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.log('Rate limits are counted again');
  }
}

/** The throttler name `@RpcRateLimit` counts under; `@SkipThrottle({ rpc: true })` lifts it. */
export const RPC_THROTTLER_NAME = 'rpc';

type SyncTracker = (req: Record<string, any>) => string;

function trackerFor(scope: RpcLimitScope, userIdResolver: UserIdResolver | undefined): SyncTracker {
  switch (scope) {
    case 'global':
      return () => 'global';
    case 'user':
      // Anonymous callers of a per-user limit share one counter per IP rather than one for everyone.
      return (req) => {
        const id = callerUserId(req, userIdResolver);
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
  private readonly getTracker: SyncTracker;
  private readonly generateKey: ThrottlerGenerateKeyFunction;
  private readonly keyPrefix: string;
  /** Set when counters live in this process: the call is then counted synchronously. */
  private readonly memory: RpcMemoryThrottlerStorage | undefined;

  constructor(
    private readonly method: string,
    readonly options: Readonly<RpcRateLimitOptions>,
    private readonly guard: RpcLimitCounter,
    storage: unknown,
    private readonly bypass: RpcRateLimitBypass | undefined,
    userIdResolver: UserIdResolver | undefined,
    private readonly classRef: object,
    private readonly handler: (...args: unknown[]) => unknown,
    /** `'allow'` or `'deny'` when the counters cannot be reached (this limit's, else the module's). */
    private readonly onStoreError: 'allow' | 'deny' = 'allow',
    private readonly outage?: RateLimitStoreOutage,
  ) {
    this.ttl = options.interval * 1000;
    this.blockDuration = (options.blockDuration ?? 0) * 1000;
    // setHeaders off: per-call X-RateLimit-* headers mean nothing for a batch.
    this.throttler = Object.freeze({ name: RPC_THROTTLER_NAME, limit: options.limit, ttl: this.ttl, setHeaders: false });
    this.getTracker = trackerFor(options.scope ?? 'ip', userIdResolver);
    const prefix = (this.keyPrefix = `${JSON.stringify(method)}:${RPC_THROTTLER_NAME}:`);
    this.generateKey = (_context, tracker) => prefix + tracker;
    this.memory = storage instanceof RpcMemoryThrottlerStorage ? storage : undefined;
  }

  /**
   * Counts the call; throws -32003 when it is over the limit. Returns undefined when it counted
   * synchronously (in-process counters, no bypass provider), else a Promise.
   */
  consume(ctx: RpcContext): Promise<unknown> | undefined {
    if (this.bypass) return this.consumeUnlessBypassed(ctx);
    if (this.memory) return this.countInProcess(ctx);
    return this.count(ctx);
  }

  /**
   * The guard's `handleRequest` for in-process counters, without its three awaits: same tracker,
   * same key, same storage record, same -32003. A limit check that never leaves the process has
   * no reason to cost promise hops on every call.
   */
  private countInProcess(ctx: RpcContext): undefined {
    const key = this.keyPrefix + this.getTracker(ctx.exchange.request);
    const record = this.memory!.incrementNow(key, this.ttl, this.options.limit, this.blockDuration, Date.now());
    if (record.isBlocked) throw rateLimitExceeded(this.method, record.timeToBlockExpire);
    return undefined;
  }

  private async consumeUnlessBypassed(ctx: RpcContext): Promise<unknown> {
    if (await this.bypass!.bypassRateLimit(ctx)) return true;
    return this.memory ? this.countInProcess(ctx) : this.count(ctx);
  }

  private count(ctx: RpcContext): Promise<boolean> {
    return this.consumeShared(ctx).then(
      (allowed) => {
        this.outage?.succeeded();
        return allowed;
      },
      (error: unknown) => {
        if (!(error instanceof RateLimitStoreUnavailableError)) {
          this.outage?.succeeded();
          throw error;
        }
        this.outage?.failed(error);
        if (this.onStoreError === 'allow') return true;
        throw new RpcInternalErrorException('Rate limit store unavailable', { cause: error });
      },
    );
  }

  private consumeShared(ctx: RpcContext): Promise<boolean> {
    const exchange = ctx.exchange;
    const context = new ExecutionContextHost([exchange.request, exchange.reply, ctx], this.classRef as never, this.handler);
    return this.guard.consume({
      context,
      limit: this.options.limit,
      ttl: this.ttl,
      blockDuration: this.blockDuration,
      throttler: this.throttler,
      getTracker: this.getTracker as ThrottlerGetTrackerFunction,
      generateKey: this.generateKey,
    });
  }
}
