import type { RpcCacheOptions } from '../decorators/rpc-cache.decorator.js';
import type { RpcRateLimitOptions } from '../decorators/rpc-rate-limit.decorator.js';

const SCOPES = ['global', 'user', 'ip'];
const positive = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0;

/** Startup checks of `@RpcRateLimit`: a typo must fail bootstrap, not silently disable the limit. */
export function checkRateLimitOptions(options: RpcRateLimitOptions | undefined, where: string, problems: string[]): void {
  if (options === undefined) return;
  const known = new Set(['limit', 'interval', 'scope', 'blockDuration']);
  for (const key of Object.keys(options)) if (!known.has(key)) problems.push(`${where}: @RpcRateLimit has unknown option "${key}"`);
  if (!Number.isInteger(options.limit) || options.limit < 1) problems.push(`${where}: @RpcRateLimit "limit" must be an integer >= 1`);
  if (!positive(options.interval)) problems.push(`${where}: @RpcRateLimit "interval" must be a number of seconds > 0`);
  if (options.scope !== undefined && !SCOPES.includes(options.scope)) {
    problems.push(`${where}: @RpcRateLimit "scope" must be "global", "user" or "ip", got ${JSON.stringify(options.scope)}`);
  }
  if (options.blockDuration !== undefined && !(typeof options.blockDuration === 'number' && options.blockDuration >= 0)) {
    problems.push(`${where}: @RpcRateLimit "blockDuration" must be a number of seconds >= 0`);
  }
}

/** Startup checks of `@RpcCache`. */
export function checkCacheOptions(options: RpcCacheOptions | undefined, where: string, problems: string[]): void {
  if (options === undefined) return;
  const known = new Set(['ttl', 'scope', 'tags']);
  for (const key of Object.keys(options)) if (!known.has(key)) problems.push(`${where}: @RpcCache has unknown option "${key}"`);
  if (!positive(options.ttl)) problems.push(`${where}: @RpcCache "ttl" must be a number of seconds > 0`);
  const { scope, tags } = options;
  if (scope !== undefined && typeof scope !== 'function' && !SCOPES.includes(scope)) {
    problems.push(`${where}: @RpcCache "scope" must be "global", "user", "ip" or a function, got ${JSON.stringify(scope)}`);
  }
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((t) => typeof t === 'string' && t.length > 0))) {
    problems.push(`${where}: @RpcCache "tags" must be an array of non-empty strings`);
  }
}
