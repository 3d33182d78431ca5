import { Redis } from 'ioredis';

/** The Redis the suites use; REDIS_URL overrides. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether a Redis answers PING at REDIS_URL within a second. */
export async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * `describe` when Redis answers; otherwise `describe.skip` with a loud message — except with
 * REQUIRE_REDIS=1 (CI), where a missing Redis fails the suite instead of skipping it.
 */
export async function describeWithRedis(what: string): Promise<jest.Describe> {
  if (await redisReachable()) return describe;
  const message = `Redis is not reachable at ${REDIS_URL}: ${what} cannot run.`;
  if (process.env.REQUIRE_REDIS === '1') throw new Error(`${message} (REQUIRE_REDIS=1)`);
  console.warn(`\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n!!! SKIPPED: ${message}\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`);
  return describe.skip;
}

/** Deletes the keys a suite wrote under its own `prefix` (never anything else: the Redis is shared). */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}
