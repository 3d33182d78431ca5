import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Cluster, Redis } from 'ioredis';
import type { ThrottlerStorageRecordLike } from './rpc-memory-throttler-storage.js';

/** The counters could not be reached (Redis down or reconnecting): the limit's `onStoreError` decides. */
export class RateLimitStoreUnavailableError extends Error {
  constructor(options: { cause: unknown }) {
    super(`Rate limit store unavailable: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`, options);
    this.name = 'RateLimitStoreUnavailableError';
  }
}

/**
 * Fixed window plus optional block, atomically in Redis (one round trip per call), so every
 * instance of the app counts against the same window and a limit cannot be dodged by switching
 * instance. Returns [hits, windowTtlMs, blocked(0|1), blockTtlMs]. Both keys carry the same Redis
 * Cluster hash tag (see `increment`), so the script never crosses slots.
 */
const INCREMENT_SCRIPT = `
local blockTtl = redis.call('PTTL', KEYS[2])
if blockTtl > 0 then
  return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1]), 1, blockTtl}
end
local hits = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
if hits <= tonumber(ARGV[2]) then
  return {hits, ttl, 0, 0}
end
local block = tonumber(ARGV[3])
if block > 0 then
  redis.call('SET', KEYS[2], '1', 'PX', block)
  return {hits, ttl, 1, block}
end
return {hits, ttl, 1, ttl}
`;

type IncrementReply = [number, number, number, number];
type RedisWithIncrement = (Redis | Cluster) & {
  rpcThrottlerIncrement(hitsKey: string, blockKey: string, ttl: number, limit: number, block: number): Promise<IncrementReply>;
};

/**
 * `ThrottlerStorage` in Redis, used for `@RpcRateLimit` when the module's `redis` option is set.
 * Hand-written (a 20-line Lua script) rather than a third-party storage package, to keep one
 * Redis client (ioredis, shared with durable streams) and one round trip per call.
 */
export class RpcRedisThrottlerStorage implements ThrottlerStorage {
  private readonly redis: RedisWithIncrement;

  constructor(
    redis: Redis | Cluster,
    private readonly keyPrefix: string,
    /** Sees each command's outcome (the connection's outage log: a timeout is Redis lost). */
    private readonly watch: <T>(command: Promise<T>) => Promise<T> = (command) => command,
  ) {
    redis.defineCommand('rpcThrottlerIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
    this.redis = redis as RedisWithIncrement;
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, _throttlerName?: string): Promise<ThrottlerStorageRecordLike> {
    // `{<key>}`: a hash tag. Both keys share everything up to the first `}` after it, so they
    // hash to the same slot whatever the key contains.
    const hitsKey = `${this.keyPrefix}rl:{${key}}`;
    let reply: IncrementReply;
    try {
      reply = await this.watch(this.redis.rpcThrottlerIncrement(hitsKey, `${hitsKey}:blocked`, ttl, limit, blockDuration));
    } catch (error) {
      // Redis unreachable, or no answer within the connection's command timeout: the limit's
      // `onStoreError` decides (RpcMethodRateLimiter). The outage is logged by the connection's
      // listeners and `watch`, not once per call.
      throw new RateLimitStoreUnavailableError({ cause: error });
    }
    const [hits, ttlMs, blocked, blockMs] = reply;
    return {
      totalHits: Number(hits),
      timeToExpire: Math.max(0, Math.ceil(Number(ttlMs) / 1000)),
      isBlocked: Number(blocked) === 1,
      timeToBlockExpire: Number(blocked) === 1 ? Math.max(1, Math.ceil(Number(blockMs) / 1000)) : 0,
    };
  }
}
