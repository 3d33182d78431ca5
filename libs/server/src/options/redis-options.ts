import type { JsonRpcRedisOptions, ResolvedJsonRpcOptions } from './json-rpc-options.js';
import type { OptionProblems } from './option-checks.js';

export const DEFAULT_REDIS_KEY_PREFIX = 'nest-jsonrpc:';

export function resolveRedisOptions(redis: JsonRpcRedisOptions | undefined, problems: OptionProblems): ResolvedJsonRpcOptions['redis'] {
  if (redis === undefined) return undefined;
  if (!problems.object('"redis"', redis, ['url', 'keyPrefix'], (key) => `unknown option "redis.${key}"`)) return undefined;
  if (typeof redis.url !== 'string' || !/^rediss?:\/\//.test(redis.url)) problems.push('"redis.url" must be a redis:// or rediss:// URL');
  const keyPrefix = redis.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  problems.string('"redis.keyPrefix"', keyPrefix);
  return { url: redis.url, keyPrefix };
}
