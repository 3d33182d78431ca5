import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Logger } from '@nestjs/common';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import {
  CANCELLED_EVENT_DATA,
  INTERRUPTED_EVENT_DATA,
  STATUS_OF_TERMINAL,
  STORE_LOST_EVENTS_EVENT_DATA,
  type DurableEventName,
  type DurableStreamEvent,
  type DurableStreamStatus,
  type DurableTerminalEventName,
} from '@nest-jsonrpc/protocol';
import { logIoredisOutages, REDIS_LOADING_RETRY_MS, REDIS_RECONNECT_DELAY, RedisOutageLog } from './redis-connection-watch.js';
import { StreamStoreUnavailableError } from './stream-store-unavailable.js';
import type {
  AppendOutcome,
  DurableStreamRecord,
  CreateOutcome,
  DurableEventListener,
  LookupOutcome,
  NewDurableStream,
  PendingDurableEvent,
  StreamStore,
  StreamStoreHealth,
} from './stream-store.js';

export interface RedisStreamStoreOptions {
  /** `redis://...`; a connection is opened (and closed with the app). */
  url?: string;
  /**
   * An existing ioredis client, a `Redis` or a `Cluster`: used for commands, duplicated for
   * pub/sub, never closed by us. Its own `retryStrategy` decides how soon it is used again after
   * an outage (the default one backs off to 5 s; `(n) => Math.min(n * 50, 500)` is what the
   * connections this store opens use).
   */
  client?: Redis | Cluster;
  /** Extra ioredis options when connecting from `url`. */
  redisOptions?: RedisOptions;
  /** Prefix of every key and channel. Instances serving one API must share it. Default `nest-jsonrpc:durable:`. */
  keyPrefix?: string;
  /**
   * How often this instance proves it is alive, in ms. Default 5000; it is presumed dead after 3x
   * that. A beat unanswered for max(heartbeatMs, 2000) ms with the connection open means Redis
   * hangs: the store is announced unavailable until it answers.
   */
  heartbeatMs?: number;
  /**
   * Pub/sub delivers at most once: a stream whose attached subscribers have heard nothing for this
   * many ms is read again, so a lost last message (or a channel a Redis Cluster's pub/sub node
   * change dropped) delays events by at most this, never forever. One `XRANGE … COUNT 1` per
   * silent stream per instance per interval, however many subscribe. Default 5000; 0 turns it off.
   */
  fanOutRecheckMs?: number;
}

/** The client surface used here, common to ioredis's `Redis` and `Cluster`. */
type RedisClient = Redis;

/** A claim with no stream metadata older than this is debris of a start that died half-way. */
const ORPHAN_CLAIM_MS = 30_000;
const SWEEP_BATCH = 500;
const HEALTH_PROBE_TIMEOUT_MS = 1000;
/** The least time a heartbeat may go unanswered before Redis counts as hung (see `hungAfterMs`). */
const HUNG_AFTER_MIN_MS = 2000;

/**
 * Key layout. Everything one script touches shares a Redis Cluster hash tag: a stream's own keys
 * are tagged with its id (`{<id>}`), so streams spread over the cluster's slots; the indexes — who
 * runs what (for `maxRunning`), whose streams are whose (for the list), what finished when (for
 * the sweep) — are tagged `{index}` and live together in one slot. No script crosses slots.
 */
class RedisStreamKeys {
  readonly running: string;
  readonly claims: string;
  readonly finished: string;
  readonly cancelChannel: string;
  private readonly index: string;

  constructor(readonly prefix: string) {
    this.index = `${prefix}{index}:`;
    this.running = `${this.index}running`;
    this.claims = `${this.index}claims`;
    this.finished = `${this.index}finished`;
    this.cancelChannel = `${prefix}cancel`;
  }

  meta(id: string): string {
    return `${this.prefix}{${id}}:s`;
  }

  events(id: string): string {
    return `${this.prefix}{${id}}:e`;
  }

  tombstone(id: string): string {
    return `${this.prefix}{${id}}:t`;
  }

  channel(id: string): string {
    return `${this.prefix}ev:${id}`;
  }

  /** Running streams of one owner (`''`: every anonymous caller). */
  runningOf(owner: string): string {
    return `${this.index}running:u:${owner}`;
  }

  /** All streams of one owner, by creation time (the list). */
  ownedBy(owner: string): string {
    return `${this.index}o:${owner}`;
  }

  heartbeat(instanceId: string): string {
    return `${this.prefix}i:${instanceId}`;
  }
}

// KEYS: running, claims, runningOf(owner), ownedBy(owner). ARGV: id, owner, createdAt, total limit or '', per-user limit or ''
const CLAIM_LUA = `
if ARGV[4] ~= '' and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return {0, 'total', ARGV[4]} end
if ARGV[5] ~= '' and redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[5]) then return {0, 'perUser', ARGV[5]} end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1]) end
return {1}
`;

// KEYS: running, claims, runningOf(owner), finished, ownedBy(owner).
// ARGV: id, completedAt ('' for a claim whose stream was never created: it is forgotten, not finished)
const RELEASE_LUA = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if ARGV[2] ~= '' then redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1]) else redis.call('ZREM', KEYS[5], ARGV[1]) end
return 1
`;

// KEYS: meta, events. ARGV: fan-out channel, terminal status or '', now, fan-out payload tail,
// batch token, the last id this instance committed or '', then event/data pairs. A batch whose
// token is the last one committed was committed by an earlier attempt whose answer was lost: it
// is answered again, not appended twice. A stream with fewer events than this instance committed
// lost acknowledged writes (a Redis restarted without them): refused ('lost'), never renumbered.
const APPEND_LUA = `
if redis.call('HGET', KEYS[1], 'batch') == ARGV[5] then
  return {1, tonumber(redis.call('HGET', KEYS[1], 'batch_last')), redis.call('HGET', KEYS[1], 'owner')}
end
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0, 'missing'} end
if status ~= 'running' then return {0, status} end
local last = tonumber(redis.call('HGET', KEYS[1], 'events'))
if ARGV[6] ~= '' and last < tonumber(ARGV[6]) then return {0, 'lost', last} end
local first = last + 1
for i = 7, #ARGV, 2 do
  last = last + 1
  redis.call('XADD', KEYS[2], last .. '-0', 'e', ARGV[i], 'd', ARGV[i + 1])
end
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[1], 'events', last, 'status', ARGV[2], 'completed_at', ARGV[3], 'updated_at', ARGV[3], 'batch', ARGV[5], 'batch_last', last)
elseif last >= first then
  redis.call('HSET', KEYS[1], 'events', last, 'updated_at', ARGV[3], 'batch', ARGV[5], 'batch_last', last)
else
  redis.call('HSET', KEYS[1], 'events', last, 'batch', ARGV[5], 'batch_last', last)
end
if last >= first then redis.call('PUBLISH', ARGV[1], first .. ARGV[4]) end
return {1, last, redis.call('HGET', KEYS[1], 'owner')}
`;

// KEYS: meta, events, tombstone. ARGV: forgetBefore. Returns the owner ('' anonymous), or false if already gone.
const SWEEP_ONE_LUA = `
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then return false end
local completed = tonumber(redis.call('HGET', KEYS[1], 'completed_at') or '0')
redis.call('DEL', KEYS[1], KEYS[2])
local ttl = completed - tonumber(ARGV[1])
if ttl > 0 then redis.call('SET', KEYS[3], 'u' .. owner, 'PX', ttl) end
return owner
`;

// KEYS: finished, then ownedBy(owner) of each id. ARGV: the ids.
const UNINDEX_LUA = `
for i = 1, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('ZREM', KEYS[i + 1], ARGV[i])
end
return #ARGV
`;

interface Script {
  lua: string;
  sha: string;
}
const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });
const CLAIM = script(CLAIM_LUA);
const RELEASE = script(RELEASE_LUA);
const APPEND = script(APPEND_LUA);
const SWEEP_ONE = script(SWEEP_ONE_LUA);
const UNINDEX = script(UNINDEX_LUA);

/** Redis answers meaning "not now" rather than "never": a restart loading its data, a cluster reconfiguring. */
const TRANSIENT_REPLY = /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|BUSY|NOREPLICAS)\b/;

/** Anything but a plain Redis error reply (a script bug, a wrong type) means Redis could not be reached. */
function asStoreError(error: unknown): unknown {
  if (error instanceof StreamStoreUnavailableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const isReply = error instanceof Error && error.name === 'ReplyError';
  if (isReply && !TRANSIENT_REPLY.test(message)) return error;
  return new StreamStoreUnavailableError(message, { cause: error });
}

type Channel = { listeners: Set<DurableEventListener> };

/**
 * Durable streams in Redis (one node, a primary/replica pair, or a Redis Cluster), for several app
 * instances serving one API: each stream's events are a Redis Stream (entry ids `<n>-0`), its
 * metadata a hash, and every commit is one Lua script that checks the stream still runs, appends,
 * and PUBLISHes the events — so fan-out to every instance follows the commit, in commit order.
 * Cancellation is a pub/sub message to all instances; the one running the producer aborts it.
 * Instances keep a heartbeat key; streams of an instance whose heartbeat expired are ended with the
 * "Stream interrupted" error by the survivors.
 *
 * Outages: while a connection is down every call fails at once with `StreamStoreUnavailableError`
 * (nothing waits for a Redis that is not there); a lost connection is logged once, and its return
 * once. When both connections are back the channels are subscribed again and availability
 * listeners hear `true`, so subscribers re-read what was committed meanwhile.
 */
export class RedisStreamStore implements StreamStore {
  /** This instance's id in heartbeat keys and stream metadata. */
  readonly instanceId = randomUUID();
  private readonly keys: RedisStreamKeys;
  private readonly heartbeatMs: number;
  /** `StreamStore.fanOutRecheckMs`: pub/sub delivers at most once (see `RedisStreamStoreOptions.fanOutRecheckMs`). */
  readonly fanOutRecheckMs: number;
  private readonly logger = new Logger('JsonRpcDurable');
  private client: RedisClient | undefined;
  private subscriber: RedisClient | undefined;
  private ownsClient = false;
  private readonly channels = new Map<string, Channel>();
  private readonly cancelListeners = new Set<(id: string) => void>();
  private readonly availabilityListeners = new Set<(available: boolean) => void>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly localRunning = new Set<string>();
  /** What `create` wrote, per stream this instance runs: a record that vanished (Redis restarted empty) is written again from it. */
  private readonly createdHere = new Map<string, NewDurableStream>();
  /** The last id committed by this instance, per stream it produces: what Redis must still have. */
  private readonly committedHere = new Map<string, number>();
  /** Batch tokens of appends: a retried batch (the same array) keeps its token. */
  private readonly batchTokens = new WeakMap<PendingDurableEvent[], string>();
  private batchCount = 0;
  private available = true;
  /** A heartbeat went unanswered for `hungAfterMs` with the connection open: announced unavailable until it answers. */
  private hung = false;
  /**
   * How long a heartbeat may go unanswered, the connection open, before Redis counts as hung:
   * max(heartbeatMs, HUNG_AFTER_MIN_MS). Not one heartbeat alone: a Redis that is merely slow (a
   * loaded machine, a long command ahead of the beat) must not be announced unavailable — that
   * logs a warning and starts every attached client's outageGraceMs. 2 s is the bound the module
   * gives Redis elsewhere (a start or a REST route waits `storeTimeoutMs`, 2000 by default), far
   * above a healthy Redis's latency.
   */
  private readonly hungAfterMs: number;
  private commandsReady = false;
  private subscriberReady = false;
  /** After Redis comes back, other instances need a heartbeat to prove they live: no recovery before this. */
  private recoveryHeldUntil = 0;
  private readonly outageLogs: RedisOutageLog[] = [];
  /** Removes this store's listeners from a client the app passed in (and keeps using). */
  private unwatchClient: (() => void) | undefined;

  constructor(private readonly options: RedisStreamStoreOptions) {
    if (!options || (!options.url && !options.client)) throw new Error('RedisStreamStore needs { url } or { client }');
    this.keys = new RedisStreamKeys(options.keyPrefix ?? 'nest-jsonrpc:durable:');
    this.heartbeatMs = options.heartbeatMs ?? 5000;
    this.hungAfterMs = Math.max(this.heartbeatMs, HUNG_AFTER_MIN_MS);
    this.fanOutRecheckMs = options.fanOutRecheckMs ?? 5000;
    if (!Number.isFinite(this.fanOutRecheckMs) || this.fanOutRecheckMs < 0) {
      throw new Error(`RedisStreamStore: fanOutRecheckMs must be a number of ms >= 0 (0 turns the re-check off), got ${options.fanOutRecheckMs}`);
    }
  }

  async open(): Promise<void> {
    if (this.client) return;
    const { Redis } = await import('ioredis');
    let client = this.options.client as RedisClient | undefined;
    if (!client) {
      client = new Redis(this.options.url!, {
        lazyConnect: true,
        retryStrategy: REDIS_RECONNECT_DELAY,
        maxLoadingRetryTime: REDIS_LOADING_RETRY_MS,
        // A command sent just before the connection died waits for the next one (appends carry a
        // token, so one that was committed after all is not committed twice).
        maxRetriesPerRequest: null,
        ...this.options.redisOptions,
      });
      this.ownsClient = true;
    }
    const unwatch = this.watch(client, 'durable streams');
    if (!this.ownsClient) this.unwatchClient = unwatch;
    await connected(client);
    this.client = client;
    this.commandsReady = client.status === 'ready';
    const subscriber = this.duplicate(client);
    this.subscriber = subscriber;
    this.watch(subscriber, 'durable stream fan-out');
    subscriber.on('message', this.onMessage);
    client.on('ready', this.onCommandsReady);
    client.on('close', this.onCommandsClosed);
    subscriber.on('ready', this.onSubscriberReady);
    subscriber.on('close', this.onSubscriberClosed);
    await subscriber.subscribe(this.keys.cancelChannel);
    this.subscriberReady = true;
    await this.beat();
    this.heartbeatTimer = setInterval(() => {
      // The heartbeat is also the probe of a Redis that hangs with its connections open (a stopped
      // process, a frozen host): no close or error comes then, so a beat unanswered within
      // `hungAfterMs` announces the store unavailable (attached clients start their outageGraceMs),
      // and its late answer announces it back.
      let answered = false;
      const probe = setTimeout(() => {
        if (answered || this.hung || !this.commandsReady) return;
        this.hung = true;
        this.logger.warn(`Redis for durable streams does not answer: no heartbeat reply within ${this.hungAfterMs} ms`);
        this.setAvailable(false);
      }, this.hungAfterMs);
      probe.unref();
      const settle = (): void => {
        answered = true;
        clearTimeout(probe);
      };
      void this.beat()
        .then(() => {
          settle();
          if (this.hung) {
            this.hung = false;
            this.logger.log('Redis for durable streams answers again');
            if (this.commandsReady && this.subscriberReady) this.setAvailable(true);
          }
          return this.recoverInterrupted(this.localRunning, Date.now());
        })
        .catch(settle);
    }, this.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  /** The pub/sub connection: a duplicate of the commands client that reconnects promptly. */
  private duplicate(client: RedisClient): RedisClient {
    // A Cluster's duplicate keeps its own resubscription; a single node's resubscription is ours
    // (onSubscriberReady), so that availability is announced only once the channels are back.
    if ((client as unknown as Cluster).isCluster) return (client as unknown as Cluster).duplicate() as unknown as RedisClient;
    return client.duplicate({
      retryStrategy: REDIS_RECONNECT_DELAY,
      maxLoadingRetryTime: REDIS_LOADING_RETRY_MS,
      autoResubscribe: false,
      maxRetriesPerRequest: null,
      lazyConnect: false,
    });
  }

  private watch(client: RedisClient, what: string): () => void {
    const log = new RedisOutageLog(this.logger, what);
    this.outageLogs.push(log);
    return logIoredisOutages(client, log);
  }

  async close(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    const client = this.client;
    const subscriber = this.subscriber;
    this.client = undefined;
    this.subscriber = undefined;
    this.channels.clear();
    this.cancelListeners.clear();
    this.availabilityListeners.clear();
    for (const log of this.outageLogs) log.stop();
    if (subscriber) subscriber.disconnect();
    if (client) {
      client.off('ready', this.onCommandsReady);
      client.off('close', this.onCommandsClosed);
      if (client.status === 'ready') await client.del(this.keys.heartbeat(this.instanceId)).catch(() => undefined);
      if (this.ownsClient) {
        if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
        else client.disconnect();
      } else {
        // A client the app owns: leave it as we found it.
        this.unwatchClient?.();
      }
    }
  }

  // ---- availability --------------------------------------------------------------------------------

  onAvailability(listener: (available: boolean) => void): () => void {
    this.availabilityListeners.add(listener);
    return () => this.availabilityListeners.delete(listener);
  }

  private setAvailable(available: boolean): void {
    if (available === this.available) return;
    this.available = available;
    if (available) {
      // Back (Redis maybe restarted, every heartbeat key lapsed, the other instances maybe still
      // reconnecting): no instance is judged dead before each has had 3 heartbeats to show it lives.
      this.recoveryHeldUntil = Date.now() + 3 * this.heartbeatMs;
      void this.beat().catch(() => undefined);
    }
    for (const listener of this.availabilityListeners) {
      try {
        listener(available);
      } catch {
        // isolated
      }
    }
  }

  private readonly onCommandsReady = (): void => {
    this.commandsReady = true;
    if (this.subscriberReady) this.setAvailable(true);
  };

  private readonly onCommandsClosed = (): void => {
    this.commandsReady = false;
    this.hung = false;
    this.setAvailable(false);
  };

  private readonly onSubscriberReady = (): void => {
    const subscriber = this.subscriber;
    if (!subscriber) return;
    // Channels subscribed while the connection was down are included: subscribe() only records them then.
    subscriber.subscribe(this.keys.cancelChannel, ...this.channels.keys()).then(
      () => {
        this.subscriberReady = true;
        if (this.commandsReady) this.setAvailable(true);
      },
      () => undefined, // lost again: the next 'ready' tries again
    );
  };

  private readonly onSubscriberClosed = (): void => {
    this.subscriberReady = false;
    this.setAvailable(false);
  };

  // ---- commands --------------------------------------------------------------------------------

  /** The commands connection, or `StreamStoreUnavailableError` at once while it is down. */
  private get redis(): RedisClient {
    const client = this.client;
    if (!client) throw new Error('RedisStreamStore is not open');
    if (client.status !== 'ready') throw new StreamStoreUnavailableError(`Redis connection is ${client.status}`);
    return client;
  }

  /** Runs `work` on the commands connection; connection failures become `StreamStoreUnavailableError`. */
  private async command<T>(work: (redis: RedisClient) => Promise<T>): Promise<T> {
    const redis = this.redis;
    try {
      return await work(redis);
    } catch (error) {
      throw asStoreError(error);
    }
  }

  private beat(): Promise<unknown> {
    return this.command((redis) => redis.set(this.keys.heartbeat(this.instanceId), '1', 'PX', this.heartbeatMs * 3));
  }

  private run(s: Script, keys: string[], args: Array<string | number>): Promise<any> {
    return this.command(async (redis) => {
      try {
        return await redis.evalsha(s.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return redis.eval(s.lua, keys.length, ...keys, ...args);
        throw error;
      }
    });
  }

  async create(stream: NewDurableStream): Promise<CreateOutcome> {
    const k = this.keys;
    const owner = stream.owner ?? '';
    // The claim first (in the index slot, where the limits are counted exactly), then the stream.
    const claimed = await this.run(
      CLAIM,
      [k.running, k.claims, k.runningOf(owner), k.ownedBy(owner)],
      [stream.id, owner, stream.createdAt, stream.limits.total ?? '', stream.limits.perUser ?? ''],
    );
    if (claimed[0] !== 1) return { ok: false, scope: claimed[1], limit: Number(claimed[2]) };
    try {
      await this.command((redis) =>
        redis.hset(k.meta(stream.id), {
          method: stream.method,
          owner,
          status: 'running',
          events: 0,
          created_at: stream.createdAt,
          instance: this.instanceId,
        }),
      );
    } catch (error) {
      // The claim must not hold a slot for a stream that does not exist (recovery drops it later otherwise).
      await this.release(stream.id, owner, '').catch(() => undefined);
      throw error;
    }
    this.localRunning.add(stream.id);
    this.createdHere.set(stream.id, stream);
    return { ok: true };
  }

  private release(id: string, owner: string, completedAt: number | ''): Promise<unknown> {
    const k = this.keys;
    return this.run(RELEASE, [k.running, k.claims, k.runningOf(owner), k.finished, k.ownedBy(owner)], [id, completedAt]);
  }

  async append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): Promise<AppendOutcome> {
    const k = this.keys;
    const status = terminal ? STATUS_OF_TERMINAL[events[events.length - 1].event as DurableTerminalEventName] : '';
    let token = this.batchTokens.get(events);
    if (token === undefined) {
      token = `${this.instanceId}:${++this.batchCount}`;
      this.batchTokens.set(events, token);
    }
    const args: Array<string | number> = [k.channel(id), status, now, '', token, this.committedHere.get(id) ?? ''];
    let payload = '';
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      payload += `\n${e.event}\t${e.data}`;
      args.push(e.event, e.data);
    }
    args[3] = payload;
    const result = await this.run(APPEND, [k.meta(id), k.events(id)], args);
    if (result[0] !== 1) {
      const created = this.createdHere.get(id);
      this.forgetLocal(id);
      const committed = this.committedHere.get(id);
      this.committedHere.delete(id);
      if (result[1] === 'lost') return this.endLost(id, Number(result[2]), committed!, now);
      if (result[1] === 'missing' && created) return this.endVanished(created, committed ?? 0, now);
      return { ok: false, status: result[1] };
    }
    const last = Number(result[1]);
    for (let i = 0; i < events.length; i++) events[i].id = last - events.length + 1 + i;
    if (this.localRunning.has(id)) this.committedHere.set(id, last);
    if (terminal) {
      this.forgetLocal(id);
      this.committedHere.delete(id);
      // Out of the running counts and into the finished index: the index slot, after the commit.
      // Should this instance die in between, recovery finds the finished stream still counted and
      // finishes the move.
      await this.release(id, String(result[2] ?? ''), now).catch(() => undefined);
    }
    return { ok: true, lastId: last };
  }

  /**
   * Redis came back without events this instance had committed (and maybe delivered): it
   * acknowledged writes it did not keep (an append-only file with `appendfsync everysec`, an
   * asynchronous replica promoted). The stream ends where Redis's history ends, with -32603
   * `Stream store lost events`, instead of going on under ids a client may have seen with other
   * events; the producer is told the stream ended.
   */
  private async endLost(id: string, has: number, committed: number, now: number): Promise<AppendOutcome> {
    this.logger.error(
      `Durable stream ${id}: Redis has ${has} of the ${committed} event(s) this instance committed — it lost acknowledged writes ` +
        '(appendfsync always keeps them across a restart); the stream ends with -32603 "Stream store lost events"',
    );
    await this.append(id, [{ id: 0, event: 'error', data: STORE_LOST_EVENTS_EVENT_DATA }], true, now).catch(() => undefined);
    return { ok: false, status: 'failed' };
  }

  /**
   * The record of a stream this instance runs is gone from Redis: a Redis restarted with none of
   * its data (no append-only file, or a fresh replica promoted). As with fewer events
   * (`endLost`), the stream ends with -32603 `Stream store lost events` rather than going on
   * under ids clients already saw — and its record is written again to hold that error (no events
   * before it, so the error is event 1), so a later attach or lookup reads how it ended instead of
   * a 404, and retention sweeps it like any finished stream. The producer is told the stream ended.
   */
  private async endVanished(created: NewDurableStream, committed: number, now: number): Promise<AppendOutcome> {
    const { id } = created;
    this.logger.error(
      `Durable stream ${id} (${created.method}): its record is gone from Redis (restarted without its data?) after this instance ` +
        `committed ${committed} event(s); the stream ends with -32603 "Stream store lost events"`,
    );
    try {
      await this.create({ ...created, limits: {} });
      this.forgetLocal(id);
      await this.append(id, [{ id: 0, event: 'error', data: STORE_LOST_EVENTS_EVENT_DATA }], true, now);
    } catch {
      // Unreachable again: the stream is gone either way; attached clients end on their own (see DurableSubscription).
      this.forgetLocal(id);
    }
    return { ok: false, status: 'failed' };
  }

  private forgetLocal(id: string): void {
    this.localRunning.delete(id);
    this.createdHere.delete(id);
  }

  async cancel(id: string, now: number): Promise<AppendOutcome> {
    const outcome = await this.append(id, [{ id: 0, event: 'cancelled', data: CANCELLED_EVENT_DATA }], true, now);
    if (outcome.ok) await this.command((redis) => redis.publish(this.keys.cancelChannel, id)).catch(() => undefined);
    return outcome;
  }

  async lookup(id: string): Promise<LookupOutcome> {
    const hash = await this.command((redis) => redis.hgetall(this.keys.meta(id)));
    if (hash.status) return { found: 'stream', record: toRecord(id, hash) };
    const tombstone = await this.command((redis) => redis.get(this.keys.tombstone(id)));
    if (tombstone === null) return { found: 'none' };
    const owner = tombstone.slice(1);
    return { found: 'expired', owner: owner === '' ? null : owner };
  }

  async read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]> {
    const entries = (await this.command((redis) => redis.xrange(this.keys.events(id), `${after + 1}-0`, '+', 'COUNT', limit))) as Array<
      [string, string[]]
    >;
    const events: DurableStreamEvent[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const [entryId, fields] = entries[i];
      events[i] = { id: parseInt(entryId, 10), event: fields[1] as DurableEventName, data: fields[3] };
    }
    return events;
  }

  async list(owner: string, status: DurableStreamStatus | undefined, limit: number): Promise<DurableStreamRecord[]> {
    const indexKey = this.keys.ownedBy(owner);
    const { members: ids, scores: createdAt } = withScores(await this.command((redis) => redis.zrevrange(indexKey, 0, limit - 1, 'WITHSCORES')));
    if (ids.length === 0) return [];
    // One command per stream (they live in different slots of a cluster).
    const hashes = await this.command((redis) => Promise.all(ids.map((id) => redis.hgetall(this.keys.meta(id)))));
    const records: DurableStreamRecord[] = [];
    const gone: string[] = [];
    const orphanBefore = Date.now() - ORPHAN_CLAIM_MS;
    hashes.forEach((h, i) => {
      // No metadata: swept (and the index not yet updated), or a start that died half-way — or
      // one being created right now, which is left alone.
      if (!h.status) {
        if (createdAt[i] < orphanBefore) gone.push(ids[i]);
      } else if (status === undefined || h.status === status) records.push(toRecord(ids[i], h));
    });
    if (gone.length) await this.command((redis) => redis.zrem(indexKey, ...gone)).catch(() => undefined);
    return records;
  }

  /**
   * Resolves once the listener is registered and its channel subscribed. While the pub/sub
   * connection is down the channel is only recorded: it is subscribed with the others when the
   * connection is back, before availability is announced.
   */
  async subscribe(id: string, listener: DurableEventListener): Promise<() => void> {
    const subscriber = this.subscriber;
    if (!subscriber) throw new Error('RedisStreamStore is not open');
    const name = this.keys.channel(id);
    let channel = this.channels.get(name);
    const fresh = !channel;
    if (!channel) {
      channel = { listeners: new Set() };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    if (fresh && subscriber.status === 'ready') {
      try {
        await subscriber.subscribe(name);
      } catch (error) {
        // Lost meanwhile: the channel stays recorded and is subscribed on reconnect.
        if (subscriber.status === 'ready') {
          channel.listeners.delete(listener);
          if (channel.listeners.size === 0 && this.channels.get(name) === channel) this.channels.delete(name);
          throw asStoreError(error);
        }
      }
    }
    const entry = channel;
    return () => {
      if (this.channels.get(name) !== entry) return;
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0) {
        this.channels.delete(name);
        if (this.subscriber?.status === 'ready') void this.subscriber.unsubscribe(name).catch(() => undefined);
      }
    };
  }

  onCancel(listener: (id: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  private readonly onMessage = (channelName: string, message: string): void => {
    if (channelName === this.keys.cancelChannel) {
      this.forgetLocal(message);
      this.committedHere.delete(message);
      for (const listener of this.cancelListeners) listener(message);
      return;
    }
    const channel = this.channels.get(channelName);
    if (!channel) return;
    // "<first id>\n<event>\t<data>\n<event>\t<data>..." (data is one line of JSON)
    const lines = message.split('\n');
    let id = parseInt(lines[0], 10);
    const events: DurableStreamEvent[] = new Array(lines.length - 1);
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      const tab = line.indexOf('\t');
      events[i - 1] = { id: id++, event: line.slice(0, tab) as DurableEventName, data: line.slice(tab + 1) };
    }
    for (const listener of channel.listeners) {
      try {
        listener(events);
      } catch {
        // isolated
      }
    }
  };

  /**
   * Streams whose instance's heartbeat has expired get the interrupted terminal event. Also runs
   * on every heartbeat, so a crashed instance's streams end within a few heartbeats — but not while
   * a connection is down, nor in the first 3 heartbeats after both connections came back: every
   * heartbeat may have lapsed during the outage, and live instances (maybe still reconnecting)
   * need a beat to show they are alive. Repairs the index too: a
   * finished stream still counted as running (its instance died between the commit and the
   * release) is released, and a claim without a stream (a start that died half-way) dropped.
   */
  async recoverInterrupted(localRunning: ReadonlySet<string>, now: number): Promise<string[]> {
    if (!this.available || Date.now() < this.recoveryHeldUntil) return [];
    const k = this.keys;
    const { members: ids, scores: claimedAt } = withScores(await this.command((redis) => redis.zrange(k.running, '0', '-1', 'WITHSCORES')));
    if (ids.length === 0) return [];
    const heads = await this.command((redis) => Promise.all(ids.map((id) => redis.hmget(k.meta(id), 'status', 'instance', 'owner', 'completed_at'))));
    const alive = new Map<string, boolean>([[this.instanceId, true]]);
    const recovered: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (localRunning.has(id) || this.localRunning.has(id)) continue;
      const [status, instance, owner, completedAt] = heads[i];
      if (status === null) {
        if (claimedAt[i] < now - ORPHAN_CLAIM_MS) {
          const claimOwner = await this.command((redis) => redis.hget(k.claims, id));
          await this.release(id, claimOwner ?? '', '');
        }
        continue;
      }
      if (status !== 'running') {
        await this.release(id, owner ?? '', Number(completedAt ?? now));
        continue;
      }
      if (instance) {
        if (!alive.has(instance)) alive.set(instance, (await this.command((redis) => redis.exists(k.heartbeat(instance)))) === 1);
        if (alive.get(instance)) continue;
      }
      const outcome = await this.append(id, [{ id: 0, event: 'error', data: INTERRUPTED_EVENT_DATA }], true, now);
      if (outcome.ok) {
        recovered.push(id);
        this.logger.warn(`Durable stream ${id} ended as interrupted: its instance ${instance ?? '(unknown)'} has not beaten for ${3 * this.heartbeatMs} ms`);
      }
    }
    return recovered;
  }

  async sweep(expiredBefore: number, forgetBefore: number): Promise<number> {
    const k = this.keys;
    let total = 0;
    for (;;) {
      const ids = await this.command((redis) => redis.zrangebyscore(k.finished, '-inf', `(${expiredBefore}`, 'LIMIT', 0, SWEEP_BATCH));
      if (ids.length === 0) return total;
      // Each stream in its own slot, then the index in its slot.
      const owners = (await Promise.all(ids.map((id) => this.run(SWEEP_ONE, [k.meta(id), k.events(id), k.tombstone(id)], [forgetBefore])))) as Array<
        string | null
      >;
      await this.run(UNINDEX, [k.finished, ...owners.map((owner) => k.ownedBy(owner ?? ''))], ids);
      total += owners.filter((owner) => owner !== null).length;
      if (ids.length < SWEEP_BATCH) return total;
    }
  }

  async checkHealth(): Promise<StreamStoreHealth> {
    const kind = (this.client as unknown as Cluster | undefined)?.isCluster ? 'redis-cluster' : 'redis';
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.command((redis) => redis.ping()),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no PONG within ${HEALTH_PROBE_TIMEOUT_MS} ms`)), HEALTH_PROBE_TIMEOUT_MS))),
      ]);
      return { up: this.available, kind, latencyMs: performance.now() - started, ...(this.available ? {} : { detail: 'pub/sub connection down' }) };
    } catch (error) {
      return { up: false, kind, latencyMs: performance.now() - started, detail: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Longest `open()` waits for a client the app passed in to connect. */
const OPEN_TIMEOUT_MS = 10_000;

/** Resolves once `client` is ready: connects a lazy one, waits (bounded) for one that is connecting. */
async function connected(client: RedisClient): Promise<void> {
  if (client.status === 'wait') return void (await client.connect());
  if (client.status === 'ready') return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      once(client, 'ready'),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new StreamStoreUnavailableError(`Redis not ready within ${OPEN_TIMEOUT_MS} ms (${client.status})`)), OPEN_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A sorted set read `WITHSCORES` (`[member, score, member, score, ...]`), split. */
function withScores(flat: string[]): { members: string[]; scores: number[] } {
  const members: string[] = [];
  const scores: number[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    members.push(flat[i]);
    scores.push(Number(flat[i + 1]));
  }
  return { members, scores };
}

function toRecord(id: string, h: Record<string, string>): DurableStreamRecord {
  return {
    id,
    method: h.method,
    owner: h.owner ? h.owner : null,
    status: h.status as DurableStreamStatus,
    events: Number(h.events),
    createdAt: Number(h.created_at),
    completedAt: h.completed_at ? Number(h.completed_at) : null,
    ...(h.updated_at && { updatedAt: Number(h.updated_at) }),
  };
}
