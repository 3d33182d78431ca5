import { RPC_RATE_LIMIT_METADATA } from './metadata-keys.js';

/** Whose calls share one counter: everyone's, each user's, or each client IP's. */
export type RpcLimitScope = 'global' | 'user' | 'ip';

export interface RpcRateLimitOptions {
  /** Calls allowed per `interval`. */
  limit: number;
  /** Window length in seconds. */
  interval: number;
  /** Who shares the counter. Default `'ip'`. Anonymous callers of a `'user'` limit are counted per IP. */
  scope?: RpcLimitScope;
  /**
   * Seconds a caller stays blocked once over the limit. Default 0: blocked only until the
   * current window ends.
   */
  blockDuration?: number;
  /**
   * When the shared counters cannot be reached (the `redis` option's Redis is down): `'allow'` lets
   * the call through uncounted, `'deny'` refuses it with -32603 `Rate limit store unavailable`.
   * Default: the module's `rateLimit.onStoreError`, else `'allow'`.
   */
  onStoreError?: RpcRateLimitStoreErrorPolicy;
}

/** What a limited call does while its counters cannot be reached. */
export type RpcRateLimitStoreErrorPolicy = 'allow' | 'deny';

/**
 * Limits how often the method may be called, counted per call (each batch item and each
 * notification counts) and keyed by RPC method. Over the limit the call answers -32003
 * `Rate limit exceeded for <method>` with `data.retryAfter` (seconds). Lifted for one class or
 * method by `@SkipThrottle({ rpc: true })`, or per call by an `RpcRateLimitBypass` provider.
 */
export function RpcRateLimit(options: RpcRateLimitOptions): MethodDecorator {
  return (_target, _key, descriptor) => {
    Reflect.defineMetadata(RPC_RATE_LIMIT_METADATA, { ...options }, descriptor.value as object);
    return descriptor;
  };
}
