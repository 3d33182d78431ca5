/**
 * The hard parts: the replay->live hand-off under concurrent commits, grouped commits, slow
 * readers, a crash (SIGKILL) mid-stream and the restart that follows, graceful shutdown,
 * retention, 100 concurrent streams, two app instances sharing one store, startup checks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  DurableStreamRunner,
  JsonRpcModule,
  MemoryStreamStore,
  RpcMethod,
  RpcStream,
  SqliteStreamStore,
  type DurableEventListener,
  type DurableStreamEvent,
  type PendingDurableEvent,
} from '@nest-jsonrpc/server';
import { startTestApp, TEST_PLATFORM, testAdapter, type TestApp } from '../support/rpc-test-app.js';
import { compileChildApp } from './support/compile-child.js';
import { durableModule, feeds, headerAuth, tempDir } from './support/durable-fixtures.js';
import { eventually, sleep } from '../support/async.js';
import { openSse } from './support/sse-client.js';

const rpcStart = async (t: TestApp, method: string, params?: unknown) => {
  const res = await t.rpc({ jsonrpc: '2.0', method, params, id: 1 });
  if (!res.body.result) throw new Error(JSON.stringify(res.body));
  return res.body.result.stream_id as string;
};
const eventsOf = async (url: string, id: string) => {
  const res = await fetch(`${url}/rpc/streams/${id}/events?limit=1000`);
  return ((await res.json()) as { events: Array<{ id: number; event: string; data: any }> }).events;
};

/** A SQLite store that lets a test commit events at the exact moments of the hand-off. */
class HandOffProbeStore extends SqliteStreamStore {
  afterSubscribe: (() => Promise<void> | void) | undefined;
  afterRead: (() => Promise<void> | void) | undefined;
  appendCalls: number[] = [];

  override async subscribe(id: string, listener: DurableEventListener): Promise<() => void> {
    const off = await super.subscribe(id, listener);
    const hook = this.afterSubscribe;
    this.afterSubscribe = undefined;
    await hook?.();
    return off;
  }

  override async read(id: string, after: number, limit: number): Promise<DurableStreamEvent[]> {
    const events = await super.read(id, after, limit);
    const hook = this.afterRead;
    this.afterRead = undefined;
    await hook?.();
    return events;
  }

  override append(id: string, events: PendingDurableEvent[], terminal: boolean, now: number) {
    this.appendCalls.push(events.length);
    return super.append(id, events, terminal, now);
  }
}

describe('durable streams: hand-off, grouping, slow readers, 100 streams', () => {
  const tmp = tempDir();
  const store = new HandOffProbeStore({ filename: tmp.file() });
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(durableModule({ durable: { enabled: true, store, keepAliveMs: 0 } }));
  });
  afterAll(async () => {
    await t.close();
    await store.close();
    tmp.remove();
  });

  it('an event committed between subscribe and replay is delivered exactly once', async () => {
    const id = await rpcStart(t, 'jobs.manual');
    const feed = await eventually(() => feeds.get(id));
    feed.push({ k: 1 }, { k: 2 });
    await eventually(async () => (await eventsOf(t.url, id)).length === 2);
    store.afterSubscribe = async () => {
      feed.push({ k: 3 });
      await eventually(async () => (await super_read(store, id)).length === 3);
    };
    const sse = await openSse(`${t.url}/rpc/streams/${id}`);
    await sse.waitForEvents(3);
    feed.push({ k: 4 });
    feed.end();
    await sse.ended;
    expect(sse.events.map((e) => e.id)).toEqual(['1', '2', '3', '4', '5']);
    expect(sse.events.map((e) => e.data)).toEqual(['{"k":1}', '{"k":2}', '{"k":3}', '{"k":4}', '{}']);
  });

  it('an event committed after the replay snapshot but before going live is delivered exactly once', async () => {
    const id = await rpcStart(t, 'jobs.manual');
    const feed = await eventually(() => feeds.get(id));
    feed.push({ k: 1 }, { k: 2 });
    await eventually(async () => (await eventsOf(t.url, id)).length === 2);
    // The replay read returns [1, 2]; before it hands them over, 3 is committed (and fanned out
    // while the subscriber is not live yet).
    store.afterRead = async () => {
      feed.push({ k: 3 });
      await eventually(async () => (await super_read(store, id)).length === 3);
    };
    const sse = await openSse(`${t.url}/rpc/streams/${id}?last_event_id=0`);
    await sse.waitForEvents(3);
    feed.push({ k: 4 });
    feed.end();
    await sse.ended;
    expect(sse.events.map((e) => Number(e.id))).toEqual([1, 2, 3, 4, 5]);
  });

  it('a subscriber attaching while rows pour in gets every id once, in order', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await rpcStart(t, 'jobs.count', { n: 3000 });
      await sleep(round); // attach at various points of the run
      const sse = await openSse(`${t.url}/rpc/streams/${id}`);
      await sse.ended;
      expect(sse.events).toHaveLength(3001);
      expect(sse.events.every((e, k) => e.id === String(k + 1))).toBe(true);
      expect(sse.events[3000].event).toBe('done');
    }
  });

  it('groups commits: a fast producer commits many events per transaction', async () => {
    store.appendCalls = [];
    const id = await rpcStart(t, 'jobs.count', { n: 5000 });
    await eventually(async () => (await eventsOf(t.url, id)).length > 0 && (await fetch(`${t.url}/rpc/streams/${id}`, { headers: { 'last-event-id': '5001' } })).status === 204);
    expect(store.appendCalls.reduce((a, b) => a + b, 0)).toBe(5001);
    expect(store.appendCalls.length).toBeLessThanOrEqual(15);
    expect(Math.max(...store.appendCalls)).toBe(512);
  });

  it('a reader that stops reading costs bounded memory and later gets everything, in order', async () => {
    const id = await rpcStart(t, 'jobs.manual');
    const feed = await eventually(() => feeds.get(id));
    const url = new URL(`${t.url}/rpc/streams/${id}`);
    const res = await new Promise<IncomingMessage>((resolve, reject) => httpRequest(url, resolve).on('error', reject).end());
    res.pause();
    const pad = 'x'.repeat(2000);
    const total = 6000; // ~12 MB, far more than the socket buffers hold
    for (let k = 1; k <= total; k++) feed.push({ k, pad });
    feed.end();
    await eventually(async () => (await fetch(`${t.url}/rpc/streams/${id}`, { headers: { 'last-event-id': String(total + 1) } })).status === 204, 10000);
    await sleep(50);
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.resume();
    await new Promise((resolve) => res.on('end', resolve));
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toHaveLength(total + 1);
    expect(ids.every((v, k) => v === k + 1)).toBe(true);
    expect(text.endsWith('event: done\ndata: {}\n\nevent: end\ndata: {}\n\n')).toBe(true);
  });

  it('runs 100 durable streams concurrently, each complete and in order', async () => {
    const ids = await Promise.all(Array.from({ length: 100 }, () => rpcStart(t, 'jobs.count', { n: 40, delayMs: 1 })));
    expect(new Set(ids).size).toBe(100);
    const sessions = await Promise.all(ids.map((id) => openSse(`${t.url}/rpc/streams/${id}`)));
    await Promise.all(sessions.map((s) => s.ended));
    for (const s of sessions) {
      expect(s.events.map((e) => Number(e.id))).toEqual(Array.from({ length: 41 }, (_, k) => k + 1));
      expect(s.events.filter((e) => e.event === 'progress')).toHaveLength(4);
      expect(s.events[40].event).toBe('done');
    }
    expect(t.app.get(DurableStreamRunner).runningHere).toBe(0);
  });
});

/** Reads straight from the SQLite store (bypassing the probe's hook). */
function super_read(store: HandOffProbeStore, id: string) {
  return SqliteStreamStore.prototype.read.call(store, id, 0, 1000);
}

describe('durable streams: crash and restart on the same SQLite file', () => {
  const tmp = tempDir();
  let child: ChildProcess | undefined;
  let t: TestApp | undefined;
  afterAll(async () => {
    child?.kill('SIGKILL');
    await t?.close();
    tmp.remove();
  });

  it('replays everything committed before a SIGKILL, then the interrupted terminal event', async () => {
    const entry = compileChildApp(tmp.file('child'));
    const file = tmp.file('crash.sqlite');
    child = spawn(process.execPath, [entry, file], { env: { ...process.env, RPC_TEST_PLATFORM: TEST_PLATFORM }, stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (chunk) => {
        out += chunk;
        const m = /LISTENING (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child!.once('exit', (code) => reject(new Error(`child exited with ${code}`)));
    });
    const childUrl = `http://127.0.0.1:${port}`;
    const started = await fetch(`${childUrl}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'jobs.tick', id: 1 }),
    });
    const { stream_id: id } = ((await started.json()) as any).result;
    const live = await openSse(`${childUrl}/rpc/streams/${id}`);
    await live.waitForEvents(5);
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await live.ended;
    // Dead, so its lock on the file is gone (the restart below would otherwise be refused).
    await exited;
    const seen = live.events.map((e) => [e.id, e.data]);
    expect(seen.length).toBeGreaterThanOrEqual(5);

    // Restart: a new app on the same file recovers the stream as interrupted.
    @Module({ imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new SqliteStreamStore({ filename: file }) } })] })
    class RestartedModule {}
    t = await startTestApp(RestartedModule);
    expect(t.logger.text('warn')).toContain('Marked 1 durable stream(s) left running by a previous process as interrupted');
    const replay = await openSse(`${t.url}/rpc/streams/${id}`);
    await replay.ended;
    const n = replay.events.length;
    expect(replay.events.slice(0, seen.length).map((e) => [e.id, e.data])).toEqual(seen);
    expect(replay.events.map((e) => Number(e.id))).toEqual(Array.from({ length: n }, (_, k) => k + 1));
    expect(replay.events[n - 1]).toEqual({ id: String(n), event: 'error', data: '{"error":{"code":-32603,"message":"Stream interrupted"}}' });
    // The client that saw `seen` resumes from its last id: the rest, then the terminal event.
    const resumed = await openSse(`${t.url}/rpc/streams/${id}`, { headers: { 'last-event-id': seen.at(-1)![0]! } });
    await resumed.ended;
    expect(resumed.events.map((e) => Number(e.id))).toEqual(Array.from({ length: n - seen.length }, (_, k) => seen.length + k + 1));
    const list = await fetch(`${t.url}/rpc/streams/${id}/events?after=${n - 1}`);
    expect(await list.json()).toEqual({ events: [{ id: n, event: 'error', data: { error: { code: -32603, message: 'Stream interrupted' } } }] });
  }, 60000);
});

describe('durable streams: graceful shutdown, retention', () => {
  const tmp = tempDir();
  afterAll(() => tmp.remove());

  it('a shutdown ends running streams with the interrupted error and detaches subscribers; a restart replays them', async () => {
    const file = tmp.file('shutdown.sqlite');
    // A store handed in is not closed by the module: it is closed here, as the process exiting would.
    const firstStore = new SqliteStreamStore({ filename: file });
    const first = await startTestApp(durableModule({ durable: { enabled: true, store: firstStore } }));
    const id = await rpcStart(first, 'jobs.manual');
    const feed = await eventually(() => feeds.get(id));
    const sse = await openSse(`${first.url}/rpc/streams/${id}`);
    feed.push({ a: 1 }, { a: 2 });
    await sse.waitForEvents(2);
    await first.close();
    await sse.ended;
    expect(feed.aborted).toBe(true);
    expect(sse.events.map((e) => e.event)).toEqual(['chunk', 'chunk', 'error']);
    await firstStore.close();
    const second = await startTestApp(durableModule({ durable: { enabled: true, store: new SqliteStreamStore({ filename: file }) } }));
    try {
      expect(second.logger.text('warn')).not.toContain('interrupted');
      const res = await fetch(`${second.url}/rpc/streams/${id}`, { headers: { 'last-event-id': '3' } });
      expect(res.status).toBe(204);
      expect(await eventsOf(second.url, id)).toEqual([
        { id: 1, event: 'chunk', data: { a: 1 } },
        { id: 2, event: 'chunk', data: { a: 2 } },
        { id: 3, event: 'error', data: { error: { code: -32603, message: 'Stream interrupted' } } },
      ]);
    } finally {
      await second.close();
    }
  });

  it('after retention a finished stream answers 410 (404 to others), leaves the list, and the sweep deletes its events', async () => {
    // Tombstones are forgotten one retention period after expiry (0.3 s here): too short for the
    // checks below on a loaded machine, so the store keeps them until the test lets it forget.
    class HeldTombstones extends SqliteStreamStore {
      forget = false;
      override sweep(expiredBefore: number, forgetBefore: number): Promise<number> {
        return super.sweep(expiredBefore, this.forget ? forgetBefore : 0);
      }
    }
    const store = new HeldTombstones({ filename: tmp.file('retention.sqlite') });
    const t = await startTestApp(durableModule({ durable: { enabled: true, store, retention: 0.3 } }), headerAuth);
    try {
      const res = await t.rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: 2 }, id: 1 }, { headers: { 'x-user': 'gina' } });
      const id = res.body.result.stream_id;
      const running = await rpcStart(t, 'jobs.manual');
      await eventually(async () => (await fetch(`${t.url}/rpc/streams/${id}/events`, { headers: { 'x-user': 'gina' } }).then((r) => r.json()) as any).events.length === 3);
      await sleep(400);
      const gone = { error: { code: -32002, message: 'Stream expired: past retention' } };
      const attach = await fetch(`${t.url}/rpc/streams/${id}`, { headers: { 'x-user': 'gina' } });
      expect([attach.status, await attach.json()]).toEqual([410, gone]);
      await eventually(async () => (await store.lookup(id)).found === 'expired', 3000, 'the sweep');
      expect(await store.read(id, 0, 10)).toEqual([]);
      for (const path of [`/rpc/streams/${id}`, `/rpc/streams/${id}/events`]) {
        const r = await fetch(`${t.url}${path}`, { headers: { 'x-user': 'gina' } });
        expect([path, r.status, await r.json()]).toEqual([path, 410, gone]);
      }
      const del = await fetch(`${t.url}/rpc/streams/${id}`, { method: 'DELETE', headers: { 'x-user': 'gina' } });
      expect(del.status).toBe(410);
      const stranger = await fetch(`${t.url}/rpc/streams/${id}`, { headers: { 'x-user': 'henry' } });
      expect(stranger.status).toBe(404);
      const list = await fetch(`${t.url}/rpc/streams`, { headers: { 'x-user': 'gina' } });
      expect(await list.json()).toEqual({ streams: [] });
      // Running streams are never swept.
      expect((await store.lookup(running)).found).toBe('stream');
      // One more retention period later the tombstone goes too, and the id is simply unknown.
      store.forget = true;
      await eventually(async () => (await store.lookup(id)).found === 'none', 3000, 'the tombstone forgotten');
      const forgotten = await fetch(`${t.url}/rpc/streams/${id}`, { headers: { 'x-user': 'gina' } });
      expect([forgotten.status, await forgotten.json()]).toEqual([404, { error: { code: -32002, message: 'Stream not found' } }]);
      feeds.get(running)!.end();
    } finally {
      await t.close();
      await store.close();
    }
  });
});

describe('durable streams: two app instances sharing one store object', () => {
  it('a stream started on A is attached, resumed and cancelled through B', async () => {
    const store = new MemoryStreamStore();
    const a = await startTestApp(durableModule({ durable: { enabled: true, store, maxRunning: { total: 2 } } }));
    const b = await startTestApp(durableModule({ durable: { enabled: true, store, maxRunning: { total: 2 } } }));
    try {
      const id = await rpcStart(a, 'jobs.manual');
      const feed = await eventually(() => feeds.get(id));
      feed.push({ x: 1 }, { x: 2 }, { x: 3 });
      await eventually(async () => (await eventsOf(b.url, id)).length === 3);
      const viaB = await openSse(`${b.url}/rpc/streams/${id}`, { headers: { 'last-event-id': '1' } });
      await viaB.waitForEvents(2);
      // The total limit counts streams of every instance.
      await rpcStart(b, 'jobs.manual');
      const over = await b.rpc({ jsonrpc: '2.0', method: 'jobs.manual', id: 3 });
      expect(over.body.error).toEqual({ code: -32003, message: 'Too many running durable streams: the limit is 2', data: { limit: 2 } });
      const cancelled = await fetch(`${b.url}/rpc/streams/${id}`, { method: 'DELETE' });
      expect(await cancelled.json()).toEqual({ stream_id: id, status: 'cancelled' });
      await viaB.ended;
      expect(viaB.events.map((e) => [e.id, e.event])).toEqual([['2', 'chunk'], ['3', 'chunk'], ['4', 'cancelled']]);
      await eventually(() => feed.aborted && a.app.get(DurableStreamRunner).runningHere === 0 && b.app.get(DurableStreamRunner).runningHere === 1, 2000, 'A to stop the producer');
    } finally {
      for (const f of feeds.values()) f.end();
      await b.close();
      await a.close();
    }
  });
});

describe('durable streams: configuration', () => {
  @Injectable()
  class Reports {
    @RpcMethod('reports.build')
    @RpcStream({ durable: true })
    async *build() {
      yield 1;
    }
  }

  it('a durable method while durable streams are disabled fails startup, naming it', async () => {
    @Module({ imports: [JsonRpcModule.forRoot({})], providers: [Reports] })
    class Disabled {}
    await expect(NestFactory.create(Disabled, testAdapter(), { logger: false, abortOnError: false }).then((app) => app.init())).rejects.toThrow(
      'Reports.build ("reports.build") is a durable stream (@RpcStream({ durable: true })) but durable streams are disabled: set durable: { enabled: true } in JsonRpcModule options',
    );
  });

  it('rejects invalid durable options, all at once', async () => {
    @Module({
      imports: [
        JsonRpcModule.forRoot({
          durable: {
            enabled: 'yes',
            path: 'streams',
            retention: -1,
            keepAliveMs: 1.5,
            maxRunning: { total: 0, each: 1 },
            store: {},
            storeTimeoutMs: 0,
            outageGraceMs: -1,
            maxBufferedEvents: 0,
            maxBufferedBytes: 1.5,
          } as any,
        }),
      ],
    })
    class Invalid {}
    const failure = NestFactory.create(Invalid, testAdapter(), { logger: false, abortOnError: false }).then((app) => app.init());
    await expect(failure).rejects.toThrow(/"durable.enabled" must be a boolean/);
    await failure.catch((error: Error) => {
      for (const part of [
        '"durable.path" must be',
        '"durable.store" must be a StreamStore',
        '"durable.retention" must be a positive number',
        '"durable.keepAliveMs" must be an integer',
        '"durable.maxRunning.total" must be an integer >= 1',
        'unknown option "durable.maxRunning.each"',
        '"durable.storeTimeoutMs" must be an integer >= 1, got 0',
        '"durable.outageGraceMs" must be an integer >= 1, got -1',
        '"durable.maxBufferedEvents" must be an integer >= 1, got 0',
        '"durable.maxBufferedBytes" must be an integer >= 1, got 1.5',
      ]) {
        expect(error.message).toContain(part);
      }
    });
  });

  it('rejects a keepAliveMs longer than a Node timer can wait (it would fire every 1 ms)', async () => {
    @Module({ imports: [JsonRpcModule.forRoot({ durable: { enabled: true, store: new MemoryStreamStore(), keepAliveMs: 2 ** 31 } })] })
    class TooLong {}
    const failure = NestFactory.create(TooLong, testAdapter(), { logger: false, abortOnError: false }).then((app) => app.init());
    await expect(failure).rejects.toThrow('"durable.keepAliveMs" must be at most 2147483647 (about 24.8 days), got 2147483648');
  });

  it('serves the routes under a custom path', async () => {
    const tmp = tempDir();
    const t = await startTestApp(durableModule({ durable: { enabled: true, path: '/jobs', store: new MemoryStreamStore() } }));
    try {
      const res = await t.rpc({ jsonrpc: '2.0', method: 'jobs.count', params: { n: 1 }, id: 1 });
      expect(res.body.result.sse_url).toBe(`/jobs/${res.body.result.stream_id}`);
      const sse = await openSse(`${t.url}${res.body.result.sse_url}`);
      await sse.ended;
      expect(sse.events.map((e) => e.event)).toEqual(['chunk', 'done']);
    } finally {
      await t.close();
      tmp.remove();
    }
  });
});
