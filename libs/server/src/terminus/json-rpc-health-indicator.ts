import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { DurableStreamRunner } from '../durable/durable-stream-runner.js';
import { RedisConnections } from '../redis/redis-connections.js';
import type { StreamStoreHealth } from '../stream-stores/stream-store.js';

/** A probe's figures as the health answer shows them: latency rounded to 0.1 ms. */
function details(health: StreamStoreHealth): Record<string, unknown> {
  return {
    kind: health.kind,
    latencyMs: Math.round(health.latencyMs * 10) / 10,
    ...(health.detail === undefined ? {} : { detail: health.detail }),
  };
}

/**
 * `@nestjs/terminus` health indicators for what the module depends on:
 *
 * - `durableStore()`: the durable stream store — SQLite: the write lock can be taken, the file is
 *   writable, the disk has room; Redis (one node or a cluster): a PING answered, both connections
 *   up, with the latency;
 * - `sharedStore()`: the Redis of the `redis` option (shared rate limits and result cache);
 * - `readiness()`: down once the application has begun to shut down (durable streams draining), so
 *   a load balancer stops sending traffic before the server closes.
 *
 * Something the app does not use (durable streams off, no `redis` option) is reported up with
 * `enabled: false`, so one health check fits every configuration.
 */
@Injectable()
export class JsonRpcHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly runner: DurableStreamRunner,
    private readonly redis: RedisConnections,
  ) {}

  async durableStore<const Key extends string = 'durable_store'>(key: Key = 'durable_store' as Key): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    if (!this.runner.enabled) return indicator.up({ enabled: false });
    const store = this.runner.store;
    if (typeof store.checkHealth !== 'function') return indicator.up({ kind: store.constructor.name, checked: false });
    const health = await store.checkHealth();
    return health.up ? indicator.up(details(health)) : indicator.down(details(health));
  }

  async sharedStore<const Key extends string = 'redis'>(key: Key = 'redis' as Key): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    const health = await this.redis.checkHealth();
    if (health === undefined) return indicator.up({ enabled: false });
    return health.up ? indicator.up(details(health)) : indicator.down(details(health));
  }

  readiness<const Key extends string = 'jsonrpc'>(key: Key = 'jsonrpc' as Key): HealthIndicatorResult<Key> {
    const indicator = this.health.check(key);
    const state = { draining: this.runner.draining, runningStreams: this.runner.runningHere };
    return state.draining ? indicator.down(state) : indicator.up(state);
  }
}
