import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.js';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';

/**
 * The rate limit a method runs with: its own `@RpcRateLimit`, else the module's `rateLimit`
 * default (counted per method, like its own would be); none when `@SkipThrottle({ rpc: true })`
 * lifts it — the default included.
 */
export function effectiveRateLimit(
  own: RpcRateLimitOptions | undefined,
  moduleDefault: ResolvedJsonRpcOptions['rateLimit'],
  skipped: boolean,
): Readonly<RpcRateLimitOptions> | undefined {
  if (skipped) return undefined;
  const limit = own ?? moduleDefault;
  return limit && Object.freeze({ ...limit });
}
