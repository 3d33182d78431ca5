import { createHash, randomUUID } from 'node:crypto';
import type { Redis, RedisOptions } from 'ioredis';
import {
  CANCELLED_EVENT_DATA,
  INTERRUPTED_EVENT_DATA,
  STATUS_OF_TERMINAL,
  type DurableEventName,
  type DurableStreamEvent,
  type DurableStreamStatus,
  type DurableTerminalEventName,
} from '@nest-jsonrpc/protocol';
import type {
  AppendOutcome,
  DurableStreamRecord,
  CreateOutcome,
  DurableEventListener,
  LookupOutcome,
  NewDurableStream,
  PendingDurableEvent,
  StreamStore,
} from './stream-store.js';

export interface RedisStreamStoreOptions {
  /** `redis://...`; a connection is opened (and closed with the app). */
  url?: string;
  /** An existing ioredis client: used for commands, duplicated for pub/sub, never closed by us. */
  client?: Redis;
  /** Extra ioredis options when connecting from `url`. */
  redisOptions?: RedisOptions;
  /** Prefix of every key and channel. Instances serving one API must share it. Default `nest-jsonrpc:durable:`. */
  keyPrefix?: string;
  /** How often this instance proves it is alive, in ms. Default 5000; it is presumed dead after 3x that. */
  heartbeatMs?: number;
}

// All scripts touch keys derived from the stream's owner inside Lua: one Redis node (or a
// primary/replica pair), not Redis Cluster.
const CREATE_LUA = `
if ARGV[6] ~= '' and redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[6]) then return {0, 'total', ARGV[6]} end
if ARGV[7] ~= '' and redis.call('SCARD', KEYS[3]) >= tonumber(ARGV[7]) then return {0, 'perUser', ARGV[7]} end
redis.call('HSET', KEYS[1], 'method', ARGV[2], 'owner', ARGV[3], 'status', 'running', 'events', 0, 'created_at', ARGV[4], 'instance', ARGV[5])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1]) end
return {1}
`;

// KEYS: meta, events, running, finished, channel
// ARGV: id, terminal status or '', now, fan-out payload tail, key prefix, then event/data pairs
const APPEND_LUA = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {0, 'missing'} end
if status ~= 'running' then return {0, status} end
local last = tonumber(redis.call('HGET', KEYS[1], 'events'))
local first = last + 1
for i = 6, #ARGV, 2 do
  last = last + 1
  redis.call('XADD', KEYS[2], last .. '-0', 'e', ARGV[i], 'd', ARGV[i + 1])
end
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[1], 'events', last, 'status', ARGV[2], 'completed_at', ARGV[3])
  redis.call('SREM', KEYS[3], ARGV[1])
  redis.call('SREM', ARGV[5] .. 'running:u:' .. redis.call('HGET', KEYS[1], 'owner'), ARGV[1])
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
elseif last >= first then
  redis.call('HSET', KEYS[1], 'events', last)
end
if last >= first then redis.call('PUBLISH', KEYS[5], first .. ARGV[4]) end
return {1, last}
`;

// KEYS: finished. ARGV: expiredBefore, forgetBefore, prefix
const SWEEP_LUA = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, 500)
for _, id in ipairs(ids) do
  local meta = ARGV[3] .. 's:' .. id
  local owner = redis.call('HGET', meta, 'owner') or ''
  local completed = tonumber(redis.call('HGET', meta, 'completed_at') or ARGV[1])
  redis.call('DEL', meta, ARGV[3] .. 'e:' .. id)
  redis.call('ZREM', KEYS[1], id)
  if owner ~= '' then redis.call('ZREM', ARGV[3] .. 'o:' .. owner, id) end
  local ttl = completed - tonumber(ARGV[2])
  if ttl > 0 then redis.call('SET', ARGV[3] .. 't:' .. id, 'u' .. owner, 'PX', ttl) end
end
return #ids
`;

interface Script {
  lua: string;
  sha: string;
}
const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });
const CREATE = script(CREATE_LUA);
const APPEND = script(APPEND_LUA);
const SWEEP = script(SWEEP_LUA);

type Channel = { listeners: Set<DurableEventListener>; ready: Promise<unknown> };

/**
 * Durable streams in Redis, for several app instances serving one API: each stream's events are a
 * Redis Stream (entry ids `<n>-0`), its metadata a hash, and every commit is one Lua script that
 * checks the stream still runs, appends, and PUBLISHes the events — so fan-out to every instance
 * follows the commit, in commit order. Cancellation is a pub/sub message to all instances; the one
 * running the producer aborts it. Instances keep a heartbeat key; streams of an instance whose
 * heartbeat expired are ended with the "Stream interrupted" error by the survivors.
 */
export class RedisStreamStore implements StreamStore {
  /** This instance's id in heartbeat keys and stream metadata. */
  readonly instanceId = randomUUID();
  private readonly prefix: string;
  private readonly heartbeatMs: number;
  private client: Redis | undefined;
  private subscriber: Redis | undefined;
  private ownsClient = false;
  private readonly channels = new Map<string, Channel>();
  private readonly cancelListeners = new Set<(id: string) => void>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly localRunning = new Set<string>();

  constructor(private readonly options: RedisStreamStoreOptions) {
    if (!options || (!options.url && !options.client)) throw new Error('RedisStreamStore needs { url } or { client }');
    this.prefix = options.keyPrefix ?? 'nest-jsonrpc:durable:';
    this.heartbeatMs = options.heartbeatMs ?? 5000;
  }

  async open(): Promise<void> {
    if (this.client) return;
    const { Redis } = await import('ioredis');
    let client = this.options.client;
    if (!client) {
      client = new Redis(this.options.url!, { lazyConnect: true, ...this.options.redisOptions });
      this.ownsClient = true;
      await client.connect();
    }
    this.client = client;
    const subscriber = client.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', this.onMessage);
    await subscriber.subscribe(this.cancelChannel);
    await this.beat();
    this.heartbeatTimer = setInterval(() => {
      void this.beat().then(() => this.recoverInterrupted(this.localRunning, Date.now())).catch(() => undefined);
    }, this.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  async close(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    const client = this.client;
    const subscriber = this.subscriber;
    this.client = undefined;
    this.subscriber = undefined;
    this.channels.clear();
    this.cancelListeners.clear();
    if (subscriber) subscriber.disconnect();
    if (client) {
      await client.del(this.heartbeatKey).catch(() => undefined);
      if (this.ownsClient) await client.quit().catch(() => client.disconnect());
    }
  }

  private get redis(): Redis {
    if (!this.client) throw new Error('RedisStreamStore is not open');
    return this.client;
  }

  private get cancelChannel(): string {
    return `${this.prefix}cancel`;
  }

  private get heartbeatKey(): string {
    return `${this.prefix}i:${this.instanceId}`;
  }

  private beat(): Promise<unknown> {
    return this.redis.set(this.heartbeatKey, '1', 'PX', this.heartbeatMs * 3);
  }

  private async run(s: Script, keys: string[], args: Array<string | number>): Promise<any> {
    try {
      return await this.redis.evalsha(s.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return this.redis.eval(s.lua, keys.length, ...keys, ...args);
      throw error;
    }
  }

  async create(stream: NewDurableStream): Promise<CreateOutcome> {
    const p = this.prefix;
    const owner = stream.owner ?? '';
    const result = await this.run(
      CREATE,
      [`${p}s:${stream.id}`, `${p}running`, `${p}running:u:${owner}`, `${p}o:${owner}`],
      [stream.id, stream.method, owner, stream.createdAt, this.instanceId, stream.limits.total ?? '', stream.limits.perUser ?? ''],
    );
    if (result[0] === 1) {
      this.localRunning.add(stream.id);
      return { ok: true };
    }
    return { ok: false, scope: result[1], limit: Number(result[2]) };
  }

  async append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number): Promise<AppendOutcome> {
    const p = this.prefix;
    const status = terminal ? STATUS_OF_TERMINAL[events[events.length - 1].event as DurableTerminalEventName] : '';
    const args: Array<string | number> = [id, status, now, '', p];
    let payload = '';
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      payload += `\n${e.event}\t${e.data}`;
      args.push(e.event, e.data);
    }
    args[3] = payload;
    const result = await this.run(APPEND, [`${p}s:${id}`, `${p}e:${id}`, `${p}running`, `${p}finished`, `${p}ev:${id}`], args);
    if (result[0] !== 1) {
      this.localRunning.delete(id);
      return { ok: false, status: result[1] };
    }
    const last = Number(result[1]);
    for (let i = 0; i < events.length; i++) events[i].id = last - events.length + 1 + i;
    if (terminal) this.localRunning.delete(id);
    return { ok: true, lastId: last };
  }

  async cancel(id: string, now: number): Promise<AppendOutcome> {
    const outcome = await this.append(id, [{ id: 0, event: 'cancelled', data: CANCELLED_EVENT_DATA }], true, now);
    if (outcome.ok) await this.redis.publish(this.cancelChannel, id);
    return outcome;
  }

  async lookup(id: string): Promise<LookupOutcome> {
    const hash = await this.redis.hgetall(`${this.prefix}s:${id}`);
    if (hash.status) return { found: 'stream', record: toRecord(id, hash) };
    const tombstone = await this.redis.get(`${this.prefix}t:${id}`);
    if (tombstone === null) return { found: 'none' };
    const owner = tombstone.slice(1);
    return { found: 'expired', owner: owner === '' ? null : owner };
  }

  async read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]> {
    const entries = (await this.redis.xrange(`${this.prefix}e:${id}`, `${after + 1}-0`, '+', 'COUNT', limit)) as Array<[string, string[]]>;
    const events: DurableStreamEvent[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const [entryId, fields] = entries[i];
      events[i] = { id: parseInt(entryId, 10), event: fields[1] as DurableEventName, data: fields[3] };
    }
    return events;
  }

  async list(owner: string, status: DurableStreamStatus | undefined, limit: number): Promise<DurableStreamRecord[]> {
    const indexKey = `${this.prefix}o:${owner}`;
    const ids = await this.redis.zrevrange(indexKey, 0, limit - 1);
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(`${this.prefix}s:${id}`);
    const replies = (await pipeline.exec()) ?? [];
    const records: DurableStreamRecord[] = [];
    const gone: string[] = [];
    replies.forEach(([error, hash], i) => {
      const h = hash as Record<string, string> | undefined;
      if (error || !h || !h.status) gone.push(ids[i]);
      else if (status === undefined || h.status === status) records.push(toRecord(ids[i], h));
    });
    if (gone.length) await this.redis.zrem(indexKey, ...gone);
    return records;
  }

  async subscribe(id: string, listener: DurableEventListener): Promise<() => void> {
    const subscriber = this.subscriber;
    if (!subscriber) throw new Error('RedisStreamStore is not open');
    const name = `${this.prefix}ev:${id}`;
    let channel = this.channels.get(name);
    if (!channel) {
      channel = { listeners: new Set(), ready: subscriber.subscribe(name) };
      this.channels.set(name, channel);
    }
    channel.listeners.add(listener);
    try {
      await channel.ready;
    } catch (error) {
      if (this.channels.get(name) === channel) this.channels.delete(name);
      throw error;
    }
    const entry = channel;
    return () => {
      if (this.channels.get(name) !== entry) return;
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0) {
        this.channels.delete(name);
        void this.subscriber?.unsubscribe(name).catch(() => undefined);
      }
    };
  }

  onCancel(listener: (id: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  private readonly onMessage = (channelName: string, message: string): void => {
    if (channelName === this.cancelChannel) {
      this.localRunning.delete(message);
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
   * on every heartbeat, so a crashed instance's streams end within a few heartbeats.
   */
  async recoverInterrupted(localRunning: ReadonlySet<string>, now: number): Promise<string[]> {
    const redis = this.redis;
    const running = await redis.smembers(`${this.prefix}running`);
    if (running.length === 0) return [];
    const owners = await Promise.all(running.map((id) => redis.hget(`${this.prefix}s:${id}`, 'instance')));
    const alive = new Map<string, boolean>([[this.instanceId, true]]);
    const recovered: string[] = [];
    for (let i = 0; i < running.length; i++) {
      const id = running[i];
      const instance = owners[i];
      if (localRunning.has(id) || this.localRunning.has(id)) continue;
      if (instance) {
        if (!alive.has(instance)) alive.set(instance, (await redis.exists(`${this.prefix}i:${instance}`)) === 1);
        if (alive.get(instance)) continue;
      }
      const outcome = await this.append(id, [{ id: 0, event: 'error', data: INTERRUPTED_EVENT_DATA }], true, now);
      if (outcome.ok) recovered.push(id);
      // A running-set member without metadata is debris: drop it.
      else if (outcome.status === 'missing') await redis.srem(`${this.prefix}running`, id);
    }
    return recovered;
  }

  async sweep(expiredBefore: number, forgetBefore: number): Promise<number> {
    let total = 0;
    for (;;) {
      const n = Number(await this.run(SWEEP, [`${this.prefix}finished`], [expiredBefore, forgetBefore, this.prefix]));
      total += n;
      if (n < 500) return total;
    }
  }
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
  };
}
