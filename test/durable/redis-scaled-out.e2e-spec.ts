/**
 * Scaled out: two app instances on two ports sharing one Redis (RedisStreamStore). A stream
 * started on one is attached, resumed and cancelled through the other; a dead instance's streams
 * are recovered by a survivor. Needs Redis at REDIS_URL (default redis://127.0.0.1:6379): skipped
 * loudly without it, failed when REQUIRE_REDIS=1.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { DurableStreamService, RedisStreamStore } from '@nest-jsonrpc/server';
import { describeWithRedis, REDIS_URL } from '../support/redis.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { durableModule, feeds, headerAuth } from './support/durable-fixtures.js';
import { eventually, sleep } from '../support/async.js';
import { openSse } from './support/sse-client.js';

const describeRedis = await describeWithRedis('the scaled-out durable stream tests');

/*
 * No retries. Wave 1 retried this suite because an attach through the second instance sometimes
 * ended right after `retry:`. The cause was in DurableSubscription: a live event heard while the
 * subscription's first store read was in flight counted as "lost" when that read (begun before
 * the commit) came back without it. Fixed in durable/durable-subscription.ts; the unit spec next
 * to it reproduces the interleaving deterministically.
 */

describeRedis('durable streams scaled out over Redis (two instances)', () => {
  const keyPrefix = `test:durable:${randomUUID()}:`;
  let a: TestApp;
  let b: TestApp;
  // Heartbeats every second: an instance is presumed dead after 3 s, which a loaded CI machine
  // never stalls for (200 ms heartbeats made a busy moment look like a dead instance).
  const storeA = new RedisStreamStore({ url: REDIS_URL, keyPrefix, heartbeatMs: 1000 });
  const storeB = new RedisStreamStore({ url: REDIS_URL, keyPrefix, heartbeatMs: 1000 });

  beforeAll(async () => {
    a = await startTestApp(durableModule({ durable: { enabled: true, store: storeA, maxRunning: { perUser: 2 } } }), headerAuth);
    b = await startTestApp(durableModule({ durable: { enabled: true, store: storeB, maxRunning: { perUser: 2 } } }), headerAuth);
  });
  afterAll(async () => {
    for (const f of feeds.values()) f.end();
    await a?.close();
    await b?.close();
    await storeA.close();
    await storeB.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
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
    await eventually(() => a.app.get(DurableStreamService).runningHere === 0, 2000, 'A to release the run');
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
    await start(a, 'jobs.count', { n: 1 }, user);
  });

  it('a dead instance\'s running streams are ended as interrupted by a survivor', async () => {
    // A third instance whose process "dies": its heartbeat stops and it never writes again.
    const storeC = new RedisStreamStore({ url: REDIS_URL, keyPrefix, heartbeatMs: 1000 });
    const c = await startTestApp(durableModule({ durable: { enabled: true, store: storeC } }));
    const id = await start(c, 'jobs.manual');
    const feed = await eventually(() => feeds.get(id));
    feed.push({ before: 'death' });
    await eventually(async () => (await events(a, id)).length === 1);
    const watcher = await openSse(`${a.url}/rpc/streams/${id}`);
    await watcher.waitForEvents(1);
    // Simulate the crash: stop the heartbeat and drop the key, without any shutdown writes.
    clearInterval((storeC as any).heartbeatTimer);
    const redis = new Redis(REDIS_URL);
    await redis.del(`${keyPrefix}i:${storeC.instanceId}`);
    await redis.quit();
    await watcher.ended; // within a few heartbeats of A or B
    expect(watcher.events.map((e) => [e.id, e.event, e.data])).toEqual([
      ['1', 'chunk', '{"before":"death"}'],
      ['2', 'error', '{"error":{"code":-32603,"message":"Stream interrupted"}}'],
    ]);
    // The "dead" process's producer finds its stream ended and stops writing.
    feed.push({ after: 'death' });
    await eventually(() => c.app.get(DurableStreamService).runningHere === 0, 3000, 'C to notice');
    expect((await events(a, id)).map((e) => e.event)).toEqual(['chunk', 'error']);
    await c.close();
    await storeC.close();
  });
});
