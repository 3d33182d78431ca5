import type { ThrottlerStorage } from '@nestjs/throttler';
import { RpcInternalErrorException } from '../errors/rpc-exceptions.js';
import type { Redis } from 'ioredis';
import type { ThrottlerStorageRecordLike } from './rpc-memory-throttler.storage.js';

/**
 * Fixed window plus optional block, atomically in Redis (one round trip per call), so every
 * instance of the app counts against the same window and a limit cannot be dodged by switching
 * instance. Returns [hits, windowTtlMs, blocked(0|1), blockTtlMs].
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
type RedisWithIncrement = Redis & {
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
    redis: Redis,
    private readonly keyPrefix: string,
  ) {
    redis.defineCommand('rpcThrottlerIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
    this.redis = redis as RedisWithIncrement;
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number, _throttlerName?: string): Promise<ThrottlerStorageRecordLike> {
    const hitsKey = `${this.keyPrefix}rl:${key}`;
    let reply: IncrementReply;
    try {
      reply = await this.redis.rpcThrottlerIncrement(hitsKey, `${hitsKey}:blocked`, ttl, limit, blockDuration);
    } catch (error) {
      // Redis unreachable: the call is refused (a limit that cannot be counted is not lifted). The
      // outage is logged by the client's error listener, not once per refused call with a stack.
      throw new RpcInternalErrorException('Internal error', { cause: error });
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
