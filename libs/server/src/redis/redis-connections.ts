import { once } from 'node:events';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import type { Cluster, Redis } from 'ioredis';
import type { ResolvedJsonRpcOptions } from '../options/json-rpc-options.js';
import { OPTIONS_SECTION } from '../options/option-section-tokens.js';
import {
  logIoredisOutages,
  REDIS_COMMAND_TIMEOUT_MS,
  REDIS_LOADING_RETRY_MS,
  REDIS_RECONNECT_DELAY,
  RedisOutageLog,
  watchCommand,
} from '../stream-stores/redis-connection-watch.js';
import type { StreamStoreHealth } from '../stream-stores/stream-store.js';

/** Milliseconds to wait for a Redis connection before a cache read counts as a miss. */
const REDIS_CONNECT_TIMEOUT_MS = 2000;
/** Longest a graceful close of the cache's cluster client may take before it is destroyed. */
const CLOSE_TIMEOUT_MS = 500;
const HEALTH_PROBE_TIMEOUT_MS = 1000;

/** The node-redis client (or cluster client) under the cache's `@keyv/redis` store. */
interface NodeRedisClient {
  isOpen: boolean;
  isReady?: boolean;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
  on(event: string, listener: (...args: any[]) => void): unknown;
}

interface OpenConnections {
  readonly keyPrefix: string;
  /** ioredis (`Redis` or `Cluster`): rate-limit counters (one Lua script per call). */
  readonly commands: Redis | Cluster;
  /** cache-manager over `@keyv/redis`: the result cache and its generations. */
  readonly cache: Cache;
  readonly cacheClient: NodeRedisClient;
  readonly limitsLog: RedisOutageLog;
  readonly logs: readonly RedisOutageLog[];
}

/** Credentials and TLS of a `redis://` / `rediss://` URL, for the clients a cluster opens per node. */
function credentialsOf(url: string): { username?: string; password?: string; tls?: object } {
  const u = new URL(url);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * The Redis connections of the module's `redis` option — one node or a cluster — opened in this
 * one place and shared by the rate limits and the result cache; closed on shutdown. Empty when the
 * option is not set. ioredis, @keyv/redis, keyv and cache-manager are loaded only then: apps
 * without the option need none of them.
 *
 * Outages: neither connection queues commands while Redis is unreachable (a limited or cached
 * call is decided at once: see `rateLimit.onStoreError`, and a cache error is a miss), and no
 * command waits longer than REDIS_COMMAND_TIMEOUT_MS for a Redis that stopped answering with its
 * connection still open (then the call is decided the same way); each connection logs one warning
 * when it loses Redis (closed, or a command timed out) and one line when it is back, and
 * reconnects within half a second of Redis returning.
 */
export class RedisConnections implements OnApplicationShutdown {
  private constructor(private readonly open: OpenConnections | undefined) {}

  static async create(redis: ResolvedJsonRpcOptions['redis']): Promise<RedisConnections> {
    if (!redis) return new RedisConnections(undefined);
    const { url, cluster, keyPrefix } = redis;
    // One after the other: jest's ESM loader fails on concurrent imports sharing a dependency.
    const { Redis, Cluster } = await import('ioredis');
    const { Keyv } = await import('keyv');
    const { default: KeyvRedis, createClient, createCluster } = await import('@keyv/redis');
    const { createCache } = await import('cache-manager');
    const logger = new Logger('JsonRpc');
    const limitsLog = new RedisOutageLog(logger, 'rate limits');
    const cacheLog = new RedisOutageLog(logger, 'the result cache');
    // Offline queue off: while Redis is unreachable a limited call is decided at once instead of
    // waiting through reconnects. disconnectTimeout: ioredis keeps a timer that long at shutdown
    // when the socket already failed. commandTimeout: a Redis that stops answering without closing
    // the connection would otherwise hold every limited call until it answers again (this
    // connection runs only the rate-limit script and PING, nothing blocking). In redisOptions it
    // applies to every node of a cluster too. maxRetriesPerRequest 0: a command written just
    // before Redis died fails as the connection closes; ioredis would otherwise keep it to send
    // again after a reconnect, holding the call until Redis is back (or until commandTimeout).
    const nodeOptions = {
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      disconnectTimeout: 500,
      maxLoadingRetryTime: REDIS_LOADING_RETRY_MS,
    };
    let commands: Redis | Cluster;
    if (cluster) {
      commands = new Cluster(
        cluster.nodes.map((node) => ({ host: new URL(node).hostname, port: Number(new URL(node).port || 6379) })),
        { enableOfflineQueue: false, clusterRetryStrategy: REDIS_RECONNECT_DELAY, redisOptions: { ...nodeOptions, ...credentialsOf(cluster.nodes[0]) } },
      );
    } else {
      commands = new Redis(url, { ...nodeOptions, enableOfflineQueue: false, retryStrategy: REDIS_RECONNECT_DELAY });
    }
    logIoredisOutages(commands, limitsLog);
    // Our own node-redis client rather than @keyv/redis's default one: that one queues commands
    // while Redis is unreachable and waits for it forever, so a cached call would hang instead of
    // being answered uncached. With the offline queue off a command fails at once (a miss).
    // Backoff capped at 500 ms: node-redis sleeps it out even after the client is destroyed, so
    // a longer one would hold the process open at shutdown while Redis is down.
    const socket = { connectTimeout: REDIS_CONNECT_TIMEOUT_MS, reconnectStrategy: (retries: number) => Math.min(2 ** retries * 50, 500) };
    const cacheClient = (
      cluster
        ? createCluster({ rootNodes: cluster.nodes.map((node) => ({ url: node })), defaults: { disableOfflineQueue: true, socket } })
        : createClient({ url, disableOfflineQueue: true, socket })
    ) as unknown as NodeRedisClient;
    cacheClient.on('error', (error: Error) => cacheLog.lost(error.message));
    // A cluster client reports its nodes: one node lost is the cache (partly) lost.
    cacheClient.on('node-error', (error: Error) => cacheLog.lost(error.message));
    cacheClient.on('ready', () => cacheLog.back());
    cacheClient.on('node-ready', () => cacheLog.back());
    const connecting = cacheClient.connect().catch(() => undefined);
    // Startup waits for both connections, at most REDIS_CONNECT_TIMEOUT_MS: with Redis down the
    // app still starts; limited calls follow `onStoreError` and cached calls run uncached until it is back.
    await Promise.race([
      Promise.all([connecting, once(commands, 'ready').catch(() => undefined)]),
      new Promise((resolve) => setTimeout(resolve, REDIS_CONNECT_TIMEOUT_MS).unref()),
    ]);
    const cache = boundedCache(
      createCache({
        stores: [new Keyv({ store: new KeyvRedis(cacheClient as never), namespace: undefined, useKeyPrefix: false })],
      }),
      cacheLog,
    );
    return new RedisConnections({ keyPrefix, commands, cache, cacheClient, limitsLog, logs: [limitsLog, cacheLog] });
  }

  /** Set when the `redis` option is. */
  get keyPrefix(): string | undefined {
    return this.open?.keyPrefix;
  }

  get commands(): Redis | Cluster | undefined {
    return this.open?.commands;
  }

  /**
   * A rate-limit command, watched: one that timed out (Redis stopped answering) logs the
   * connection lost, as a closed connection does; one answered logs it back.
   */
  watchLimits<T>(command: Promise<T>): Promise<T> {
    return this.open ? watchCommand(command, this.open.limitsLog) : command;
  }

  get cache(): Cache | undefined {
    return this.open?.cache;
  }

  /** Whether the cache's connection is up (a cluster client: open); false without the `redis` option. */
  cacheConnected(): boolean {
    const client = this.open?.cacheClient;
    return client !== undefined && client.isOpen && client.isReady !== false;
  }

  /**
   * PINGs the rate-limit connection and looks at the cache's, for health checks; undefined when
   * the `redis` option is not set. Never throws.
   */
  async checkHealth(): Promise<StreamStoreHealth | undefined> {
    if (!this.open) return undefined;
    const { commands, cacheClient } = this.open;
    const kind = (commands as Cluster).isCluster ? 'redis-cluster' : 'redis';
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        commands.ping(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no PONG within ${HEALTH_PROBE_TIMEOUT_MS} ms`)), HEALTH_PROBE_TIMEOUT_MS))),
      ]);
      const latencyMs = performance.now() - started;
      if (!cacheClient.isOpen || cacheClient.isReady === false) return { up: false, kind, latencyMs, detail: 'result cache connection down' };
      return { up: true, kind, latencyMs };
    } catch (error) {
      return { up: false, kind, latencyMs: performance.now() - started, detail: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.open) return;
    const { commands, cacheClient, logs } = this.open;
    for (const log of logs) log.stop();
    // Graceful when connected (pending writes finish); with Redis down a graceful close would wait
    // for a connection that may never come.
    await Promise.allSettled([
      // A Redis that stopped answering times the QUIT out: then the socket is dropped.
      commands.status === 'ready' ? commands.quit().catch(() => commands.disconnect()) : Promise.resolve(commands.disconnect()),
      closeNodeRedis(cacheClient),
    ]);
  }
}

/**
 * The cache with every operation bounded: node-redis bounds only a command's wait to be written,
 * not its wait for the reply, so a Redis that stopped answering with the connection open would
 * hold a cached call until it answered again. An operation with no answer within
 * REDIS_COMMAND_TIMEOUT_MS fails (a miss, the call answered uncached) and logs the connection
 * lost; the next one answered logs it back.
 */
function boundedCache(cache: Cache, log: RedisOutageLog): Cache {
  return new Proxy(cache, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = value.apply(target, args);
        return result instanceof Promise ? watchCommand(result, log, true) : result;
      };
    },
  });
}

/** Closes the cache's client gracefully when it can, else at once. */
async function closeNodeRedis(client: NodeRedisClient): Promise<void> {
  if (!client.isOpen) return;
  if (client.isReady === false) return client.destroy();
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    client.close().then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_TIMEOUT_MS))),
  ]).catch(() => false);
  clearTimeout(timer);
  if (!closed) client.destroy();
}

/** Async, so the Redis packages are imported only by apps that use the `redis` option. */
export const REDIS_CONNECTIONS_PROVIDER = {
  provide: RedisConnections,
  inject: [OPTIONS_SECTION.redis],
  useFactory: (redis: ResolvedJsonRpcOptions['redis']) => RedisConnections.create(redis),
};
