/**
 * Scaled out: two app instances on two ports sharing one Redis (RedisStreamStore) — the shared
 * Redis at REDIS_URL, and a private local Redis Cluster of three primaries started here. A stream
 * started on one is attached, resumed and cancelled through the other; a dead instance's streams
 * are recovered by a survivor. The single-node run needs Redis at REDIS_URL (default
 * redis://127.0.0.1:6379): skipped loudly without it, failed when REQUIRE_REDIS=1; the cluster run
 * needs redis-server and redis-cli.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { DurableStreamRunner, RedisStreamStore, type RedisStreamStoreOptions } from '@nest-jsonrpc/server';
import { describeWithRedis, REDIS_URL } from '../support/redis.js';
import { describeWithRedisServer } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { ClusterStores } from './support/cluster-store.js';
import { durableModule, feeds, headerAuth } from './support/durable-fixtures.js';
import { eventually, sleep } from '../support/async.js';
import { openSse } from './support/sse-client.js';

/*
 * No retries. Earlier builds retried this suite because an attach through the second instance sometimes
 * ended right after `retry:`. The cause was in DurableSubscription: a live event heard while the
 * subscription's first store read was in flight counted as "lost" when that read (begun before
 * the commit) came back without it. Fixed in durable/durable-subscription.ts; the unit spec next
 * to it reproduces the interleaving deterministically.
 */

/** One Redis deployment the suite runs on: how to start it, make a store, delete a key, clean up. */
interface RedisVariant {
  name: string;
  describe: jest.Describe;
  start(): Promise<void>;
  store(options: Omit<RedisStreamStoreOptions, 'url' | 'client' | 'keyPrefix'>): RedisStreamStore;
  del(key: string): Promise<void>;
  stop(): Promise<void>;
}

function singleNode(describeIt: jest.Describe): RedisVariant {
  const keyPrefix = `test:durable:${randomUUID()}:`;
  const stores: RedisStreamStore[] = [];
  return {
    name: 'one Redis node',
    describe: describeIt,
    start: async () => undefined,
    store: (options) => {
      const store = new RedisStreamStore({ url: REDIS_URL, keyPrefix, ...options });
      stores.push(store);
      return store;
    },
    async del(key) {
      const redis = new Redis(REDIS_URL);
      await redis.del(key);
      await redis.quit();
    },
    async stop() {
      for (const store of stores) await store.close();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${keyPrefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    },
  };
}

function cluster(): RedisVariant {
  const stores = new ClusterStores();
  return {
    name: 'a Redis Cluster',
    describe: describeWithRedisServer('the scaled-out durable stream tests on a Redis Cluster'),
    start: () => stores.start(),
    store: (options) => stores.store(options),
    async del(key) {
      const client = stores.client();
      await client.del(key);
      client.disconnect();
    },
    stop: () => stores.stop(),
  };
}

const VARIANTS = [singleNode(await describeWithRedis('the scaled-out durable stream tests')), cluster()];

for (const variant of VARIANTS) variant.describe(`durable streams scaled out over ${variant.name} (two instances)`, () => {
  let a: TestApp;
  let b: TestApp;
  let storeA: RedisStreamStore;
  let storeB: RedisStreamStore;
  let keyPrefix: string;

  beforeAll(async () => {
    await variant.start();
    // Heartbeats every second: an instance is presumed dead after 3 s, which a loaded CI machine
    // never stalls for (200 ms heartbeats made a busy moment look like a dead instance).
    storeA = variant.store({ heartbeatMs: 1000, fanOutRecheckMs: 1000 });
    storeB = variant.store({ heartbeatMs: 1000, fanOutRecheckMs: 1000 });
    keyPrefix = (storeA as unknown as { keys: { prefix: string } }).keys.prefix;
    a = await startTestApp(durableModule({ durable: { enabled: true, store: storeA, maxRunning: { perUser: 2 } } }), headerAuth);
    b = await startTestApp(durableModule({ durable: { enabled: true, store: storeB, maxRunning: { perUser: 2 } } }), headerAuth);
  }, 60_000);
  afterAll(async () => {
    for (const f of feeds.values()) f.end();
    await a?.close();
    await b?.close();
    await variant.stop();
  });

  /** `it`, with both instances' warnings and errors added to a failure's message. */
  const itWithLogs = (name: string, body: () => Promise<void>, timeout?: number) =>
    it(
      name,
      async () => {
        try {
          await body();
        } catch (error) {
          const logs = `instance A:\n${a.logger.text('warn')}\n${a.logger.text('error')}\ninstance B:\n${b.logger.text('warn')}\n${b.logger.text('error')}`;
          if (error instanceof Error) error.message += `\n--- logs ---\n${logs}`;
          throw error;
        }
      },
      timeout,
    );

  const start = async (t: TestApp, method: string, params?: unknown, headers: Record<string, string> = {}) => {
    const res = await t.rpc({ jsonrpc: '2.0', method, params, id: 1 }, { headers });
    if (!res.body.result) throw new Error(JSON.stringify(res.body));
    return res.body.result.stream_id as string;
  };
  const events = async (t: TestApp, id: string, headers: Record<string, string> = {}) =>
    ((await (await fetch(`${t.url}/rpc/streams/${id}/events?limit=1000`, { headers })).json()) as any).events as Array<{ id: number; event: string; data: any }>;

  itWithLogs('a stream started on A is attached through B (replay then live), and resumed through A', async () => {
    const id = await start(a, 'jobs.manual', undefined, { 'x-user': 'ann' });
    const feed = await eventually(() => feeds.get(id));
    feed.push({ n: 1 }, { n: 2 }, { n: 3 });
    await eventually(async () => (await events(b, id, { 'x-user': 'ann' })).length === 3);
    const viaB = await openSse(`${b.url}/rpc/streams/${id}`, { headers: { 'x-user': 'ann' } });
    await viaB.waitForEvents(3);
    feed.push({ n: 4 }, { n: 5 });
    await viaB.waitForEvents(5);
    viaB.close(); // a network drop
    feed.push({ n: 6 });
    const resumed = await openSse(`${a.url}/rpc/streams/${id}`, { headers: { 'x-user': 'ann', 'last-event-id': '5' } });
    await resumed.waitForEvents(1);
    expect(resumed.events[0]).toEqual({ id: '6', event: 'chunk', data: '{"n":6}' });
    feed.end();
    await resumed.ended;
    expect(viaB.events.map((e) => e.data)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":5}']);
    expect(resumed.events.map((e) => [e.id, e.event])).toEqual([['6', 'chunk'], ['7', 'done']]);
    expect((await fetch(`${b.url}/rpc/streams/${id}`, { headers: { 'x-user': 'ann', 'last-event-id': '7' } })).status).toBe(204);
    // Ownership holds across instances.
    expect((await fetch(`${b.url}/rpc/streams/${id}`, { headers: { 'x-user': 'bo' } })).status).toBe(404);
    const list = (await (await fetch(`${b.url}/rpc/streams?status=completed`, { headers: { 'x-user': 'ann' } })).json()) as any;
    expect(list.streams.map((s: any) => [s.stream_id, s.status, s.events])).toEqual([[id, 'completed', 7]]);
  });

  itWithLogs('commits whose pub/sub messages are lost (nothing later shows the gap) still reach a silent subscriber: it re-reads after fanOutRecheckMs', async () => {
    const id = await start(a, 'jobs.manual', undefined, { 'x-user': 'cy' });
    const feed = await eventually(() => feeds.get(id));
    feed.push({ n: 1 });
    const viaB = await openSse(`${b.url}/rpc/streams/${id}`, { headers: { 'x-user': 'cy' } });
    await viaB.waitForEvents(1);
    // From now on A publishes this stream's commits where nobody listens: the messages are lost.
    const keys = (storeA as unknown as { keys: { channel(id: string): string } }).keys;
    const channel = keys.channel;
    keys.channel = (streamId) => (streamId === id ? `${channel.call(keys, streamId)}:nowhere` : channel.call(keys, streamId));
    try {
      feed.push({ n: 2 });
      feed.end();
      let ended = false;
      void viaB.ended.then(() => (ended = true));
      // One re-check interval (1 s) of silence, then the read; bounded well above it.
      await eventually(() => ended, 10_000, "B's subscriber to get the stream's end", () => JSON.stringify(viaB.events));
    } finally {
      keys.channel = channel;
    }
    expect(viaB.events.map((e) => [e.id, e.event, e.data])).toEqual([
      ['1', 'chunk', '{"n":1}'],
      ['2', 'chunk', '{"n":2}'],
      ['3', 'done', '{}'],
    ]);
  });

  it('two subscribers on different instances see identical sequences of a fast stream', async () => {
    const id = await start(a, 'jobs.count', { n: 2000 });
    const [x, y] = await Promise.all([openSse(`${a.url}/rpc/streams/${id}`), openSse(`${b.url}/rpc/streams/${id}`)]);
    await Promise.all([x.ended, y.ended]);
    expect(x.events).toHaveLength(2001);
    expect(x.raw).toBe(y.raw);
    expect(x.events.every((e, k) => e.id === String(k + 1))).toBe(true);
  });

  itWithLogs('a DELETE through B cancels the producer running on A', async () => {
    const id = await start(a, 'jobs.manual', undefined, { 'x-user': 'cy' });
    const feed = await eventually(() => feeds.get(id));
    const watcher = await openSse(`${a.url}/rpc/streams/${id}`, { headers: { 'x-user': 'cy' } });
    feed.push({ k: 1 });
    await watcher.waitForEvents(1);
    const [first, second] = await Promise.all([
      fetch(`${b.url}/rpc/streams/${id}`, { method: 'DELETE', headers: { 'x-user': 'cy' } }),
      fetch(`${b.url}/rpc/streams/${id}`, { method: 'DELETE', headers: { 'x-user': 'cy' } }),
    ]);
    expect([await first.json(), await second.json()]).toEqual([{ stream_id: id, status: 'cancelled' }, { stream_id: id, status: 'cancelled' }]);
    await watcher.ended;
    expect(watcher.events.map((e) => [e.id, e.event])).toEqual([['1', 'chunk'], ['2', 'cancelled']]);
    await eventually(() => feed.aborted && feed.finallyRan, 2000, 'A to abort the producer');
    await eventually(() => a.app.get(DurableStreamRunner).runningHere === 0, 2000, 'A to release the run');
    feed.push({ late: true });
    await sleep(50);
    expect((await events(b, id, { 'x-user': 'cy' })).map((e) => e.event)).toEqual(['chunk', 'cancelled']);
  });

  it('maxRunning.perUser counts a user\'s streams on every instance', async () => {
    const user = { 'x-user': 'dee' };
    const one = await start(a, 'jobs.manual', undefined, user);
    const two = await start(b, 'jobs.manual', undefined, user);
    const over = await a.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 5 }, { headers: user });
    expect(over.body.error).toEqual({ code: -32003, message: 'Too many running durable streams: the limit is 2 per user', data: { limit: 2 } });
    (await eventually(() => feeds.get(one))).end();
    (await eventually(() => feeds.get(two))).end();
    await eventually(async () => (await events(a, one, user)).at(-1)?.event === 'done');
    // A slot is given back one round trip after the terminal event is committed (docs/durable.md, Redis Cluster).
    await eventually(async () => (await a.rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: 1 }, id: 1 }, { headers: user })).body.result, 2000);
  });

  it('maxRunning is exact under concurrent starts on both instances: 10 at once, exactly 2 run', async () => {
    const user = { 'x-user': 'eve' };
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, k) => (k % 2 ? a : b).rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: k }, { headers: user })),
    );
    const started = answers.filter((r) => r.body.result).map((r) => r.body.result.stream_id as string);
    const refused = answers.filter((r) => r.body.error).map((r) => r.body.error.code);
    expect([started.length, refused]).toEqual([2, Array(8).fill(-32003)]);
    for (const id of started) (await eventually(() => feeds.get(id))).end();
    for (const id of started) await eventually(async () => (await events(a, id, user)).at(-1)?.event === 'done');
    // The slots are free again (released after the terminal commit).
    await eventually(async () => (await a.rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: 1 }, id: 1 }, { headers: user })).body.result, 2000);
  });

  it('a dead instance\'s running streams are ended as interrupted by a survivor', async () => {
    // A third instance whose process "dies": its heartbeat stops and it never writes again.
    const storeC = variant.store({ heartbeatMs: 1000 });
    const c = await startTestApp(durableModule({ durable: { enabled: true, store: storeC } }));
    const id = await start(c, 'jobs.manual');
    const feed = await eventually(() => feeds.get(id));
    feed.push({ before: 'death' });
    await eventually(async () => (await events(a, id)).length === 1);
    const watcher = await openSse(`${a.url}/rpc/streams/${id}`);
    await watcher.waitForEvents(1);
    // Simulate the crash: stop the heartbeat and drop the key, without any shutdown writes.
    clearInterval((storeC as any).heartbeatTimer);
    await variant.del(`${keyPrefix}i:${storeC.instanceId}`);
    await watcher.ended; // within a few heartbeats of A or B
    expect(watcher.events.map((e) => [e.id, e.event, e.data])).toEqual([
      ['1', 'chunk', '{"before":"death"}'],
      ['2', 'error', '{"error":{"code":-32603,"message":"Stream interrupted"}}'],
    ]);
    // The "dead" process's producer finds its stream ended and stops writing.
    feed.push({ after: 'death' });
    await eventually(() => c.app.get(DurableStreamRunner).runningHere === 0, 3000, 'C to notice');
    expect((await events(a, id)).map((e) => e.event)).toEqual(['chunk', 'error']);
    await c.close();
  });
});
