/**
 * Durable streams when Redis goes away and comes back: a private `redis-server` (append-only, on a
 * free port) is killed with SIGKILL under a live stream and restarted on the same data inside the
 * test. What must hold: the app stays up and logs one warning per lost connection and one line when
 * it is back (never ioredis's "Unhandled error event"); a start during the outage answers -32603
 * `Stream store unavailable` within `storeTimeoutMs`, the REST routes 503 + Retry-After; the
 * attached client catches up after the outage with no gap and no duplicate, promptly; past
 * `outageGraceMs` it gets the id-less terminal frame instead and resumes with Last-Event-ID; a
 * producer buffers up to `maxBufferedEvents`, then its stream fails with -32603; nothing stored is
 * lost or renumbered.
 */
import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Redis } from 'ioredis';
import { JsonRpcClient } from '@nest-jsonrpc/client';
import { RedisStreamStore, RpcMethod, RpcStream, type RpcContext } from '@nest-jsonrpc/server';
import { eventually, sleep } from '../support/async.js';
import { CuttableProxy, describeWithRedisServer, PrivateRedis } from '../support/redis-server.js';
import { startTestApp, type TestApp } from '../support/rpc-test-app.js';
import { durableModule } from './support/durable-fixtures.js';
import { openSse } from './support/sse-client.js';

@Injectable()
class Tickers {
  /** `{n}` from 1, one every `everyMs`, until the stream's signal aborts (cancel, shutdown, buffer bound). */
  @RpcMethod('tick')
  @RpcStream({ durable: true })
  async *tick(params: { everyMs: number }, ctx: RpcContext) {
    for (let n = 1; !ctx.signal.aborted; n++) {
      yield { n };
      await sleep(params.everyMs);
    }
  }

  @RpcMethod('ping')
  ping() {
    return 'pong';
  }
}

const STORE_UNAVAILABLE = { code: -32603, message: 'Stream store unavailable' };

const describeOutage = describeWithRedisServer('the Redis outage tests');

/** Records what reaches the console (ioredis prints "Unhandled error event" through console.error), passing it on. */
function watchConsole(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const levels = ['error', 'warn', 'log'] as const;
  const originals = levels.map((level) => console[level]);
  levels.forEach((level, i) => {
    console[level] = (...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
      originals[i].apply(console, args);
    };
  });
  return { lines, restore: () => levels.forEach((level, i) => (console[level] = originals[i])) };
}

/** Every chunk's `n` equals its id, ids run 1..k with no gap or repeat, and the last one is `terminal`. */
function expectConsecutive(events: Array<{ id: string | undefined; event: string | undefined; data: string }>, terminal?: string): void {
  events.forEach((e, k) => expect(e.id).toBe(String(k + 1)));
  const chunks = terminal ? events.slice(0, -1) : events;
  chunks.forEach((e, k) => expect([e.event, JSON.parse(e.data)]).toEqual(['chunk', { n: k + 1 }]));
  if (terminal) expect(events.at(-1)!.event).toBe(terminal);
}

describeOutage('durable streams on Redis: Redis killed (SIGKILL) and restarted under a live stream', () => {
  let redis: PrivateRedis;
  let app: TestApp;
  let store: RedisStreamStore;
  let console_: ReturnType<typeof watchConsole>;
  const keyPrefix = `outage:${randomUUID()}:`;

  const start = async (params: unknown) => {
    const answer = await app.rpc({ jsonrpc: '2.0', method: 'tick', params, id: 1 });
    if (!answer.body.result) throw new Error(JSON.stringify(answer.body));
    return answer.body.result.stream_id as string;
  };
  const stored = async (id: string) => {
    const all: Array<{ id: number; event: string; data: unknown }> = [];
    for (;;) {
      const page = (await (await fetch(`${app.url}/rpc/streams/${id}/events?after=${all.length}&limit=1000`)).json()) as any;
      all.push(...page.events);
      if (page.events.length < 1000) return all;
    }
  };

  beforeAll(async () => {
    console_ = watchConsole();
    redis = await PrivateRedis.start();
    // No re-check of silent subscribers: these tests show the catch-up after an outage on its own.
    store = new RedisStreamStore({ url: redis.url, keyPrefix, heartbeatMs: 1000, fanOutRecheckMs: 0 });
  });
  afterEach(async () => {
    await app?.close();
    if (!redis.running) await redis.restart();
  });
  afterAll(async () => {
    await store?.close();
    await redis?.stop();
    console_?.restore();
    // Not once in the whole file, whatever the outage.
    expect(console_.lines.filter((l) => l.includes('Unhandled error event'))).toEqual([]);
  });

  it('20 s outage: the app stays up, starts answer -32603 within 3 s, routes 503, the client catches up within 1 s with no gap or repeat', async () => {
    app = await startTestApp(durableModule({ durable: { enabled: true, store } }, [Tickers]));
    const id = await start({ everyMs: 20 });
    const client = await openSse(`${app.url}/rpc/streams/${id}`);
    await client.waitForEvents(20);

    await redis.kill();
    const killedAt = Date.now();
    const seenAtKill = client.events.length;

    // A start during the outage answers within the bound (storeTimeoutMs, default 2000) — at once,
    // in fact, since the store knows its connection is down.
    const startedAt = Date.now();
    const refused = await app.rpc({ jsonrpc: '2.0', method: 'tick', params: { everyMs: 20 }, id: 7 });
    expect(Date.now() - startedAt).toBeLessThan(3000);
    expect(refused.body).toEqual({ jsonrpc: '2.0', error: STORE_UNAVAILABLE, id: 7 });
    // The REST routes: 503, Retry-After, the routes' error shape.
    for (const path of [`/rpc/streams/${id}`, `/rpc/streams/${id}/events`]) {
      const res = await fetch(app.url + path);
      expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([503, '3', { error: STORE_UNAVAILABLE }]);
    }
    // Plain calls keep working.
    expect((await app.rpc({ jsonrpc: '2.0', method: 'ping', id: 2 })).body).toEqual({ jsonrpc: '2.0', result: 'pong', id: 2 });

    await sleep(20_000 - (Date.now() - killedAt));
    // Nothing reached the client while Redis was gone (fan-out follows the commit) — and the
    // response is still open (keep-alives aside).
    expect(client.events.length).toBe(seenAtKill);
    // From the moment Redis is back (answers PING, its file loaded) to the client's next event
    // (0 when the app was back before this probe).
    await redis.restart();
    const backAt = Date.now();
    await client.waitFor((s) => s.events.length > seenAtKill, 5000);
    const catchUpMs = Date.now() - backAt;
    // The speed goal (≤ 1 s) is measured by `npm run bench -- --only chaos`; here the bound tells a
    // catch-up driven by the reconnect (hundreds of ms) from one that waits for a heartbeat (5 s)
    // or a client's reconnect (3 s), with room for a loaded CI (1,079 ms seen on its second pass).
    expect(catchUpMs).toBeLessThanOrEqual(2000);

    // The producer's rows of the outage were buffered and committed: the stream goes on from where it was.
    await client.waitFor((s) => s.events.length >= seenAtKill + 200, 10_000);
    expect((await fetch(`${app.url}/rpc/streams/${id}`, { method: 'DELETE' })).status).toBe(200);
    await client.ended;
    expectConsecutive(client.events, 'cancelled');
    const all = await stored(id);
    expect(all.map((e) => String(e.id))).toEqual(client.events.map((e) => e.id));
    // A fresh attach from the start gets exactly the same events.
    const replay = await openSse(`${app.url}/rpc/streams/${id}`, { headers: { 'last-event-id': '0' } });
    await replay.ended;
    expect(replay.raw.replace(/^retry: \d+\n\n/, '')).toBe(client.raw.replace(/^retry: \d+\n\n/, '').replace(/^:\n\n/gm, ''));

    // One warning per lost connection, one line when it is back; nothing at error level.
    const warnings = app.logger.lines.filter((l) => l.level === 'warn' && l.message.startsWith('Redis connection'));
    expect(warnings.map((l) => l.message.replace(/: .*/, ''))).toEqual(
      expect.arrayContaining(['Redis connection for durable streams lost', 'Redis connection for durable stream fan-out lost']),
    );
    expect(warnings).toHaveLength(2);
    const back = app.logger.lines.filter((l) => l.level === 'log' && /^Redis connection for .* is back$/.test(l.message));
    expect(back).toHaveLength(2);
    expect(app.logger.text('error')).toBe('');
    console.info(`redis-outage: caught up ${catchUpMs} ms after Redis was back (20 s outage)`);
  }, 60_000);

  it('past outageGraceMs the attached client gets the id-less terminal frame and `end`, then resumes with Last-Event-ID', async () => {
    app = await startTestApp(durableModule({ durable: { enabled: true, store, outageGraceMs: 1500 } }, [Tickers]));
    const id = await start({ everyMs: 20 });
    const client = await openSse(`${app.url}/rpc/streams/${id}`);
    // The TypeScript client too: the id-less frame is a dropped connection to it, so it reconnects and resumes.
    const tsClient = new JsonRpcClient({ url: `${app.url}/rpc` }).attach<{ n: number }>(id, { reconnect: { initialDelayMs: 200, maxDelayMs: 500 } });
    const viaClient: Array<{ id: number; event: string; n?: number }> = [];
    const following = (async () => {
      for await (const e of tsClient) viaClient.push({ id: e.id, event: e.event, n: (e.data as { n?: number })?.n });
    })();
    await client.waitForEvents(10);
    await eventually(() => viaClient.length >= 10);
    await redis.kill();
    const killedAt = Date.now();
    await client.ended;
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(1400);
    expect(Date.now() - killedAt).toBeLessThan(4000);
    // The last frames: the id-less error (not an event of the stream), then `end`.
    expect(client.raw.endsWith('event: error\ndata: {"error":{"code":-32603,"message":"Stream store unavailable"}}\n\nevent: end\ndata: {}\n\n')).toBe(true);
    const last = client.events.at(-1)!;
    expect(last).toEqual({ id: undefined, event: 'error', data: '{"error":{"code":-32603,"message":"Stream store unavailable"}}' });
    const seen = client.events.slice(0, -1);
    expectConsecutive(seen);

    await redis.restart();
    // What EventSource does: reconnect with the last id it saw.
    const resumed = await eventually(async () => {
      const session = await openSse(`${app.url}/rpc/streams/${id}`, { headers: { 'last-event-id': seen.at(-1)!.id! } });
      return session.status === 200 ? session : (session.close(), undefined);
    }, 5000);
    await resumed.waitForEvents(50, 10_000);
    expect(resumed.events[0].id).toBe(String(seen.length + 1));
    expect((await fetch(`${app.url}/rpc/streams/${id}`, { method: 'DELETE' })).status).toBe(200);
    await resumed.ended;
    expectConsecutive([...seen, ...resumed.events], 'cancelled');
    await following;
    expect(viaClient.map((e) => e.id)).toEqual(viaClient.map((_, k) => k + 1));
    expect(viaClient.slice(0, -1).every((e, k) => e.event === 'chunk' && e.n === k + 1)).toBe(true);
    expect(viaClient.at(-1)!.event).toBe('cancelled');
    expect(viaClient.length).toBe(seen.length + resumed.events.length);
  }, 30_000);

  it('Redis hung (SIGSTOP, connections open): past outageGraceMs the attached client gets the id-less terminal frame and `end`', async () => {
    app = await startTestApp(durableModule({ durable: { enabled: true, store, outageGraceMs: 1500 } }, [Tickers]));
    const id = await start({ everyMs: 20 });
    const client = await openSse(`${app.url}/rpc/streams/${id}`);
    await client.waitForEvents(10);
    // Slow, not hung: a beat answered later than one heartbeat (but within 2 s) announces nothing.
    redis.pause();
    try {
      await sleep(1200);
    } finally {
      redis.resume();
    }
    const seen = client.events.length;
    await client.waitFor((s) => s.events.length > seen + 10, 5000);
    expect(app.logger.text('warn')).not.toMatch(/does not answer/);
    redis.pause();
    try {
      const pausedAt = Date.now();
      // Without the probe: keep-alives until Redis continues (no close, no error ever comes).
      await client.ended;
      // A heartbeat unanswered for max(heartbeatMs 1000, 2000) ms announces the hang (the next beat
      // goes within 1 s of the pause), then outageGraceMs (1500) runs: 3.5 to 4.5 s.
      expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(3400);
      expect(Date.now() - pausedAt).toBeLessThan(7000);
      expect(client.raw.endsWith('event: error\ndata: {"error":{"code":-32603,"message":"Stream store unavailable"}}\n\nevent: end\ndata: {}\n\n')).toBe(true);
      expectConsecutive(client.events.slice(0, -1));
      expect(app.logger.text('warn')).toMatch(/Redis for durable streams does not answer: no heartbeat reply within 2000 ms/);
    } finally {
      redis.resume();
    }
    await eventually(() => app.logger.text('log').includes('Redis for durable streams answers again'), 5000);
    expect((await fetch(`${app.url}/rpc/streams/${id}`, { method: 'DELETE' })).status).toBe(200);
  }, 30_000);

  // This one found a race (about one run in five under load): back from the outage, the subscription
  // checked that the store still held what it had delivered, and the producer's retried commits were
  // heard during that lookup; it went live without reading them and the terminal never came.
  // libs/server/src/durable/durable-subscription.spec.ts reproduces the interleaving deterministically.
  it('a producer buffers up to maxBufferedEvents through the outage, then its stream fails with -32603 once Redis is back', async () => {
    app = await startTestApp(durableModule({ durable: { enabled: true, store, maxBufferedEvents: 100 } }, [Tickers]));
    const id = await start({ everyMs: 5 });
    const client = await openSse(`${app.url}/rpc/streams/${id}`);
    await client.waitForEvents(20);
    await redis.kill();
    const before = client.events.length;
    // At up to 200 rows a second the bound is crossed within a second or so; the producer is aborted then.
    await eventually(() => app.logger.text('warn').includes('past the buffer bound'), 15_000, 'the buffer bound to be crossed');
    await redis.restart();
    // Bounded, so a stream that never ends fails here with what the client saw, not at the test's timeout.
    let ended = false;
    void client.ended.then(() => (ended = true), () => (ended = true));
    await eventually(() => ended, 20_000, 'the stream to end once Redis was back', () => {
      const s = store as unknown as { client?: { status: string }; subscriber?: { status: string }; available: boolean };
      return `${client.events.length} events, the last ${JSON.stringify(client.events.at(-1))}; store: commands ${s.client?.status}, pub/sub ${s.subscriber?.status}, available ${s.available}; logs: ${app.logger.text().slice(-1200)}`;
    });
    await client.ended;
    const events = client.events;
    expectConsecutive(events, 'error');
    expect(JSON.parse(events.at(-1)!.data)).toEqual({ error: STORE_UNAVAILABLE });
    // What was committed before the outage, plus at most the bound of buffered rows.
    expect(events.length - 1).toBeGreaterThanOrEqual(before);
    expect(events.length - 1).toBeLessThanOrEqual(before + 100 + 1);
    expect((await stored(id)).map((e) => String(e.id))).toEqual(events.map((e) => e.id));
    expect(app.logger.text('warn')).toMatch(/stayed unreachable past the buffer bound \(100 events/);
  }, 60_000);

  it('a live instance whose heartbeat lapsed in the outage is not judged dead by one whose pub/sub is not back yet', async () => {
    // B (its connections through a proxy that stays cut for a while) owns a running stream; A's
    // commands connection comes back with Redis while its pub/sub connection (through another
    // proxy) does not. A must not end B's stream: B had no chance to beat since Redis returned.
    const proxyB = await CuttableProxy.open(redis.port);
    const proxyA = await CuttableProxy.open(redis.port);
    const prefix = `${keyPrefix}pair:`;
    const storeB = new RedisStreamStore({ url: proxyB.url, keyPrefix: prefix, heartbeatMs: 300 });
    const clientA = new Redis(redis.url, { lazyConnect: true, retryStrategy: (n) => Math.min(n * 50, 200) });
    clientA.duplicate = (override) => new Redis(proxyA.port, '127.0.0.1', { retryStrategy: (n: number) => Math.min(n * 50, 200), ...override } as never);
    const storeA = new RedisStreamStore({ client: clientA, keyPrefix: prefix, heartbeatMs: 300 });
    try {
      await storeB.open();
      await storeA.open();
      const id = randomUUID();
      expect(await storeB.create({ id, method: 'tick', owner: null, createdAt: Date.now(), limits: {} })).toEqual({ ok: true });
      await proxyB.cut();
      await proxyA.cut();
      await redis.kill();
      await sleep(1500); // B's heartbeat key (900 ms) lapses
      await redis.restart();
      await eventually(() => clientA.status === 'ready', 5000, "A's commands connection");
      // What A's heartbeat timer does next (it runs every 300 ms): nothing, while its pub/sub is down.
      expect(await storeA.recoverInterrupted(new Set(), Date.now())).toEqual([]);
      await sleep(700);
      expect((await storeA.lookup(id)).found === 'stream' && (await storeA.lookup(id) as any).record.status).toBe('running');
      // Both back: B beats again, and A still leaves B's stream alone.
      await proxyA.allow();
      await proxyB.allow();
      await sleep(2000);
      expect(await storeA.recoverInterrupted(new Set(), Date.now())).toEqual([]);
      const found = await storeA.lookup(id);
      expect(found.found === 'stream' && found.record.status).toBe('running');
    } finally {
      await storeA.close();
      clientA.disconnect();
      await storeB.close();
      await proxyA.cut();
      await proxyB.cut();
    }
  }, 30_000);

  it('a batch whose commit happened but whose answer was lost is not appended twice when retried (its token)', async () => {
    await store.open(); // (opened by the apps above when the whole file runs)
    const id = randomUUID();
    expect(await store.create({ id, method: 'tick', owner: null, createdAt: Date.now(), limits: {} })).toEqual({ ok: true });
    const batch = [
      { id: 0, event: 'chunk' as const, data: '{"n":1}' },
      { id: 0, event: 'chunk' as const, data: '{"n":2}' },
    ];
    expect(await store.append(id, batch, false, Date.now())).toEqual({ ok: true, lastId: 2 });
    // The runner retries with the same array after an unavailability error: answered again, not appended.
    expect(await store.append(id, batch, false, Date.now())).toEqual({ ok: true, lastId: 2 });
    // A new batch (a new array) is appended.
    expect(await store.append(id, [{ id: 0, event: 'done', data: '{}' }], true, Date.now())).toEqual({ ok: true, lastId: 3 });
    expect((await store.read(id, 0, 10)).map((e) => [e.id, e.data])).toEqual([
      [1, '{"n":1}'],
      [2, '{"n":2}'],
      [3, '{}'],
    ]);
  });

  it('Redis restarted empty (no append-only file) under a running stream: the stream is stored again as ended with "Stream store lost events", the attached response ends, the error is logged', async () => {
    app = await startTestApp(durableModule({ durable: { enabled: true, store } }, [Tickers]));
    const id = await start({ everyMs: 20 });
    const client = await openSse(`${app.url}/rpc/streams/${id}`);
    await client.waitForEvents(10);
    await redis.kill();
    await redis.restartEmpty();
    // Without the fix: keep-alives forever (the subscription went live on a stream that no longer exists).
    await client.ended;
    expect(client.events.length).toBeGreaterThanOrEqual(10);
    expectConsecutive(client.events);
    // Two things follow Redis's return independently: the attached subscription finds the stream
    // gone (and ends the response), and the producer's next commit finds the record missing (and
    // ends the stream). Either may come first, so the second is waited for, not assumed done.
    // The producer is stopped, and says why, naming the stream.
    const vanished = new RegExp(`Durable stream ${id} \\(tick\\): its record is gone from Redis .* the stream ends with -32603 "Stream store lost events"`);
    await eventually(() => vanished.test(app.logger.text('error')), 5000, 'the error naming the stream', () => app.logger.text().slice(-1200));
    // Its record is written again to hold how it ended (just after that error is logged): a later reader learns it, not a 404…
    const all = await eventually(async () => {
      const head = await fetch(`${app.url}/rpc/streams/${id}`, { method: 'HEAD' });
      await head.body?.cancel();
      if (head.status === 404) return undefined;
      const events = await stored(id);
      return events.at(-1)?.event === 'error' ? events : undefined;
    }, 5000);
    expect(all).toEqual([{ id: 1, event: 'error', data: { error: { code: -32603, message: 'Stream store lost events' } } }]);
    // …and resuming from what the client saw is refused (beyond the stream's end), never answered with other events.
    const resume = await fetch(`${app.url}/rpc/streams/${id}`, { headers: { 'last-event-id': client.events.at(-1)!.id! } });
    expect(resume.status).toBe(400);
    await resume.body?.cancel();
    const fresh = await openSse(`${app.url}/rpc/streams/${id}`);
    await fresh.ended;
    expect(fresh.events).toEqual([{ id: '1', event: 'error', data: '{"error":{"code":-32603,"message":"Stream store lost events"}}' }]);
  }, 30_000);

  it('Redis back without events it had acknowledged: the stream ends with -32603 "Stream store lost events" at its last kept id, never renumbered', async () => {
    // What `appendfsync everysec` (or an asynchronous replica promoted) can do on a crash, made
    // deterministic: while the app cannot reach Redis (a cut proxy), its last events are removed.
    const proxy = await CuttableProxy.open(redis.port);
    const prefix = `${keyPrefix}lost:`;
    const viaProxy = new RedisStreamStore({ url: proxy.url, keyPrefix: prefix });
    const raw = new Redis(redis.url);
    try {
      app = await startTestApp(durableModule({ durable: { enabled: true, store: viaProxy } }, [Tickers]));
      const id = await start({ everyMs: 20 });
      const client = await openSse(`${app.url}/rpc/streams/${id}`);
      await client.waitForEvents(30);
      await proxy.cut();
      // Redis as it would restart from an append-only file missing its last writes: the stream's
      // entries, its last id and its metadata all end 10 events earlier.
      const meta = `${prefix}{${id}}:s`;
      const eventsKey = `${prefix}{${id}}:e`;
      const kept = Number(await raw.hget(meta, 'events')) - 10;
      const keep = await raw.xrange(eventsKey, '-', `${kept}-0`);
      await raw.del(eventsKey);
      for (const [entryId, fields] of keep) await raw.xadd(eventsKey, entryId, ...fields);
      await raw.hset(meta, 'events', kept, 'batch', '', 'batch_last', kept);
      await proxy.allow();
      await client.ended;
      // The client saw events the store no longer has: its response ends (no terminal of its own)…
      expect(client.events.length).toBeGreaterThan(kept);
      expect(client.events.every((e) => e.event === 'chunk')).toBe(true);
      // …the store ends the stream where its history ends (at the producer's next commit)…
      const all = await eventually(async () => {
        const events = await stored(id);
        return events.at(-1)?.event === 'error' ? events : undefined;
      }, 5000);
      expect(all.map((e) => e.id)).toEqual(Array.from({ length: kept + 1 }, (_, k) => k + 1));
      expect(all.at(-1)).toEqual({ id: kept + 1, event: 'error', data: { error: { code: -32603, message: 'Stream store lost events' } } });
      expect(all.slice(0, kept).map((e) => (e.data as { n: number }).n)).toEqual(Array.from({ length: kept }, (_, k) => k + 1));
      // …and resuming from what the client saw is refused, not answered with other events at those ids.
      const resume = await fetch(`${app.url}/rpc/streams/${id}`, { headers: { 'last-event-id': client.events.at(-1)!.id! } });
      expect(resume.status).toBe(400);
      expect(app.logger.text('error')).toMatch(/Redis has \d+ of the \d+ event\(s\) this instance committed/);
    } finally {
      await app?.close();
      await viaProxy.close();
      await raw.quit();
      await proxy.cut();
    }
  }, 30_000);
});
