import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.decorator.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';

/**
 * The rate limit a method runs with: its own `@RpcRateLimit`, else the module's `rateLimit`
 * default (counted per method, like its own would be); none when `@SkipThrottle({ rpc: true })`
 * lifts it — the default included.
 */
export function effectiveRateLimit(
  own: RpcRateLimitOptions | undefined,
  options: Pick<ResolvedJsonRpcOptions, 'rateLimit'>,
  skipped: boolean,
): Readonly<RpcRateLimitOptions> | undefined {
  if (skipped) return undefined;
  const limit = own ?? options.rateLimit;
  return limit && Object.freeze({ ...limit });
}
